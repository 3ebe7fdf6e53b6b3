// HTTP benchmarks of the service as a separate process (`node src/server.ts`, as `make run` starts it), on PGlite
// and on PostgreSQL, reported as ratios against a baseline measured in the same run (`make bench`):
//   - page read: service req/s ÷ the req/s of a plain express server (scripts/bench-baseline.ts) answering the same
//     method with the same response bytes from memory;
//   - page write: against its floor, the least a page write can cost on the same database
//     (scripts/bench-write-floor.ts): plain express parsing the same form body, then one transaction per request on
//     a database of the same kind (a scratch database on the same PostgreSQL server, or an embedded PGlite of its
//     own): lock the page's row, insert the version, update the page, commit; it answers with the bytes the service
//     answered for a write. Both take the same load: 50 connections over 50 pages (one each), service req/s ÷ floor
//     req/s; and 50 connections on one hot page, service p99 ÷ floor p99; during the service's 50-page load, the
//     search lag (how long a written page takes to show in search: searchLagProbe). Beside the 50-page load, the same
//     50 pages written with `page[base_version]` (scripts/lib/bench-write-sides.ts), each against the same floor: the
//     current version (the one-statement write, whose ratio must stay that of the plain write, within noise), and a
//     base a few versions old that merges cleanly (reported, with a check that every answer is a 200 merge);
//   - growth: what the service itself spends per request on a large case, against its small counterpart. Each side is
//     measured twice, the service and express answering that side's very bytes; the service's own cost per request
//     is 1/(service req/s) - 1/(baseline req/s) (what it spends beyond sending those bytes), and the ratio is that cost
//     of the large case over that of the small one. Answers differ in size (a 200-member team is many times the
//     bytes of a 1-member one, and 100 notes of it megabytes, docs/speed.md; page 1 of a tree embeds 99 children,
//     page 500 none): sending the bytes is not the service's work, presenting and serialising them is;
//   - read p99 latency and the server's resident memory (VmRSS), as absolute numbers.
// Load comes from autocannon (50 connections) in this process; rounds alternate between the sides of a case so that
// the machine's noise (2 shared cores) falls on both. It talks to the service only over HTTP, seeds users and tokens
// with the admin command line, everything else through the API, and bulk rows (200 members, 100 notes, 10,000
// pages) with a few set-based SQL statements (through DATABASE_URL, or the embedded database's socket in DATA_DIR).
//
//   - events (scripts/lib/bench-events.ts): 200 open change streams during the page write load: writes/s with them
//     ÷ without, and ÷ the floor; delivery p50/p99 from each write's answer to its event on every stream; RSS.
//   - attachments: upload and download throughput of a 25 MiB file against `cp` of it (scripts/bench-attachments.ts).
//   - collab (scripts/bench-collab.ts): live co-editing, 100 pages x 4 editors typing, the service's /live against a
//     bare Hocuspocus server: update latency between editors, updates/s, RSS per open document, versions per page.
//   - history (scripts/lib/bench-history.ts): a note of 1,000 pages with 50 versions each read whole (listPages to
//     its last page) as it was 30 days ago (`?at=`) and as it is now: ratio of the times (issue 23: <= 3); then the
//     note exported (time, size, the server's RSS while it streams) and that zip imported back (issue 23: < 60 s).
//   - search (scripts/lib/bench-search.ts): searchNotes p50 and p99, one request at a time, over 100,000 pages of
//     mixed Japanese and English text, for 2-character Japanese words and English words; the index's build time and size.
// Environment: BENCH_DB=pglite|postgres (default both), BENCH_CASES=read,write,notes,team,pages,deep,events,attachments,collab,history,search (default all),
// BENCH_SECONDS (per round and side, default 3), BENCH_ROUNDS (default 3), BENCH_WARMUP_SECONDS (default 1),
// BENCH_COLLAB_SECONDS (the collab case's typing per side, default 30), BENCH_COLLAB_PAGES (default 100), BENCH_COLLAB_PROCESSES
// (its editors' processes, default 1), BENCH_COLLAB_CARETS=0 (the editors move no caret),
// BENCH_VERBOSE=1 (one line per autocannon run), BENCH_KEEP_DATA=1 (keep the PGlite data directory; PostgreSQL's goes).
// Prints one line per measurement, then a summary; exits 1 when a goal is missed or a case could not run.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { CannedResponse } from './bench-baseline.ts';
import type { FloorDatabase, FloorPage, FloorReply, FloorRequest } from './bench-write-floor.ts';
import { benchAttachments } from './bench-attachments.ts';
import { benchCollab } from './bench-collab.ts';
import { benchEvents } from './lib/bench-events.ts';
import { HEAP_HEADROOM_GOAL, RSS_GOAL_MB, type Database } from './lib/bench-goals.ts';
import { SEARCH_NOTES, SEARCH_PAGES_PER_NOTE, seedSearch, timeSearches } from './lib/bench-search.ts';
import { HISTORY_PAGES, HISTORY_RATIO_GOAL, HISTORY_VERSIONS, IMPORT_SECONDS_GOAL, seedHistory, timeExport, timeHistoryWalks, timeImport } from './lib/bench-history.ts';
import { currentBaseWrites, STALE_BEHIND, staleBaseWrites, type LoadRequest } from './lib/bench-write-sides.ts';
import { envNumber } from './lib/bench-seed.ts';

// ------------------------------------------------------------------------------------------------ goals and cases

/**
 * Service req/s ÷ baseline req/s (read) and ÷ floor req/s (write: spread over 50 pages, one per connection) must reach
 * these: reads keep 0.8 of express serving the same bytes, writes reach half the floor.
 */
const RATIO_GOALS: Record<'read' | 'write', Record<Database, number>> = {
  read: { postgres: 0.8, pglite: 0.8 },
  write: { postgres: 0.5, pglite: 0.5 },
};
/**
 * A write naming the page's current version as its base costs no more than one without (issue 19: the same ratio to
 * the floor): its ratio must reach this fraction of the plain write's, measured in the same rounds (the rest is noise).
 */
const CURRENT_BASE_NOISE = 0.9;
/** Page write on one hot page at 50 connections: service p99 ÷ the floor's p99 (same load) must stay <= this. */
const HOT_WRITE_P99_GOAL: Record<Database, number> = { postgres: 2, pglite: 2 };
/** Page read p99 at 50 connections, milliseconds (no goal on PGlite: reported only). */
const READ_P99_GOAL_MS: Partial<Record<Database, number>> = { postgres: 25 };

/** A request of a growth case: path (with {placeholders} filled from the seeded data) and who asks. */
type Probe = { path: string; as: Caller };
type Caller = 'bench' | 'busy' | 'solo100' | 'solo1';
/** Growth: service's own cost per request, large ÷ small, must stay <= goal (null: reported only). Variants shared by two rows are
 * measured once. Callers: `busy` is in the team `crowd` of 200 members with 100 notes (and its own default team, empty);
 * `solo100` has 100 notes in its default team (1 member); `solo1` has 1 note in its default team. */
const GROWTH: { key: string; label: string; small: Probe; large: Probe; goal: number | null }[] = [
  { key: 'notes', label: 'notes list: 100 notes, team of 200 vs of 1', goal: 1.5,
    small: { path: '/api/v1/notes', as: 'solo100' }, large: { path: '/api/v1/notes', as: 'busy' } },
  { key: 'notes', label: 'notes list: 100 notes/200 members vs 1 note', goal: null,
    small: { path: '/api/v1/notes', as: 'solo1' }, large: { path: '/api/v1/notes', as: 'busy' } },
  { key: 'team', label: 'team: 200 members vs 1', goal: 1.5,
    small: { path: '/api/v1/teams/single', as: 'bench' }, large: { path: '/api/v1/teams/crowd', as: 'bench' } },
  { key: 'pages', label: 'pages list of 10,000: ?page=500 vs ?page=1', goal: 1.5,
    small: { path: '/api/v1/bench/big/pages?page=1', as: 'bench' }, large: { path: '/api/v1/bench/big/pages?page=500', as: 'bench' } },
  { key: 'deep', label: 'page 30 levels deep vs top-level', goal: 1.5,
    small: { path: '/api/v1/bench/deep/{topPage}', as: 'bench' }, large: { path: '/api/v1/bench/deep/{deepPage}', as: 'bench' } },
];

// ------------------------------------------------------------------------------------------------ settings
const ROOT = path.resolve(import.meta.dirname, '..');
const CONNECTIONS = 50;
const WRITE_PAGES = 50;
const SECONDS = envNumber('BENCH_SECONDS', 3);
const ROUNDS = Math.round(envNumber('BENCH_ROUNDS', 3));
/** BENCH_KEEP_DATA=1: the data directory (PGlite's database, attachments) is kept for a look afterwards. */
const KEEP_DATA = process.env.BENCH_KEEP_DATA === '1';
const WARMUP_SECONDS = envNumber('BENCH_WARMUP_SECONDS', 1);
const VERBOSE = Boolean(process.env.BENCH_VERBOSE);
const DATABASES: Database[] = (() => {
  const raw = process.env.BENCH_DB || 'pglite,postgres';
  const list = raw.split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of list) if (name !== 'pglite' && name !== 'postgres') throw new Error(`BENCH_DB is pglite or postgres, got "${name}"`);
  return list as Database[];
})();
const ALL_CASES = ['read', 'write', ...new Set(GROWTH.map((row) => row.key)), 'events', 'attachments', 'collab', 'history', 'search'];
/** A page written while the write load runs is found by search within this, at p99 (milliseconds). */
const SEARCH_LAG_GOAL_MS = 1000;
/** searchNotes latency over 100,000 pages, one request at a time, milliseconds (issue 18: p50 40 ms on PGlite). */
const SEARCH_GOAL_MS: Record<Database, { p50: number; p99: number }> = { postgres: { p50: 30, p99: 100 }, pglite: { p50: 40, p99: 100 } };
const CASES = new Set((process.env.BENCH_CASES || ALL_CASES.join(',')).split(',').map((name) => name.trim()).filter(Boolean));
for (const name of CASES) if (!ALL_CASES.includes(name)) throw new Error(`BENCH_CASES: unknown case "${name}" (cases: ${ALL_CASES.join(', ')})`);

// ------------------------------------------------------------------------------------------------ autocannon
// autocannon ships no types (and @types/autocannon is not a dependency): the little used here, typed by hand (a
// request: LoadRequest, scripts/lib/bench-write-sides.ts).
/** A running autocannon: an event emitter that is also a promise of the run's summary (not used: see `load`). */
type LoadRun = Promise<unknown> & {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, responseTime: number) => void): void;
  on(event: 'reqError', listener: (error: Error) => void): void;
  stop(): void;
};
type LoadOptions = { url: string; connections: number; duration: number; timeout: number; requests: LoadRequest[] };
const autocannon = createRequire(import.meta.url)('autocannon') as (options: LoadOptions) => LoadRun;

// ------------------------------------------------------------------------------------------------ child processes
const children = new Set<ChildProcess>();
const temporaryDirectories = new Set<string>();
let interrupted = false;

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Asks a child to stop (SIGTERM, or closing stdin for the PostgreSQL keeper), then kills it after `graceMs`. */
async function stopChild(child: ChildProcess, how: 'signal' | 'stdin' = 'signal', graceMs = 15_000): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    if (how === 'stdin') child.stdin?.end();
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited(child);
    clearTimeout(timer);
  }
  children.delete(child);
}

// Last resort when this process ends some other way: nothing of ours may outlive it. (The PostgreSQL keeper also
// stops its server by itself when its stdin closes, i.e. when this process is gone.)
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const directory of temporaryDirectories) rmSync(directory, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n[bench] ${signal}: stopping every process started here\n`);
    void Promise.all([...children].map((child) => stopChild(child, child.stdin ? 'stdin' : 'signal'))).finally(() =>
      process.exit(signal === 'SIGINT' ? 130 : 143),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A throw-away PostgreSQL 15 server, through scripts/lib/postgres.sh (the same start as the tests). */
async function startPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const keeper = spawn('bash', [path.join(ROOT, 'scripts/lib/postgres.sh'), 'serve'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
    // commit times recorded: the events case measures delivery from each change's commit (scripts/lib/bench-events.ts)
    env: { ...process.env, NODE: process.execPath, PG_SETTINGS: '-c track_commit_timestamp=on' },
  });
  children.add(keeper);
  const stop = () => stopChild(keeper, 'stdin', 90_000);
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error('PostgreSQL did not start within 180 s')), 180_000);
    keeper.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.startsWith('postgresql://'));
      if (line) {
        clearTimeout(timer);
        resolve(line.trim());
      }
    });
    keeper.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`could not start PostgreSQL (scripts/lib/postgres.sh exited ${code})`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, stop };
}

type Service = { pid: number; baseUrl: string; outputTail(): string; died(): string | undefined; stop(): Promise<void> };

/** `node src/server.ts` with its own environment: production, quiet, no throttling of its own load. */
async function startService(database: { DATA_DIR?: string; DATABASE_URL?: string }): Promise<Service> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    METRICS_TOKEN: BENCH_METRICS_TOKEN,
    RATE_LIMIT_PER_HOUR: '10000000',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: baseUrl,
    ...database,
  };
  if (!database.DATABASE_URL) delete env.DATABASE_URL;
  const child = spawn('bash', ['scripts/serve.sh'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 30));
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let death: string | undefined;
  child.once('exit', (code, signal) => (death = `the service exited (${signal ?? `code ${code}`})`));
  const service: Service = {
    pid: child.pid!,
    baseUrl,
    outputTail: () => lines.join('\n'),
    died: () => death,
    stop: () => stopChild(child),
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (death) throw new Error(`${death} before it was ready:\n${service.outputTail()}`);
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`the service was not ready within 120 s:\n${service.outputTail()}`);
    }
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      await response.arrayBuffer();
      if (response.status === 200) return service;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
}

type Baseline = { baseUrl: string; answer(response: CannedResponse): Promise<void>; stop(): Promise<void> };

async function startBaseline(): Promise<Baseline> {
  const child = fork(path.join(ROOT, 'scripts/bench-baseline.ts'), [], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`the baseline server exited (code ${code})`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    answer: (response) =>
      new Promise((resolve) => {
        child.once('message', () => resolve());
        child.send(response);
      }),
    stop: () => stopChild(child),
  };
}

type WriteFloor = { pid: number; baseUrl: string; answer(response: CannedResponse): Promise<void>; stop(): Promise<void> };

/** scripts/bench-write-floor.ts, started as the baseline is, with its own tables and pages on `database`. */
async function startWriteFloor(database: FloorDatabase, pages: FloorPage[]): Promise<WriteFloor> {
  const child = fork(path.join(ROOT, 'scripts/bench-write-floor.ts'), [], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const stop = () => stopChild(child);
  const ask = (request: FloorRequest, timeoutMs: number) =>
    new Promise<FloorReply>((resolve, reject) => {
      const onExit = (code: number | null) => {
        clearTimeout(timer);
        reject(new Error(`the write floor exited (code ${code})`));
      };
      const timer = setTimeout(() => reject(new Error(`the write floor did not answer "${request.type}" within ${timeoutMs / 1000} s`)), timeoutMs);
      child.once('exit', onExit);
      child.once('message', (reply: FloorReply) => {
        clearTimeout(timer);
        child.off('exit', onExit);
        if (reply.type === 'error') reject(new Error(`the write floor: ${reply.message}`));
        else resolve(reply);
      });
      child.send(request);
    });
  try {
    const ready = await ask({ type: 'setup', database, pages }, 120_000);
    if (ready.type !== 'ready') throw new Error(`the write floor answered ${ready.type} to its setup`);
    return {
      pid: child.pid!,
      baseUrl: `http://127.0.0.1:${ready.port}`,
      answer: async (response) => void (await ask({ type: 'answer', response }, 30_000)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The bench's bearer for the service's /metrics (the heap's readings). */
const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';

/** The peak resident memory (VmHWM) since the last `resetPeakRss`, in MB. */
function peakRssMegabytes(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resets the kernel's peak of the process's resident memory (a write of 5 to clear_refs, Linux 4.0 on). */
function resetPeakRss(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not supported: the peak then counts the start too, which only makes the goal harder
  }
}

/** The service's heap readings from /metrics: the ceiling and the largest live heap since its start, in MB. */
async function heapReadings(baseUrl: string): Promise<{ limit: number; peakLive: number } | undefined> {
  try {
    const text = await (await fetch(`${baseUrl}/metrics`, { headers: { Authorization: `Bearer ${BENCH_METRICS_TOKEN}` } })).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]) / 1024 / 1024;
    return { limit: value('notes_heap_limit_bytes'), peakLive: value('notes_heap_live_peak_bytes') };
  } catch {
    return undefined;
  }
}

function rssMegabytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------------------------------------ seeding
/** The admin command line, as a person runs it; returns its standard output. */
function admin(args: string[], database: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...database, PATH: `${path.dirname(process.execPath)}:${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` };
    if (!database.DATABASE_URL) delete env.DATABASE_URL;
    const child = spawn('npm', ['run', '-s', 'admin', '--', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => {
      children.delete(child);
      if (code === 0) resolve(stdout);
      else reject(new Error(`npm run admin -- ${args.join(' ')}: exit ${code}\n${stderr}${stdout}`));
    });
  });
}

async function createUserWithToken(username: string, database: Record<string, string>): Promise<string> {
  await admin(['create-user', username], database);
  const lines = (await admin(['create-token', username, '--label', 'bench'], database)).trim().split('\n');
  return lines[lines.length - 1]!.trim(); // the token alone on the last line
}

type Api = (method: string, path: string, token: string, form?: Record<string, string | number>) => Promise<Record<string, unknown>>;

function apiClient(baseUrl: string): Api {
  return async (method, requestPath, token, form) => {
    const response = await fetch(baseUrl + requestPath, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(Object.entries(form).map(([key, value]) => [key, String(value)])).toString() } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${requestPath}: ${response.status} ${text.slice(0, 500)}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
}

/**
 * How long a written page takes to show in search while the write load runs (the index is a projection of the
 * change log, written after the commit): every 200 ms a page of its own gets a word no page had, then the search is
 * asked every 20 ms until it finds that page (10 s at most: counted as 10 s). The lags, in milliseconds.
 */
function searchLagProbe(baseUrl: string, token: string, pageId: number, lags: number[]): () => () => Promise<void> {
  return () => {
    let running = true;
    const headers = { Authorization: `Bearer ${token}` };
    const done = (async () => {
      for (let probe = 0; running; probe += 1) {
        const word = `lagprobe${Date.now().toString(36)}x${probe}`;
        const written = await fetch(`${baseUrl}/api/v1/bench/write/${pageId}`, {
          method: 'PUT', headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }, body: `page[content]=${encodeURIComponent(`<p>${word}</p>`)}`,
        });
        await written.arrayBuffer();
        if (!written.ok) throw new Error(`search lag probe: the write answered ${written.status}`);
        const started = performance.now();
        for (;;) {
          const answer = await fetch(`${baseUrl}/api/v1/search?q=${word}&type=page`, { headers });
          const found = (await answer.json()) as { matches?: { page_id?: number }[] }[];
          if (Array.isArray(found) && found.some((note) => note.matches?.some((match) => match.page_id === pageId))) break;
          if (performance.now() - started > 10_000) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        lags.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    return async () => {
      running = false;
      await done;
    };
  };
}

/** ~4 KB of page content: 40 lines of ~100 characters. */
const CONTENT_LINES = Array.from({ length: 40 }, (_, line) => `<p>Line ${String(line).padStart(2, '0')}: the quick brown fox jumps over the lazy dog, and the benchmark counts it.</p>`);
const CONTENT = CONTENT_LINES.join('\n');
let edits = 0;
/** New content for every write: a couple of lines differ from any earlier write, so each one records a version and a diff. */
function editedContent(): string {
  edits += 1;
  const lines = [...CONTENT_LINES];
  lines[edits % lines.length] = `<p>Edit ${edits}: this line was rewritten by request number ${edits} of the write benchmark.</p>`;
  lines[(edits * 7 + 3) % lines.length] = `<p>Edit ${edits}: and so was this one, a few lines away from the first.</p>`;
  return lines.join('\n');
}
const writeBody = () => `page[content]=${encodeURIComponent(editedContent())}`;

type Seeded = {
  tokens: Record<Caller, string>;
  readPath: string;
  writePaths: string[];
  hotPath: string;
  /** The pages of the write case as seeded (the 50 and the hot one), for the write floor's copy of them. */
  writePages: FloorPage[];
  ids: Record<string, number>;
};

async function seed(service: Service, database: Record<string, string>, sqlConfig: pg.ClientConfig): Promise<Seeded> {
  const api = apiClient(service.baseUrl);
  const tokens = {} as Record<Caller, string>;
  for (const caller of ['bench', 'busy', 'solo100', 'solo1'] as const) tokens[caller] = await createUserWithToken(caller, database);
  const bench = tokens.bench;
  const createPage = async (note: string, title: string, content: string, parent?: number) =>
    (await api('POST', `/api/v1/bench/${note}/pages`, bench, { 'page[title]': title, 'page[content]': content, ...(parent ? { 'page[parent]': parent } : {}) })).id as number;

  // page read: a note with a few pages; the page read has a parent and two children
  await api('POST', '/api/v1/notes', bench, { 'note[title]': 'Handbook', 'note[team]': 'bench', 'note[slug]': 'read' });
  await createPage('read', 'Cover', '<p>Welcome</p>');
  const guide = await createPage('read', 'Guide', '<p>How we work</p>');
  const target = await createPage('read', 'Releases', CONTENT, guide);
  await createPage('read', 'Rollback', '<p>Redeploy the previous tag.</p>', target);
  await createPage('read', 'Hotfix', '<p>Branch from the tag.</p>', target);
  await createPage('read', 'Appendix', '<p>Links</p>');

  // page write: 50 pages (one per connection) and one hot page, in a note of their own
  await api('POST', '/api/v1/notes', bench, { 'note[title]': 'Scratch', 'note[team]': 'bench', 'note[slug]': 'write' });
  const writePages: FloorPage[] = [];
  for (let i = 1; i <= WRITE_PAGES; i += 1) writePages.push({ id: await createPage('write', `Page ${i}`, CONTENT), title: `Page ${i}`, content: CONTENT });
  const hot: FloorPage = { id: await createPage('write', 'Hot page', CONTENT), title: 'Hot page', content: CONTENT };
  const writePaths = writePages.map((page) => `/api/v1/bench/write/${page.id}`);
  const hotPath = `/api/v1/bench/write/${hot.id}`;
  writePages.push(hot);

  // a page 30 levels deep, and a top-level leaf with the same content
  await api('POST', '/api/v1/notes', bench, { 'note[title]': 'Deep', 'note[team]': 'bench', 'note[slug]': 'deep' });
  let deepPage = 0;
  for (let depth = 1; depth <= 30; depth += 1) deepPage = await createPage('deep', `Depth ${depth}`, CONTENT, deepPage || undefined);
  const topPage = await createPage('deep', 'Top', CONTENT);

  // teams: `busy` makes the team `crowd` and gets 199 members; `solo1` makes a team of its own; 1 note for solo1
  await api('POST', '/api/v1/teams', tokens.busy, { 'team[name]': 'crowd' });
  await api('POST', '/api/v1/teams', tokens.solo1, { 'team[name]': 'single' });
  await api('POST', '/api/v1/notes', tokens.solo1, { 'note[title]': 'Only note', 'note[team]': 'solo1', 'note[slug]': 'only' });
  await api('POST', '/api/v1/notes', bench, { 'note[title]': 'Big note', 'note[team]': 'bench', 'note[slug]': 'big' });

  // bulk rows, set-based
  const sql = new pg.Client(sqlConfig);
  await sql.connect();
  try {
    const now = `date_trunc('second', now())`;
    // 199 users, each with a default team they manage (as createUser does), all members of `crowd`
    await sql.query(`insert into users (username, name, lang, created_at, updated_at)
      select 'member' || lpad(g::text, 3, '0'), 'Member ' || g, 'en', ${now}, ${now} from generate_series(1, 199) g`);
    await sql.query(`insert into teams (name, is_default, plan, created_at, updated_at)
      select username, true, 'free', ${now}, ${now} from users where username like 'member%'`);
    await sql.query(`insert into memberships (team_id, user_id, role, created_at, updated_at)
      select t.id, u.id, 'manager', ${now}, ${now} from users u join teams t on t.name = u.username where u.username like 'member%'`);
    await sql.query(`insert into memberships (team_id, user_id, role, created_at, updated_at)
      select t.id, u.id, 'member', ${now}, ${now} from users u, teams t where t.name = 'crowd' and u.username like 'member%'`);
    // 100 notes in `crowd` and 100 in solo100's default team
    for (const [team, owner] of [['crowd', 'busy'], ['solo100', 'solo100']]) {
      await sql.query(`insert into notes (team_id, user_id, slug, title, description, created_at, updated_at)
        select t.id, u.id, 'note' || g, 'Note ' || g, 'A note of the benchmark', ${now}, ${now}
          from generate_series(1, 100) g, teams t, users u where t.name = $1 and u.username = $2`, [team, owner]);
    }
    // 10,000 pages in `big`: 100 top-level pages with 99 children each
    const big = (await sql.query<{ id: number }>(`select n.id from notes n join teams t on t.id = n.team_id where t.name = 'bench' and n.slug = 'big'`)).rows[0]!.id;
    await sql.query(`insert into pages (note_id, parent_id, position, title, content, created_at, updated_at)
      select $1, null, g, 'top ' || g, repeat('<p>content</p>', 50), ${now}, ${now} from generate_series(1, 100) g`, [big]);
    await sql.query(`update notes set cover_page_id = (select id from pages where note_id = $1 and position = 1 and parent_id is null) where id = $1`, [big]);
    await sql.query(`insert into pages (note_id, parent_id, position, title, content, created_at, updated_at)
      select $1, p.id, g, p.title || ' child ' || g, repeat('<p>content</p>', 50), ${now}, ${now}
        from pages p cross join generate_series(1, 99) g where p.note_id = $1 and p.parent_id is null`, [big]);
    const counts = (await sql.query<{ members: string; notes: string; pages: string }>(`select
      (select count(*) from memberships m join teams t on t.id = m.team_id where t.name = 'crowd') as members,
      (select count(*) from notes n join teams t on t.id = n.team_id where t.name = 'crowd') as notes,
      (select count(*) from pages where note_id = $1) as pages`, [big])).rows[0]!;
    if (`${counts.members}/${counts.notes}/${counts.pages}` !== '200/100/10000') {
      throw new Error(`seeding: expected 200 members, 100 notes, 10000 pages; got ${counts.members}, ${counts.notes}, ${counts.pages}`);
    }
    await sql.query('analyze');
  } finally {
    await sql.end();
  }
  return { tokens, readPath: `/api/v1/bench/read/${target}`, writePaths, hotPath, writePages, ids: { topPage, deepPage } };
}

// ------------------------------------------------------------------------------------------------ measuring
type Side = {
  label: string;
  /** The write floor's answer is set before its sides are measured (it answers every write with the same bytes). */
  target: 'service' | 'baseline' | 'floor';
  /** Requests of one connection (autocannon cycles through them), made afresh for each run. */
  requests: () => LoadRequest[] | Promise<LoadRequest[]>;
  /** For the baseline: the bytes to answer with. */
  canned?: CannedResponse;
  /** Runs beside the load while it lasts: started with it, stopped (and awaited) when it ends. */
  during?: () => () => Promise<void>;
};
type SideResult = { requestsPerSecond: number; p99: number; failures: number };

type Context = { database: Database; service: Service; baseline: Baseline; floor?: WriteFloor; rssMax: number };

type Window = { responses: number; seconds: number; latencies: number[]; failures: number };

/**
 * One run of one side: CONNECTIONS connections in a closed loop, counted only in a window of `seconds` that opens
 * once the loop is in its steady state (after the warm-up time and at least one response per connection, or 10 s at
 * most), so that neither the ramp-up nor the requests still in flight when it stops skew the rate. After it, wait
 * until the service has finished the requests it was still working on for connections autocannon closed.
 */
async function load(context: Context, side: Side, seconds: number): Promise<Window> {
  if (context.service.died()) throw new Error(`${context.service.died()}:\n${context.service.outputTail()}`);
  if (side.canned) await context.baseline.answer(side.canned);
  if (side.target === 'floor' && !context.floor) throw new Error(`${side.label}: the write floor is not running`);
  const url = side.target === 'service' ? context.service.baseUrl : side.target === 'floor' ? context.floor!.baseUrl : context.baseline.baseUrl;
  const requests = await side.requests();
  const sampler =
    side.target === 'service'
      ? setInterval(() => (context.rssMax = Math.max(context.rssMax, rssMegabytes(context.service.pid) ?? 0)), 200)
      : undefined;
  const window: Window = { responses: 0, seconds: 0, latencies: [], failures: 0 };
  const stopBeside = side.during?.();
  try {
    const run = autocannon({ url, connections: CONNECTIONS, duration: 3600, timeout: 60, requests });
    const started = performance.now();
    let opened: number | undefined;
    let warmResponses = 0;
    const open = (now: number) => {
      opened = now;
      setTimeout(() => {
        window.seconds = (performance.now() - opened!) / 1000;
        opened = Number.POSITIVE_INFINITY; // closed: later responses are not counted
        run.stop();
      }, seconds * 1000);
    };
    const warmUpLimit = setTimeout(() => opened === undefined && open(performance.now()), Math.max(10, WARMUP_SECONDS) * 1000);
    run.on('response', (_client, status, _bytes, responseTime) => {
      const now = performance.now();
      if (opened === undefined) {
        warmResponses += 1;
        if (now - started >= WARMUP_SECONDS * 1000 && warmResponses >= CONNECTIONS) open(now);
        return;
      }
      if (now < opened) return;
      window.responses += 1;
      window.latencies.push(responseTime);
      if (status < 200 || status > 299) window.failures += 1;
    });
    run.on('reqError', () => {
      if (opened !== undefined && performance.now() >= opened) window.failures += 1;
    });
    await run;
    clearTimeout(warmUpLimit);
  } finally {
    clearInterval(sampler);
    await stopBeside?.();
  }
  // the service or the floor may still be finishing writes for connections autocannon closed
  if (side.target === 'service') await drain(context.service.pid);
  if (side.target === 'floor') await drain(context.floor!.pid);
  if (VERBOSE) {
    console.log(`[bench]   ${side.label}: ${window.responses} responses in ${window.seconds.toFixed(2)} s, ` +
      `p99 ${percentile(window.latencies, 0.99).toFixed(1)} ms, ${window.failures} failed`);
  }
  return window;
}

/** CPU time (user + system, in clock ticks) the process has used so far. */
function cpuTicks(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of the whole line)
  } catch {
    return undefined;
  }
}

/** Waits (30 s at most) until the process uses less than 5 % of a core over 200 ms, twice in a row. */
async function drain(pid: number): Promise<void> {
  let previous = cpuTicks(pid);
  let quiet = 0;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline && quiet < 2 && previous !== undefined; ) {
    await sleep(200);
    const now = cpuTicks(pid);
    if (now === undefined) return;
    quiet = now - previous <= 1 ? quiet + 1 : 0;
    previous = now;
  }
}

function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** ROUNDS rounds, each running every side once in turn (each run with its own warm-up, see `load`). */
async function measure(context: Context, sides: Side[]): Promise<SideResult[]> {
  const totals: Window[] = sides.map(() => ({ responses: 0, seconds: 0, latencies: [], failures: 0 }));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [index, side] of sides.entries()) {
      const window = await load(context, side, SECONDS);
      const total = totals[index]!;
      total.responses += window.responses;
      total.seconds += window.seconds;
      for (const latency of window.latencies) total.latencies.push(latency); // not push(...): a fast side records 100,000s
      total.failures += window.failures;
    }
  }
  return totals.map((total) => ({ requestsPerSecond: total.responses / total.seconds, p99: percentile(total.latencies, 0.99), failures: total.failures }));
}

/** The real response of one request, to be served by the baseline. */
async function capture(baseUrl: string, request: LoadRequest): Promise<CannedResponse> {
  const response = await fetch(baseUrl + request.path, {
    method: request.method,
    headers: request.headers ?? {},
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  const body = Buffer.from(await response.arrayBuffer());
  if (!response.ok) throw new Error(`${request.method} ${request.path}: ${response.status} ${body.toString().slice(0, 300)}`);
  return { status: response.status, contentType: response.headers.get('content-type') ?? 'application/octet-stream', bodyBase64: body.toString('base64') };
}

// ------------------------------------------------------------------------------------------------ reporting
type Verdict = 'ok' | 'FAIL' | 'report';
const outcomes: { name: string; verdict: Verdict }[] = [];
const problems: string[] = [];

function report(database: Database, label: string, text: string, verdict: Verdict): void {
  outcomes.push({ name: `${database} ${label}`, verdict });
  console.log(`${database.padEnd(8)} ${label.padEnd(44)} ${text}${verdict === 'report' ? '' : `  ${verdict}`}`);
}
const perSecond = (value: number) => `${Math.round(value).toString().padStart(6)} req/s`;
const failuresNote = (result: SideResult) => (result.failures > 0 ? `  (${result.failures} failed requests)` : '');

async function runDatabase(database: Database): Promise<void> {
  let postgres: Awaited<ReturnType<typeof startPostgres>> | undefined;
  let dataDir: string | undefined;
  let service: Service | undefined;
  let baseline: Baseline | undefined;
  let floor: WriteFloor | undefined;
  try {
    let env: Record<string, string>;
    let sqlConfig: pg.ClientConfig;
    // a DATA_DIR of its own on both databases (on PostgreSQL it holds the attachments only)
    dataDir = mkdtempSync(path.join(os.tmpdir(), `bench-${database}-`));
    temporaryDirectories.add(dataDir);
    if (database === 'postgres') {
      postgres = await startPostgres();
      env = { DATABASE_URL: postgres.url, DATA_DIR: dataDir };
      sqlConfig = { connectionString: postgres.url };
    } else {
      env = { DATA_DIR: dataDir };
      // the running server serves its embedded database on this socket (the admin command line uses it too)
      sqlConfig = { host: dataDir, port: 5432, user: 'postgres', database: 'postgres' };
    }
    console.log(`[bench] ${database}: starting the service`);
    service = await startService(env);
    if (VERBOSE) console.log(`[bench]   service pid ${service.pid} at ${service.baseUrl}`);
    await sleep(2000);
    const rssIdle = rssMegabytes(service.pid) ?? 0;
    // the peak from here on is the run's: the embedded database's start (V8 compiling PGlite's WebAssembly, a
    // transient of ~2 s whatever the data: docs/operating.md, Memory) is the start's, reported above as idle
    resetPeakRss(service.pid);
    baseline = await startBaseline();
    console.log(`[bench] ${database}: seeding`);
    const seeded = await seed(service, env, sqlConfig);
    const context: Context = { database, service, baseline, rssMax: 0 };
    const authorization = (caller: Caller) => ({ Authorization: `Bearer ${seeded.tokens[caller]}` });
    const headers = { ...authorization('bench'), 'Content-Type': 'application/x-www-form-urlencoded' }; // the page writes'
    // the write floor (write and events cases): its own copy of the write pages (same ids, titles, contents) on the
    // same kind of database, answering every write with the bytes the service answered for one
    const openFloor = async (directory: string) => {
      const canned = await capture(service!.baseUrl, { method: 'PUT', path: seeded.writePaths[0]!, headers, body: writeBody() });
      console.log(`[bench] ${database}: starting the write floor`);
      context.floor = floor = await startWriteFloor(
        database === 'postgres' ? { kind: 'postgres', url: postgres!.url } : { kind: 'pglite', directory: path.join(dataDir!, directory) },
        seeded.writePages,
      );
      await floor.answer(canned);
    };
    console.log(`[bench] ${database}: measuring: ${ROUNDS} rounds, each side ${CONNECTIONS} connections for a ${SECONDS} s window after a warm-up ` +
      `(>= ${WARMUP_SECONDS} s and a response per connection)`);

    if (CASES.has('read')) {
      const request: LoadRequest = { method: 'GET', path: seeded.readPath, headers: authorization('bench') };
      const canned = await capture(service.baseUrl, request);
      const [base, served] = await measure(context, [
        { label: 'baseline', target: 'baseline', requests: () => [request], canned },
        { label: 'service', target: 'service', requests: () => [request] },
      ]);
      const ratio = served!.requestsPerSecond / base!.requestsPerSecond;
      const goal = RATIO_GOALS.read[database];
      report(database, 'page read', `service ${perSecond(served!.requestsPerSecond)}  baseline ${perSecond(base!.requestsPerSecond)}  ratio ${ratio.toFixed(2)}  goal >= ${goal}${failuresNote(served!)}`,
        ratio >= goal && served!.failures === 0 ? 'ok' : 'FAIL');
      const p99 = served!.p99;
      const p99Goal = READ_P99_GOAL_MS[database];
      report(database, `page read p99 (${CONNECTIONS} connections)`,
        `service ${p99.toFixed(1).padStart(6)} ms  (baseline ${base!.p99.toFixed(1)} ms)${p99Goal ? `  goal < ${p99Goal} ms` : ''}`,
        p99Goal === undefined ? 'report' : p99 < p99Goal ? 'ok' : 'FAIL');
    }

    for (const key of new Set(GROWTH.map((row) => row.key))) {
      if (!CASES.has(key)) continue;
      const rows = GROWTH.filter((row) => row.key === key);
      const probes = [...new Map(rows.flatMap((row) => [row.small, row.large]).map((probe) => [`${probe.as} ${probe.path}`, probe])).values()];
      const fill = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => String(seeded.ids[name]));
      // each probe twice: the service, and express answering the bytes the service answered (each answers 200 first)
      const sides: Side[] = [];
      for (const probe of probes) {
        const request: LoadRequest = { method: 'GET', path: fill(probe.path), headers: authorization(probe.as) };
        const canned = await capture(service.baseUrl, request);
        sides.push({ label: `baseline ${probe.as} ${probe.path}`, target: 'baseline', requests: () => [request], canned });
        sides.push({ label: `${probe.as} ${probe.path}`, target: 'service', requests: () => [request] });
      }
      const results = await measure(context, sides);
      const at = (probe: Probe) => 2 * probes.findIndex((candidate) => candidate === probe || (candidate.as === probe.as && candidate.path === probe.path));
      const of = (probe: Probe) => ({ base: results[at(probe)]!, served: results[at(probe) + 1]! });
      for (const row of rows) {
        const small = of(row.small);
        const large = of(row.large);
        // milliseconds the service spends per request beyond what sending the same bytes costs express
        const ownCost = (side: { base: SideResult; served: SideResult }) =>
          1000 / side.served.requestsPerSecond - 1000 / side.base.requestsPerSecond;
        const ratio = ownCost(large) / ownCost(small);
        const failed = small.served.failures + large.served.failures > 0;
        report(database, row.label,
          `small ${perSecond(small.served.requestsPerSecond)} (own ${ownCost(small).toFixed(2)} ms)  large ${perSecond(large.served.requestsPerSecond)} (own ${ownCost(large).toFixed(2)} ms)  ratio ${ratio.toFixed(2)}${row.goal === null ? '  (no goal)' : `  goal <= ${row.goal}`}${failed ? `  (${small.served.failures + large.served.failures} failed requests)` : ''}`,
          row.goal === null ? (failed ? 'FAIL' : 'report') : ratio <= row.goal && !failed ? 'ok' : 'FAIL');
      }
    }

    if (CASES.has('write')) {
      // Each connection keeps one page (autocannon gives every connection its own copy of `slot`).
      let nextPage = 0;
      const writes = (paths: string[]): LoadRequest[] => [{
        method: 'PUT', path: paths[0]!, headers, slot: {},
        setupRequest: (request) => {
          request.slot!.path ??= paths[nextPage++ % paths.length];
          return { ...request, path: request.slot!.path!, body: writeBody() };
        },
      }];
      await openFloor('write-floor');
      // the search lag, measured while the service takes the write load over 50 pages
      const probePage = (await apiClient(service.baseUrl)('POST', '/api/v1/bench/write/pages', seeded.tokens.bench, { 'page[title]': 'Search lag probe', 'page[content]': '<p>probe</p>' })).id as number;
      const lags: number[] = [];
      // the same 50 pages with page[base_version]: the current version, and one STALE_BEHIND versions old that merges
      const reader = { baseUrl: service.baseUrl, authorization: authorization('bench') };
      const currentBase = currentBaseWrites(reader, seeded.writePaths, headers, writeBody);
      const staleBase = staleBaseWrites(reader, seeded.writePaths, headers);
      const [floorSpread, spread, based, merged, floorHot, hot] = await measure(context, [
        { label: 'floor, 50 pages', target: 'floor', requests: () => writes(seeded.writePaths) },
        { label: 'service, 50 pages', target: 'service', requests: () => writes(seeded.writePaths), during: searchLagProbe(service.baseUrl, seeded.tokens.bench, probePage, lags) },
        { label: 'service, 50 pages, base current', target: 'service', requests: currentBase.requests },
        { label: `service, 50 pages, base ${STALE_BEHIND} behind`, target: 'service', requests: staleBase.requests },
        { label: 'floor, 1 hot page', target: 'floor', requests: () => writes([seeded.hotPath]) },
        { label: 'service, 1 hot page', target: 'service', requests: () => writes([seeded.hotPath]) },
      ]);
      await floor!.stop();
      floor = context.floor = undefined;
      const goal = RATIO_GOALS.write[database];
      const ratio = spread!.requestsPerSecond / floorSpread!.requestsPerSecond;
      report(database, `page write (${WRITE_PAGES} pages, one per connection)`,
        `service ${perSecond(spread!.requestsPerSecond)}  floor ${perSecond(floorSpread!.requestsPerSecond)}  ratio ${ratio.toFixed(2)}  goal >= ${goal}` +
          `${failuresNote(spread!)}${floorSpread!.failures ? `  (floor: ${floorSpread!.failures} failed requests)` : ''}`,
        ratio >= goal && spread!.failures === 0 && floorSpread!.failures === 0 ? 'ok' : 'FAIL');
      const basedRatio = based!.requestsPerSecond / floorSpread!.requestsPerSecond;
      const basedGoal = CURRENT_BASE_NOISE * ratio;
      const basedRight = based!.failures === 0 && currentBase.tally.wrongAnswers === 0;
      report(database, `page write, base = current (${WRITE_PAGES} pages)`,
        `service ${perSecond(based!.requestsPerSecond)}  floor ${perSecond(floorSpread!.requestsPerSecond)}  ratio ${basedRatio.toFixed(2)}  ` +
          `goal >= ${CURRENT_BASE_NOISE} x the plain write's ${ratio.toFixed(2)} = ${basedGoal.toFixed(2)} (no worse, within noise)` +
          `${failuresNote(based!)}  (${currentBase.tally.describe('200, the next version, no merge')})`,
        basedRatio >= basedGoal && basedRight ? 'ok' : 'FAIL');
      const mergedRight = merged!.failures === 0 && staleBase.tally.wrongAnswers === 0 && staleBase.tally.answers > 0;
      report(database, `page write, base ${STALE_BEHIND} behind, merged (${WRITE_PAGES} pages)`,
        `service ${perSecond(merged!.requestsPerSecond)}  floor ${perSecond(floorSpread!.requestsPerSecond)}  ratio ${(merged!.requestsPerSecond / floorSpread!.requestsPerSecond).toFixed(2)}  ` +
          `p99 service ${merged!.p99.toFixed(0)} ms  floor ${floorSpread!.p99.toFixed(0)} ms  (no goal)${failuresNote(merged!)}  (${staleBase.tally.describe('200 merged')})`,
        mergedRight ? 'report' : 'FAIL');
      const hotGoal = HOT_WRITE_P99_GOAL[database];
      const hotRatio = hot!.p99 / floorHot!.p99;
      report(database, 'page write (1 hot page, all connections)',
        `service ${perSecond(hot!.requestsPerSecond)}  floor ${perSecond(floorHot!.requestsPerSecond)}  p99 service ${hot!.p99.toFixed(0)} ms  floor ${floorHot!.p99.toFixed(0)} ms  ` +
          `ratio ${hotRatio.toFixed(2)}  goal <= ${hotGoal}${failuresNote(hot!)}${floorHot!.failures ? `  (floor: ${floorHot!.failures} failed requests)` : ''}`,
        hotRatio <= hotGoal && hot!.failures === 0 && floorHot!.failures === 0 ? 'ok' : 'FAIL');
      const lagP99 = percentile(lags, 0.99);
      report(database, 'search shows a write, during the write load',
        `p50 ${percentile(lags, 0.5).toFixed(0).padStart(5)} ms  p99 ${lagP99.toFixed(0).padStart(5)} ms  goal p99 <= ${SEARCH_LAG_GOAL_MS} ms  (${lags.length} probes)`,
        lags.length > 0 && lagP99 <= SEARCH_LAG_GOAL_MS ? 'ok' : 'FAIL');
    }

    if (CASES.has('events')) {
      await openFloor('events-floor');
      // on PostgreSQL a second server process on the same database holds the streams of the events case's fourth side
      const second = database === 'postgres' ? await startService(env) : undefined;
      try {
        await benchEvents({ baseUrl: service.baseUrl, pid: service.pid, ...(second ? { second: { baseUrl: second.baseUrl } } : {}), sql: sqlConfig,
          writePaths: seeded.writePaths, headers, writeBody,
          measure: (sides) => measure(context, sides), report: (label, text, verdict) => report(database, label, text, verdict) });
      } finally {
        await second?.stop();
      }
      await floor!.stop();
      floor = context.floor = undefined;
    }

    if (CASES.has('attachments')) {
      await benchAttachments({
        baseUrl: service.baseUrl, token: seeded.tokens.bench, team: 'bench', workDir: dataDir, rounds: Math.max(ROUNDS, 3),
        report: (label, text) => report(database, label, text, 'report'),
      });
    }
    if (CASES.has('collab')) {
      await benchCollab({ baseUrl: service.baseUrl, pid: service.pid, sql: sqlConfig, token: seeded.tokens.bench,
        report: (label, text, verdict) => report(database, label, text, verdict) });
    }
    if (CASES.has('history')) {
      const sql = new pg.Client(sqlConfig);
      await sql.connect();
      let history;
      try {
        history = await seedHistory(sql, 'bench');
      } finally {
        await sql.end();
      }
      const rssSeeded = rssMegabytes(service.pid) ?? 0;
      report(database, `history: seed ${HISTORY_PAGES} pages x ${HISTORY_VERSIONS} versions`, `${history.seedSeconds.toFixed(1).padStart(6)} s  (set-based SQL)  server RSS after it ${rssSeeded.toFixed(0)} MB`, 'report');
      context.rssMax = Math.max(context.rssMax, rssSeeded);
      const { now, then } = await timeHistoryWalks(service.baseUrl, seeded.tokens.bench, history, Math.max(ROUNDS, 3));
      const rssWalked = rssMegabytes(service.pid) ?? 0;
      context.rssMax = Math.max(context.rssMax, rssWalked);
      const ratio = then.milliseconds / now.milliseconds;
      const whole = now.pages === HISTORY_PAGES && then.pages === HISTORY_PAGES && now.failures + then.failures === 0;
      report(database, 'history: the whole note 30 days ago vs now',
        `at ${then.milliseconds.toFixed(0).padStart(5)} ms  now ${now.milliseconds.toFixed(0).padStart(5)} ms  ratio ${ratio.toFixed(2)}  goal <= ${HISTORY_RATIO_GOAL}  ` +
          `(${then.requests} requests of listPages each, ${then.pages} pages${whole ? '' : `; now read ${now.pages}, ${now.failures + then.failures} failed`}; server RSS after ${rssWalked.toFixed(0)} MB)`,
        whole && ratio <= HISTORY_RATIO_GOAL ? 'ok' : 'FAIL');
      report(database, 'history: its first page of results, new moment',
        `at ${then.firstMilliseconds.toFixed(1).padStart(6)} ms  now ${now.firstMilliseconds.toFixed(1).padStart(6)} ms  (no goal: the tree then is read once per moment, then kept)`, 'report');
      // the same note exported (the server's memory sampled while it streams), then imported back as another note
      const zip = path.join(dataDir, 'history-export.zip');
      const exported = await timeExport(service.baseUrl, seeded.tokens.bench, history, zip, () => rssMegabytes(service!.pid) ?? 0);
      context.rssMax = Math.max(context.rssMax, exported.rssMaxMegabytes);
      report(database, 'history: export of the whole note (zip)',
        `${exported.seconds.toFixed(1).padStart(6)} s  ${(exported.bytes / 1024 / 1024).toFixed(1)} MB  server RSS ${exported.rssBeforeMegabytes.toFixed(0)} MB before, at most ${exported.rssMaxMegabytes.toFixed(0)} MB (counted in the RSS goal)`,
        exported.status === 200 ? 'report' : 'FAIL');
      if (exported.status === 200) {
        const importSql = new pg.Client(sqlConfig);
        await importSql.connect();
        try {
          const imported = await timeImport(service.baseUrl, seeded.tokens.bench, 'bench', 'history-copy', zip, importSql);
          const complete = imported.state === 'done' && imported.versions === HISTORY_PAGES * HISTORY_VERSIONS;
          report(database, 'history: import of that export (upload to done)',
            `${imported.seconds.toFixed(1).padStart(6)} s  goal < ${IMPORT_SECONDS_GOAL} s  (${imported.state}, ${imported.versions} versions${imported.error ? `: ${imported.error}` : ''}; ` +
              `the job read ${imported.polls} times, ${imported.resets} of them again after the connection failed, longest answer ${imported.slowestPollMs.toFixed(0)} ms)`,
            complete && imported.seconds < IMPORT_SECONDS_GOAL ? 'ok' : 'FAIL');
        } finally {
          await importSql.end();
        }
      }
      rmSync(zip, { force: true });
    }
    if (CASES.has('search')) {
      // last: its 100,000 pages would change what the other cases measure
      const sql = new pg.Client(sqlConfig);
      await sql.connect();
      let corpus;
      try {
        corpus = await seedSearch(sql, 'bench', 'solo1');
      } finally {
        await sql.end();
      }
      report(database, `search: seed ${SEARCH_NOTES} notes, ${SEARCH_NOTES * SEARCH_PAGES_PER_NOTE} pages`, `${corpus.seedSeconds.toFixed(1).padStart(6)} s  (set-based SQL)`, 'report');
      const started = performance.now();
      const output = (await admin(['reindex'], env)).trim().split('\n').at(-1)!;
      report(database, 'search: index build (admin reindex)', `${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  (${output})`, 'report');
      const sets = [['2-character Japanese words', corpus.japaneseWords], ['English words', corpus.englishWords]] as const;
      for (const [label, words] of sets) {
        const timed = await timeSearches(service.baseUrl, seeded.tokens.bench, words, 10 * ROUNDS);
        context.rssMax = Math.max(context.rssMax, rssMegabytes(service.pid) ?? 0);
        const goal = SEARCH_GOAL_MS[database];
        const met = timed.p50 < goal.p50 && timed.p99 < goal.p99 && timed.failures === 0;
        report(database, `search p50/p99: ${label}`,
          `p50 ${timed.p50.toFixed(1).padStart(6)} ms  p99 ${timed.p99.toFixed(1).padStart(6)} ms  goal < ${goal.p50}/${goal.p99} ms  ` +
          `(${timed.requests} requests over ${words.length} words, ${timed.meanHits.toFixed(0)} matching notes on average${timed.failures ? `, ${timed.failures} failed` : ''})`,
          met ? 'ok' : 'FAIL');
      }
      if (VERBOSE) console.log(`[bench]   search words: ${sets.map(([, words]) => words.join(' ')).join(' | ')}`);
    }

    const rssGoal = RSS_GOAL_MB[database];
    report(database, 'RSS idle after start', `${rssIdle.toFixed(0).padStart(6)} MB  goal < ${rssGoal} MB`, rssIdle < rssGoal ? 'ok' : 'FAIL');
    const rssPeak = Math.max(peakRssMegabytes(service.pid) ?? 0, context.rssMax);
    report(database, `RSS peak over the run (${CASES.size === ALL_CASES.length ? 'every case' : [...CASES].join(',')})`, `${rssPeak.toFixed(0).padStart(6)} MB  goal < ${rssGoal} MB  (largest sampled during load rounds ${context.rssMax.toFixed(0)} MB)`, rssPeak < rssGoal ? 'ok' : 'FAIL');
    const heap = await heapReadings(service.baseUrl);
    const headroom = heap && heap.peakLive > 0 ? heap.limit / heap.peakLive : undefined;
    report(database, 'heap headroom (ceiling / peak live heap)',
      heap ? `${headroom?.toFixed(1) ?? 'n/a'}x  ceiling ${heap.limit.toFixed(0)} MB, peak live ${heap.peakLive.toFixed(0)} MB  goal >= ${HEAP_HEADROOM_GOAL}x` : 'n/a (no /metrics)',
      headroom !== undefined && headroom >= HEAP_HEADROOM_GOAL ? 'ok' : 'FAIL');
    if (service.died()) throw new Error(`${service.died()}:\n${service.outputTail()}`);
  } catch (error) {
    // fetch's own message is "fetch failed": what failed is its cause (a reset, a refused connection, a timeout)
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    const message = `${error instanceof Error ? error.message : String(error)}${cause}`;
    problems.push(`${database}: ${message}`);
    console.log(`${database.padEnd(8)} COULD NOT RUN: ${message}`);
    if (service) console.log(`[bench] last lines of the service's output:\n${service.outputTail() || '(none)'}`);
  } finally {
    await baseline?.stop();
    await floor?.stop();
    await service?.stop();
    await postgres?.stop();
    if (dataDir) {
      if (KEEP_DATA) console.log(`[bench] ${database}: data kept in ${dataDir} (BENCH_KEEP_DATA)`);
      else rmSync(dataDir, { recursive: true, force: true });
      temporaryDirectories.delete(dataDir);
    }
  }
}

for (const database of DATABASES) {
  if (interrupted) break;
  await runDatabase(database);
}
const missed = outcomes.filter((outcome) => outcome.verdict === 'FAIL');
const met = outcomes.filter((outcome) => outcome.verdict === 'ok');
console.log(
  `bench: ${met.length} goals met, ${missed.length} missed${missed.length ? ` (${missed.map((outcome) => outcome.name).join('; ')})` : ''}` +
    `${problems.length ? `, ${problems.length} database pass(es) could not run` : ''}`,
);
process.exitCode = missed.length > 0 || problems.length > 0 ? 1 : 0;
