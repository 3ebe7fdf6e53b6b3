// The `collab` case of `make bench` (scripts/bench-http.ts): live co-editing. COLLAB_PAGES pages, each open in
// COLLAB_EDITORS_PER_PAGE editors that each type COLLAB_CHARS_PER_SECOND characters a second for BENCH_COLLAB_SECONDS
// (default 30), on two sides, one after the other, each with editors' processes of its own:
//   - bare: a bare Hocuspocus server (scripts/bench-collab-bare.ts: @hocuspocus/server's Server, no persistence, no
//     authentication) in a process of its own;
//   - service: the service's /live (src/modules/live), the benchmark's server process, with real authentication:
//     the team (`collab`), its notes and pages are made through the API by the benchmark's user `bench`, who adds 40
//     of the benchmark's seeded members (users made by SQL as createUser makes them) through the API; each of them
//     gets a `write` token, inserted as src/modules/auth/tokens.ts stores one (the admin command line takes a process
//     per token); each editor connects with its user's token as the provider's token, to the document named
//     `<team>/<note>/<page id>` as the API presents the note (team.name, name). A group of 4 users edits 10 pages
//     (each editor one socket), so a user holds 10 sockets and a page 4: under the service's limits (20 per user, 50
//     per page), which the benchmark leaves at their defaults.
// The editors (headless Yjs clients: scripts/lib/bench-collab-editors.ts says how they type and time) run in
// BENCH_COLLAB_PROCESSES child processes (default 1), all editors of a page in the same one. Before the editors
// connect, one document is opened and closed (the service loads its live code at the first connection), and the
// server's resident memory is read; again once every editor is synced, and after the typing. Reported:
//   - an update from one editor to the others: per typed character and per other editor of its page, arrival minus
//     send; p50 and p99 (a delivery that never came counts as infinitely late): goal p99 < COLLAB_P99_GOAL_MS on
//     the service;
//   - updates per second: the typed characters that reached every other editor of their page by the end of the
//     typing window, per second of it, on each side (the load is the same fixed rate on both: a server that keeps up
//     delivers all of it): service / bare >= COLLAB_UPDATES_RATIO_GOAL; with each server's CPU time per update;
//   - the resident memory per open document: (RSS with the documents open - RSS before) / COLLAB_PAGES, its sockets
//     included, on both sides; no goal;
//   - page versions the service stored while the pages were edited (SQL: page_versions of the case's pages), per
//     page and per minute of editing (from the first edit to the save that follows the last keystroke, the live
//     server's save pause later): goal <= COLLAB_VERSIONS_GOAL (it saves after a 2 s pause and at least every 10 s
//     while typing goes on).
// It fails (a missed goal) when an editor is refused, the server closes a connection, a delivery never comes, or the
// editors of a page end with different documents. A run takes about 2 x (BENCH_COLLAB_SECONDS + 30 s); shorter typing
// raises the versions' rate (the save after the last keystroke weighs more). BENCH_COLLAB_PAGES tries fewer pages,
// BENCH_COLLAB_CARETS=0 leaves the carets out (half the messages).
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { EditorSpec, EditorsReply, EditorsRequest, TypedReply } from './lib/bench-collab-editors.ts';
import { envNumber, insertTokens } from './lib/bench-seed.ts';

/** BENCH_COLLAB_PAGES: fewer (or more, up to 490) pages to try the case on a small machine; the goals are the issue's for 100. */
export const COLLAB_PAGES = Math.round(envNumber('BENCH_COLLAB_PAGES', 100));
export const COLLAB_EDITORS_PER_PAGE = 4;
export const COLLAB_CHARS_PER_SECOND = 5;
/** An update from one editor reaches the others of its page within this, at p99 (milliseconds). */
export const COLLAB_P99_GOAL_MS = 100;
/** The service's updates per second ÷ the bare server's. */
export const COLLAB_UPDATES_RATIO_GOAL = 0.5;
/** Page versions per page per minute of editing. */
export const COLLAB_VERSIONS_GOAL = 6;

/** Pages a group of COLLAB_EDITORS_PER_PAGE users edits together (each of them holds one socket per page). */
const PAGES_PER_GROUP = 10;
/** The pages are spread over this many notes of the team. */
const NOTES = 4;
const TEAM = 'collab';
/** The service's save pause (LIVE_SAVE_PAUSE_MS, its default): the last version comes this long after the last keystroke. */
const SAVE_PAUSE_MS = 2_000;
/** How long, after the typing, every character has to reach every peer. */
const GRACE_MS = 5_000;

const SECONDS = envNumber('BENCH_COLLAB_SECONDS', 30);
const PROCESSES = Math.round(envNumber('BENCH_COLLAB_PROCESSES', 1));
/** BENCH_COLLAB_CARETS=0: the editors move no caret in the awareness state (only the document's updates go). */
const CARETS = process.env.BENCH_COLLAB_CARETS !== '0';

export type CollabOptions = {
  /** The service, its process id (CPU time and resident memory from /proc), and its database for the seeding SQL. */
  baseUrl: string;
  pid: number;
  sql: pg.ClientConfig;
  /** A token of a user who may make teams and notes (the benchmark's `bench`). */
  token: string;
  report(label: string, text: string, verdict: 'ok' | 'FAIL' | 'report'): void;
};

/** Monotonic milliseconds. */
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssMegabytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system) the process has used so far, milliseconds (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

// ------------------------------------------------------------------------------------------------ seeding
async function api(baseUrl: string, token: string, method: string, requestPath: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(baseUrl + requestPath, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`collab seeding: ${method} ${requestPath}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const writeTokens = (client: pg.Client, users: number[]) => insertTokens(client, users, 'write', 'bench collab editor');

type Seeded = { editors: EditorSpec[]; warmUp: EditorSpec; pageIds: number[] };

/**
 * The team `collab` made by the token's user through the API, with the users it needs (the benchmark's seeded
 * members) added through the API, NOTES notes of COLLAB_PAGES / NOTES pages each and one more page to warm up with.
 */
async function seedCollab(options: CollabOptions): Promise<Seeded> {
  const call = (method: string, requestPath: string, form: Record<string, string>) => api(options.baseUrl, options.token, method, requestPath, form);
  const groups = Math.ceil(COLLAB_PAGES / PAGES_PER_GROUP);
  const client = new pg.Client(options.sql);
  await client.connect();
  let users: { id: number; username: string }[];
  let tokens: string[];
  try {
    users = (await client.query<{ id: number; username: string }>(
      "select id, username from users where username like 'member%' order by username limit $1", [groups * COLLAB_EDITORS_PER_PAGE])).rows;
    if (users.length < groups * COLLAB_EDITORS_PER_PAGE) throw new Error(`the collab case needs ${groups * COLLAB_EDITORS_PER_PAGE} users, the benchmark seeded ${users.length}`);
    tokens = await writeTokens(client, users.map((user) => user.id));
  } finally {
    await client.end();
  }
  await call('POST', '/api/v1/teams', { 'team[name]': TEAM });
  for (const user of users) await call('POST', `/api/v1/teams/${TEAM}/users`, { username: user.username });
  const notes: string[] = [];
  for (let note = 1; note <= NOTES; note += 1) {
    const made = await call('POST', '/api/v1/notes', { 'note[title]': `Live ${note}`, 'note[team]': TEAM, 'note[slug]': `live${note}` }) as { name: string; team: { name: string } };
    notes.push(`${made.team.name}/${made.name}`);
  }
  const makePage = async (note: string, title: string) =>
    (await call('POST', `/api/v1/${note}/pages`, { 'page[title]': title, 'page[content]': `<p>${title}, edited live.</p>` })).id as number;
  const editors: EditorSpec[] = [];
  const pageIds: number[] = [];
  for (let page = 0; page < COLLAB_PAGES; page += 1) {
    const note = notes[Math.floor((page * NOTES) / COLLAB_PAGES)]!;
    const id = await makePage(note, `Page ${page + 1}`);
    pageIds.push(id);
    const group = Math.floor(page / PAGES_PER_GROUP);
    for (let editor = 0; editor < COLLAB_EDITORS_PER_PAGE; editor += 1) {
      editors.push({ page, documentName: `${note}/${id}`, token: tokens[group * COLLAB_EDITORS_PER_PAGE + editor]! });
    }
  }
  const warmUpId = await makePage(notes[0]!, 'Warm-up');
  return { editors, warmUp: { page: COLLAB_PAGES, documentName: `${notes[0]}/${warmUpId}`, token: tokens[0]! }, pageIds };
}

// ------------------------------------------------------------------------------------------------ processes
/** A child process driven over IPC, one request at a time. */
function child(script: string) {
  const process_ = fork(path.join(import.meta.dirname, script), [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => process_.once('exit', () => resolve()));
  return {
    process: process_,
    /** The next message it sends. */
    next<Reply>(timeoutMs: number, what: string): Promise<Reply> {
      return new Promise<Reply>((resolve, reject) => {
        const onExit = (code: number | null) => {
          clearTimeout(timer);
          reject(new Error(`${script} exited (code ${code}) before answering ${what}`));
        };
        const timer = setTimeout(() => {
          process_.off('exit', onExit);
          reject(new Error(`${script} did not answer ${what} within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        process_.once('exit', onExit);
        process_.once('message', (reply: Reply) => {
          clearTimeout(timer);
          process_.off('exit', onExit);
          resolve(reply);
        });
      });
    },
    async stop(): Promise<void> {
      if (process_.exitCode !== null || process_.signalCode !== null) return;
      process_.kill('SIGTERM');
      const timer = setTimeout(() => process_.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function startEditors() {
  const editors = child('lib/bench-collab-editors.ts');
  const ask = async <Type extends EditorsReply['type']>(request: EditorsRequest, expected: Type, timeoutMs: number) => {
    const reply = editors.next<EditorsReply>(timeoutMs, `"${request.type}"`);
    editors.process.send(request);
    const answer = await reply;
    if (answer.type === 'error') throw new Error(`the collab editors: ${answer.message}`);
    if (answer.type !== expected) throw new Error(`the collab editors answered ${answer.type} to ${request.type}`);
    return answer as Extract<EditorsReply, { type: Type }>;
  };
  return {
    pid: editors.process.pid!,
    open: (url: string, specs: EditorSpec[]) => ask({ type: 'open', url, editors: specs }, 'opened', 240_000),
    type: () => ask({ type: 'type', seconds: SECONDS, charsPerSecond: COLLAB_CHARS_PER_SECOND, graceMs: GRACE_MS, carets: CARETS }, 'typed', (SECONDS + 60) * 1000 + GRACE_MS),
    close: () => ask({ type: 'close' }, 'closed', 30_000),
    stop: () => editors.stop(),
  };
}

async function startBare(): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  const bare = child('bench-collab-bare.ts');
  try {
    const { port } = await bare.next<{ port: number }>(60_000, 'with its port');
    return { pid: bare.process.pid!, url: `ws://127.0.0.1:${port}`, stop: () => bare.stop() };
  } catch (error) {
    await bare.stop();
    throw error;
  }
}

// ------------------------------------------------------------------------------------------------ a side
type SideFigures = {
  refused: string[];
  opened: number;
  typed: TypedReply[];
  /** Sorted latencies, with a delivery that never came as Infinity. */
  latencies: Float64Array;
  /** p99 of the deliveries of the characters typed in each second of the window. */
  p99BySecond: number[];
  missing: number;
  seconds: number;
  /** Milliseconds from the typing request to the end of the typing window (the lines added, then the typing). */
  editingMs: number;
  rss: { before: number; open: number; typed: number };
  serverCpuMs: number;
  /** The machine's load average (1 minute) as the typing ended: others' work on the same cores shows here. */
  load: number;
};

/**
 * One side: the warm-up document opened and closed, then every editor connected (pages spread over the editors'
 * processes), typing, closing. `between` runs after the typing, before the editors close (the service's versions).
 */
async function runSide(url: string, pid: number, seeded: Seeded, between?: () => Promise<void>): Promise<SideFigures> {
  const processes = Array.from({ length: PROCESSES }, startEditors);
  try {
    const warm = await processes[0]!.open(url, [seeded.warmUp]);
    if (warm.editors !== 1) throw new Error(`the warm-up editor could not connect: ${warm.refused.join('; ')}`);
    await processes[0]!.close();
    await sleep(2_000);
    const before = rssMegabytes(pid);
    const opened = await Promise.all(processes.map((editors, index) => editors.open(url, seeded.editors.filter((editor) => editor.page % PROCESSES === index))));
    await sleep(2_000);
    const open = rssMegabytes(pid);
    const cpu = cpuMs(pid);
    const typed = await Promise.all(processes.map((editors) => editors.type()));
    const serverCpuMs = cpuMs(pid) - cpu;
    const rssTyped = rssMegabytes(pid);
    const load = os.loadavg()[0]!;
    await between?.();
    await Promise.all(processes.map((editors) => editors.close()));
    const missing = typed.reduce((sum, part) => sum + part.expected - part.arrived, 0);
    const latencies = new Float64Array(typed.reduce((sum, part) => sum + part.latencies.length, 0) + missing);
    let offset = 0;
    for (const part of typed) {
      latencies.set(part.latencies, offset);
      offset += part.latencies.length;
    }
    latencies.fill(Number.POSITIVE_INFINITY, offset);
    const bySecond: number[][] = [];
    for (const part of typed) {
      part.typedAt.forEach((at, index) => (bySecond[Math.floor(at / 1000)] ??= []).push(part.latencies[index]!));
    }
    latencies.sort();
    return {
      refused: opened.flatMap((part) => part.refused),
      opened: opened.reduce((sum, part) => sum + part.editors, 0),
      typed, latencies, missing,
      p99BySecond: [...bySecond].map((second) => percentile(Float64Array.from(second ?? []).sort(), 0.99)),
      seconds: Math.max(...typed.map((part) => part.seconds)),
      editingMs: Math.max(...typed.map((part) => part.preparedMs + part.seconds * 1000)),
      rss: { before, open, typed: rssTyped },
      serverCpuMs, load,
    };
  } finally {
    await Promise.all(processes.map((editors) => editors.stop()));
  }
}

// ------------------------------------------------------------------------------------------------ the case
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 1 : 0)} ms` : 'never');

export async function benchCollab(options: CollabOptions): Promise<void> {
  const seeded = await seedCollab(options);
  const bare = await startBare();
  let bareSide: SideFigures;
  try {
    bareSide = await runSide(bare.url, bare.pid, seeded);
  } finally {
    await bare.stop();
  }
  // the service's versions: counted from before the typing until they stop coming after it
  const client = new pg.Client(options.sql);
  await client.connect();
  let versions = { versions: 0, pages: 0, spread: '' };
  let serviceSide: SideFigures;
  try {
    const lastBefore = Number((await client.query<{ id: string }>('select coalesce(max(id), 0)::text as id from page_versions')).rows[0]!.id);
    const count = async () => {
      const rows = (await client.query<{ n: number }>(
        'select count(*)::int as n from page_versions where page_id = any($1::int[]) and id > $2 group by page_id', [seeded.pageIds, lastBefore])).rows;
      const spread = new Map<number, number>();
      for (const row of rows) spread.set(row.n, (spread.get(row.n) ?? 0) + 1);
      return {
        versions: rows.reduce((sum, row) => sum + row.n, 0), pages: rows.length,
        spread: [...spread].sort(([a], [b]) => a - b).map(([n, pages]) => `${pages} with ${n}`).join(', '),
      };
    };
    // until every page has a version and none came for 3 s (30 s at most): the save after the pause, on a server
    // that may still be catching up
    const settle = async () => {
      let last = -1;
      for (let quiet = 0, deadline = now() + 30_000; now() < deadline; await sleep(1_000)) {
        versions = await count();
        quiet = versions.versions === last ? quiet + 1 : 0;
        last = versions.versions;
        if (quiet >= 3 && versions.pages === COLLAB_PAGES) break;
      }
    };
    // the editors stay on their pages until then; closing saves what a last save had not
    serviceSide = await runSide(`${options.baseUrl.replace(/^http/, 'ws')}/live`, options.pid, seeded, settle);
    await settle();
  } finally {
    await client.end();
  }

  const trouble = (side: SideFigures) => {
    const closed = side.typed.flatMap((part) => part.closed);
    const diverged = side.typed.reduce((sum, part) => sum + part.diverged, 0);
    const foreign = side.typed.reduce((sum, part) => sum + part.foreign, 0);
    const skipped = side.typed.reduce((sum, part) => sum + part.skipped, 0);
    const notes = [
      side.refused.length ? `refused: ${side.refused.join('; ')}` : '',
      side.missing ? `${side.missing} deliveries never came` : '',
      closed.length ? `${closed.length} connections closed by the server (${[...new Set(closed.map((line) => line.replace(/^[^:]*: /, '')))].join('; ')})` : '',
      diverged ? `${diverged} pages ended different in their editors` : '',
      foreign ? `${foreign} changes made by the server (Yjs clocks)` : '',
      skipped ? `${skipped} keystrokes the editors' process was too late for` : '',
    ].filter(Boolean);
    return { failed: side.refused.length + side.missing + closed.length + diverged > 0 || side.opened !== seeded.editors.length, notes };
  };
  const sent = (side: SideFigures) => side.typed.reduce((sum, part) => sum + part.sent, 0);
  const delivered = (side: SideFigures) => side.typed.reduce((sum, part) => sum + part.deliveredInWindow, 0) / side.seconds;
  const editorsCpu = (side: SideFigures) => (100 * side.typed.reduce((sum, part) => sum + part.cpuMs / part.wallMs, 0)) / PROCESSES;
  const service = trouble(serviceSide);
  const baseline = trouble(bareSide);
  const load = `${COLLAB_PAGES} pages x ${COLLAB_EDITORS_PER_PAGE} editors, ${COLLAB_CHARS_PER_SECOND} chars/s each, ${SECONDS} s${CARETS ? ', carets' : ''}`;

  const p99 = percentile(serviceSide.latencies, 0.99);
  /** The typing window second by second: how many seconds' p99 missed the goal, and the worst. */
  const secondsOverGoal = (side: SideFigures) => {
    const seconds = side.p99BySecond.filter((value) => !Number.isNaN(value));
    return `p99 over the goal in ${seconds.filter((value) => value >= COLLAB_P99_GOAL_MS).length} of ${seconds.length} seconds (worst ${ms(Math.max(...seconds))})`;
  };
  options.report('collab: update to the other editors',
    `service p50 ${ms(percentile(serviceSide.latencies, 0.5)).padStart(7)}  p99 ${ms(p99).padStart(7)}  max ${ms(percentile(serviceSide.latencies, 1))}  ` +
      `bare p50 ${ms(percentile(bareSide.latencies, 0.5))}  p99 ${ms(percentile(bareSide.latencies, 0.99))}  goal p99 < ${COLLAB_P99_GOAL_MS} ms  ` +
      `(${load}; ${serviceSide.latencies.length} deliveries; ${secondsOverGoal(serviceSide)} on the service, ${secondsOverGoal(bareSide)} bare${service.notes.length ? `; service: ${service.notes.join('; ')}` : ''}${baseline.notes.length ? `; bare: ${baseline.notes.join('; ')}` : ''})`,
    p99 < COLLAB_P99_GOAL_MS && !service.failed && !baseline.failed ? 'ok' : 'FAIL');
  const ratio = delivered(serviceSide) / delivered(bareSide);
  // per update the server passed on (a server that fell behind did not pass on all it was sent)
  const cpuPerUpdate = (side: SideFigures) =>
    ms(side.serverCpuMs / Math.max(1, side.typed.reduce((sum, part) => sum + part.arrived, 0) / (COLLAB_EDITORS_PER_PAGE - 1)));
  options.report('collab: updates/s, service / bare',
    `service ${delivered(serviceSide).toFixed(0).padStart(6)}/s  bare ${delivered(bareSide).toFixed(0).padStart(6)}/s  ratio ${ratio.toFixed(2)}  goal >= ${COLLAB_UPDATES_RATIO_GOAL}  ` +
      `(typed ${(sent(serviceSide) / serviceSide.seconds).toFixed(0)}/s and ${(sent(bareSide) / bareSide.seconds).toFixed(0)}/s; server CPU per update: service ${cpuPerUpdate(serviceSide)}, bare ${cpuPerUpdate(bareSide)}; ` +
      `editors' process ${editorsCpu(serviceSide).toFixed(0)} % and ${editorsCpu(bareSide).toFixed(0)} % of a core; ` +
      `load average ${serviceSide.load.toFixed(1)} and ${bareSide.load.toFixed(1)} on ${os.availableParallelism()} cores)`,
    ratio >= COLLAB_UPDATES_RATIO_GOAL && !service.failed && !baseline.failed ? 'ok' : 'FAIL');
  const perDocument = (side: SideFigures, at: number) => `${(((at - side.rss.before) * 1024) / COLLAB_PAGES).toFixed(0)} KB`;
  options.report('collab: RSS per open document',
    `service ${perDocument(serviceSide, serviceSide.rss.open)} open, ${perDocument(serviceSide, serviceSide.rss.typed)} after typing  ` +
      `bare ${perDocument(bareSide, bareSide.rss.open)} open, ${perDocument(bareSide, bareSide.rss.typed)} after typing  ` +
      `(RSS minus before, / ${COLLAB_PAGES} documents of ${COLLAB_EDITORS_PER_PAGE} sockets each; service ${serviceSide.rss.before.toFixed(0)} -> ${serviceSide.rss.open.toFixed(0)} -> ${serviceSide.rss.typed.toFixed(0)} MB, ` +
      `bare ${bareSide.rss.before.toFixed(0)} -> ${bareSide.rss.open.toFixed(0)} -> ${bareSide.rss.typed.toFixed(0)} MB; no goal)`,
    'report');
  const minutes = (serviceSide.editingMs + SAVE_PAUSE_MS) / 60_000;
  const rate = versions.versions / COLLAB_PAGES / minutes;
  options.report('collab: versions per page per minute',
    `${rate.toFixed(1).padStart(6)}  goal <= ${COLLAB_VERSIONS_GOAL}  (${versions.versions} versions of ${versions.pages} pages: ${versions.spread || 'none'}; ` +
      `over ${(minutes * 60).toFixed(1)} s, the editing and the ${SAVE_PAUSE_MS / 1000} s save pause after it)`,
    rate <= COLLAB_VERSIONS_GOAL && versions.pages === COLLAB_PAGES ? 'ok' : 'FAIL');
}
