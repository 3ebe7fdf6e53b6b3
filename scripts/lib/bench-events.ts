// The `events` case of `make bench` (scripts/bench-http.ts): the change stream (GET /api/v1/events, server-sent
// events) under the page write load. EVENT_STREAMS streams are open, one per reader (the first EVENT_STREAMS users
// the benchmark seeded, each with a `read` token of its own, so every stream is a different caller whose permission
// is checked at delivery); none filters, so each gets the event of every write (the write note is public). Three
// sides in each round, interleaved as the write case's: the write floor, the service without streams, the service
// with the streams open (opened before the run, closed after it). All three take the write case's load (autocannon,
// 50 connections over its 50 pages, the same bodies, BENCH_SECONDS), and all three read each answer's version off
// its tail, so the client does the same work on every side. Reported:
//   - writes/s with the streams open ÷ without (goal: EVENT_STREAMS_WRITE_GOAL), with the server's CPU time per
//     write on each side (steadier than the rate on shared cores; with streams, the server's thread and its writer
//     process, which writes the streams' sockets: src/modules/events/fan-out.ts), and with streams ÷ the floor;
//   - delivery: per write answered while the streams were open and per stream, the time from the moment the writer
//     got the write's answer to the moment that page version's event came on the stream (goal: p99 under
//     EVENT_DELIVERY_P99_GOAL_MS); also from the event's `occurred_at` (its transaction's start in the database),
//     and, where the database records commit times (the benchmark's PostgreSQL runs with track_commit_timestamp; PGlite
//     does not), from the change's commit, the issue's own measure (goal: the same p99);
//   - the server's resident memory with the streams open (its writer process's included): as they opened (before
//     the load), and at its peak under it.
// The readers live in a child process of their own (scripts/lib/bench-event-readers.ts says why).
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { ReadersReply, ReadersRequest } from './bench-event-readers.ts';
import { EVENT_DELIVERY_P99_GOAL_MS, EVENT_STREAMS, EVENT_STREAMS_WRITE_GOAL } from './bench-goals.ts';
import type { LoadContext, LoadRequest } from './bench-write-sides.ts';
import { insertTokens } from './bench-seed.ts';

/** A side of scripts/bench-http.ts's `measure` (its Side, as far as this case uses it). */
export type EventSide = {
  label: string;
  target: 'service' | 'floor';
  requests: () => Promise<LoadRequest[]>;
  during?: () => () => Promise<void>;
};
type SideResult = { requestsPerSecond: number; p99: number; failures: number };

export type EventsOptions = {
  baseUrl: string;
  /** The server's process id (its CPU time and resident memory are read from /proc). */
  pid: number;
  /**
   * A second server process on the same database (PostgreSQL), when there is one: a fourth side then holds the
   * streams there while the writes go to the first, the issue's "a change made through process A reaches a stream
   * held on process B".
   */
  second?: { baseUrl: string };
  /** Where the benchmark's seeding SQL goes (DATABASE_URL, or the embedded database's socket). */
  sql: pg.ClientConfig;
  /** The write case's 50 pages, its writer's headers (token, form type) and bodies. */
  writePaths: string[];
  headers: Record<string, string>;
  writeBody: () => string;
  /** bench-http.ts's `measure`, with the write floor running. */
  measure(sides: EventSide[]): Promise<SideResult[]>;
  report(label: string, text: string, verdict: 'ok' | 'FAIL' | 'report'): void;
};

/** How long, after a run, the streams wait for the events of the last writes answered before they are closed. */
const GRACE_MS = 5000;

/** Monotonic milliseconds, the clock of bench-event-readers.ts (CLOCK_MONOTONIC, shared by the machine's processes). */
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** CPU time (user + system) the process has used so far, milliseconds (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

function ownRssMegabytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The server's child processes: the change stream's writer process (src/modules/events/fan-out.ts), once forked. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter((child) => child.trim() !== '').map(Number));
  } catch {
    return [];
  }
}

/** The server's resident memory, its writer process's included. */
function rssMegabytes(pid: number): number {
  return ownRssMegabytes(pid) + childrenOf(pid).reduce((sum, child) => sum + ownRssMegabytes(child), 0);
}

/** The CPU time of the server's writer process (and any other child), milliseconds. */
function childrenCpuMs(pid: number): number {
  return childrenOf(pid).reduce((sum, child) => sum + (cpuMs(child) || 0), 0);
}

function percentile(values: Float64Array, fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = values.slice().sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/**
 * A `read` token for each of the first `count` users, inserted as src/modules/auth/tokens.ts stores them (the
 * SHA-256 of the secret, in hex): the admin command line makes one token per run of it, too slow for 200.
 */
async function readerTokens(sql: pg.ClientConfig, count: number): Promise<string[]> {
  const client = new pg.Client(sql);
  await client.connect();
  try {
    const users = (await client.query<{ id: number }>('select id from users order by id limit $1', [count])).rows.map((row) => row.id);
    if (users.length < count) throw new Error(`the events case needs ${count} users, the benchmark seeded ${users.length}`);
    return await insertTokens(client, users, 'read', 'bench events reader');
  } finally {
    await client.end();
  }
}

/**
 * The commit time of each change after `after` (change id, epoch milliseconds: two numbers each), when the database
 * records commit times (track_commit_timestamp: the benchmark's PostgreSQL does, scripts/bench-http.ts), else
 * undefined. Read once the writes are answered: every change of theirs has committed.
 */
async function commitTimes(sql: pg.ClientConfig, after: number): Promise<Float64Array | undefined> {
  const client = new pg.Client(sql);
  await client.connect();
  try {
    const setting = await client.query<{ on: boolean }>("select current_setting('track_commit_timestamp', true) = 'on' as on");
    if (!setting.rows[0]?.on) return undefined;
    const rows = await client.query<{ id: string; ms: number }>(
      'select id::text as id, extract(epoch from pg_xact_commit_timestamp(xmin))::float8 * 1000 as ms from changes where id > $1',
      [after],
    );
    return Float64Array.from(rows.rows.flatMap((row) => [Number(row.id), row.ms]));
  } finally {
    await client.end();
  }
}

async function lastChangeId(sql: pg.ClientConfig): Promise<number> {
  const client = new pg.Client(sql);
  await client.connect();
  try {
    return Number((await client.query<{ id: string }>('select coalesce(max(id), 0)::text as id from changes')).rows[0]!.id);
  } finally {
    await client.end();
  }
}

/** The readers' process (bench-event-readers.ts), driven over IPC. */
function startReaders() {
  const child = fork(path.join(import.meta.dirname, 'bench-event-readers.ts'), [], {
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = (request: ReadersRequest, timeoutMs: number) =>
    new Promise<ReadersReply>((resolve, reject) => {
      const onExit = (code: number | null) => {
        clearTimeout(timer);
        reject(new Error(`the events readers exited (code ${code})`));
      };
      const timer = setTimeout(() => {
        child.off('exit', onExit);
        reject(new Error(`the events readers did not answer "${request.type}" within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      child.once('exit', onExit);
      child.once('message', (reply: ReadersReply) => {
        clearTimeout(timer);
        child.off('exit', onExit);
        if (reply.type === 'error') reject(new Error(`the events readers: ${reply.message}`));
        else resolve(reply);
      });
      child.send(request);
    });
  return {
    pid: child.pid!,
    open: (baseUrl: string, tokens: string[]) => ask({ type: 'open', baseUrl, tokens }, 60_000),
    close: async (answers: Float64Array, commits: Float64Array | undefined) => {
      const reply = await ask({ type: 'close', answers, graceMs: GRACE_MS, ...(commits ? { commits } : {}) }, GRACE_MS + 60_000);
      if (reply.type !== 'closed') throw new Error(`the events readers answered ${reply.type} to close`);
      return reply;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The writes' answers while `recording`: (page id, version, answer time) three numbers each. */
class AnswerLog {
  recording = false;
  unreadable = 0;
  #answers: number[] = [];

  start(): void {
    this.#answers = [];
    this.unreadable = 0;
    this.recording = true;
  }

  stop(): Float64Array {
    this.recording = false;
    return Float64Array.from(this.#answers);
  }

  add(page: number, version: number, at: number): void {
    this.#answers.push(page, version, at);
  }
}

/**
 * The write case's load (one page per connection, each write new content), stamping each answer: every side
 * uses it, the floor's too (its canned answer has the same tail), so the client's work is the same on each.
 */
function writeLoad(options: EventsOptions, log: AnswerLog): LoadRequest[] {
  type Slot = { path?: string; page?: number };
  let next = 0;
  return [{
    method: 'PUT', path: options.writePaths[0]!, headers: options.headers, slot: {},
    setupRequest: (request: LoadRequest, context: LoadContext) => {
      const slot = request.slot as Slot;
      if (slot.path === undefined) {
        slot.path = options.writePaths[next++ % options.writePaths.length]!;
        slot.page = Number(slot.path.slice(slot.path.lastIndexOf('/') + 1));
      }
      context.slot = slot;
      return { ...request, path: slot.path, body: options.writeBody() };
    },
    onResponse: (status: number, body: string, context: LoadContext) => {
      const at = now();
      if (status !== 200 || !log.recording) return;
      // the page's JSON ends with its version (page.presenter.ts): read the tail, not the whole answer
      const tail = /"version":(\d+),"model":"page"\}$/.exec(body.slice(-48));
      if (tail) log.add((context.slot as Slot).page!, Number(tail[1]), at);
      else log.unreadable += 1;
    },
  }];
}

const perSecond = (value: number) => `${Math.round(value).toString().padStart(6)} req/s`;
const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`;

/** What the sides with streams collect for the report. */
type Deliveries = { fromAnswer: Float64Array[]; fromOccurred: Float64Array[]; fromCommit: Float64Array[]; missing: number; missingWrites: number; ended: number };
const noDeliveries = (): Deliveries => ({ fromAnswer: [], fromOccurred: [], fromCommit: [], missing: 0, missingWrites: 0, ended: 0 });

export async function benchEvents(options: EventsOptions): Promise<void> {
  const tokens = await readerTokens(options.sql, EVENT_STREAMS);
  const readers = startReaders();
  try {
    const log = new AnswerLog();
    const spent = { withoutCpu: 0, withoutWrites: 0, withCpu: 0, withWrites: 0, writerCpu: 0, readersCpu: 0, seconds: 0 };
    const here = noDeliveries();
    const there = noDeliveries();
    const trouble = { unreadable: 0 };
    let rssOpen = 0;
    let rssPeak = 0;
    /** Closes the readers' streams and keeps what they saw of the writes answered meanwhile. */
    const collect = async (answers: Float64Array, firstChange: Promise<number>, into: Deliveries) => {
      trouble.unreadable += log.unreadable;
      const closed = await readers.close(answers, await commitTimes(options.sql, await firstChange));
      into.fromAnswer.push(closed.fromAnswer);
      into.fromOccurred.push(closed.fromOccurred);
      into.fromCommit.push(closed.fromCommit);
      into.missing += closed.missing;
      into.missingWrites += closed.missingWrites;
      into.ended += closed.ended;
    };
    const sides: EventSide[] = [
      { label: 'floor, 50 pages', target: 'floor', requests: async () => writeLoad(options, log) },
      {
        label: 'service, 50 pages, no streams', target: 'service', requests: async () => writeLoad(options, log),
        during: () => {
          const cpu = cpuMs(options.pid);
          log.start();
          return async () => {
            spent.withoutWrites += log.stop().length / 3;
            spent.withoutCpu += cpuMs(options.pid) - cpu;
          };
        },
      },
      {
        label: `service, 50 pages, ${EVENT_STREAMS} streams open`, target: 'service',
        requests: async () => {
          await readers.open(options.baseUrl, tokens);
          rssOpen = Math.max(rssOpen, rssMegabytes(options.pid));
          return writeLoad(options, log);
        },
        during: () => {
          const cpu = cpuMs(options.pid);
          const writerCpu = childrenCpuMs(options.pid);
          const readersCpu = cpuMs(readers.pid);
          const started = now();
          const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMegabytes(options.pid))), 100);
          const firstChange = lastChangeId(options.sql);
          log.start();
          return async () => {
            const answers = log.stop();
            clearInterval(sampler);
            spent.withWrites += answers.length / 3;
            spent.withCpu += cpuMs(options.pid) - cpu;
            spent.writerCpu += childrenCpuMs(options.pid) - writerCpu;
            spent.readersCpu += cpuMs(readers.pid) - readersCpu;
            spent.seconds += (now() - started) / 1000;
            await collect(answers, firstChange, here);
          };
        },
      },
    ];
    const second = options.second;
    if (second) {
      sides.push({
        label: `service, 50 pages, ${EVENT_STREAMS} streams open on a second process`, target: 'service',
        requests: async () => {
          await readers.open(second.baseUrl, tokens);
          return writeLoad(options, log);
        },
        during: () => {
          const firstChange = lastChangeId(options.sql);
          log.start();
          return async () => collect(log.stop(), firstChange, there);
        },
      });
    }
    const [floor, without, withStreams, onSecond] = await options.measure(sides);
    const joined = (parts: Float64Array[]) => {
      const all = new Float64Array(parts.reduce((sum, part) => sum + part.length, 0));
      parts.reduce((offset, part) => (all.set(part, offset), offset + part.length), 0);
      return all;
    };
    const delays = joined(here.fromAnswer);
    const sinceOccurred = joined(here.fromOccurred);
    const sinceCommit = joined(here.fromCommit);

    const ratio = withStreams!.requestsPerSecond / without!.requestsPerSecond;
    const failed = without!.failures + withStreams!.failures;
    const cpuPerWrite = (cpu: number, writes: number) => ms(cpu / writes);
    options.report(`events: writes, ${EVENT_STREAMS} streams open / none`,
      `with ${perSecond(withStreams!.requestsPerSecond)}  without ${perSecond(without!.requestsPerSecond)}  ratio ${ratio.toFixed(2)}  goal >= ${EVENT_STREAMS_WRITE_GOAL}  ` +
        `(server CPU per write: with ${cpuPerWrite(spent.withCpu, spent.withWrites)} + its writer process ${cpuPerWrite(spent.writerCpu, spent.withWrites)}, without ${cpuPerWrite(spent.withoutCpu, spent.withoutWrites)}; ` +
        `the readers' process: ${((100 * spent.readersCpu) / 1000 / spent.seconds).toFixed(0)} % of a core)${failed ? `  (${failed} failed requests)` : ''}`,
      ratio >= EVENT_STREAMS_WRITE_GOAL && failed === 0 ? 'ok' : 'FAIL');
    options.report(`events: page write, ${EVENT_STREAMS} streams open, / floor`,
      `service ${perSecond(withStreams!.requestsPerSecond)}  floor ${perSecond(floor!.requestsPerSecond)}  ratio ${(withStreams!.requestsPerSecond / floor!.requestsPerSecond).toFixed(2)}  ` +
        `(no streams: ${(without!.requestsPerSecond / floor!.requestsPerSecond).toFixed(2)}; no goal)${floor!.failures ? `  (floor: ${floor!.failures} failed requests)` : ''}`,
      'report');
    const p99 = percentile(delays, 0.99);
    const wrong = here.missing + here.ended + trouble.unreadable;
    options.report('events: delivery, write answer to stream',
      `p50 ${ms(percentile(delays, 0.5)).padStart(8)}  p99 ${ms(p99).padStart(8)}  max ${ms(percentile(delays, 1))}  goal p99 < ${EVENT_DELIVERY_P99_GOAL_MS} ms  ` +
        `(${delays.length} deliveries: ${spent.withWrites} writes x ${EVENT_STREAMS} streams; ` +
        `${(delays.filter((delay) => delay < 0).length / Math.max(1, delays.length) * 100).toFixed(1)} % came before the writer had its answer` +
        `${here.missing ? `; ${here.missing} never came (the events of ${here.missingWrites} writes)` : ''}${here.ended ? `; ${here.ended} streams ended by the server` : ''}` +
        `${trouble.unreadable ? `; ${trouble.unreadable} answers without a version` : ''})`,
      delays.length > 0 && p99 < EVENT_DELIVERY_P99_GOAL_MS && wrong === 0 ? 'ok' : 'FAIL');
    options.report('events: delivery, occurred_at to stream',
      `p50 ${ms(percentile(sinceOccurred, 0.5)).padStart(8)}  p99 ${ms(percentile(sinceOccurred, 0.99)).padStart(8)}  ` +
        `(from the change's time in the database, its transaction's start, wall clock; no goal)`,
      'report');
    // the issue's own measure, where the database records commit times (PostgreSQL here; PGlite does not)
    if (sinceCommit.length > 0) {
      const commitP99 = percentile(sinceCommit, 0.99);
      options.report('events: delivery, commit to stream',
        `p50 ${ms(percentile(sinceCommit, 0.5)).padStart(8)}  p99 ${ms(commitP99).padStart(8)}  max ${ms(percentile(sinceCommit, 1))}  goal p99 < ${EVENT_DELIVERY_P99_GOAL_MS} ms  ` +
          `(${sinceCommit.length} deliveries, from pg_xact_commit_timestamp, wall clock, 1 ms resolution)`,
        commitP99 < EVENT_DELIVERY_P99_GOAL_MS ? 'ok' : 'FAIL');
    }
    if (onSecond) {
      // the streams on process B, the writes through process A: delivered when B hears of the change (the change feed)
      const acrossCommit = joined(there.fromCommit);
      const acrossAnswer = joined(there.fromAnswer);
      const acrossP99 = percentile(acrossCommit.length > 0 ? acrossCommit : acrossAnswer, 0.99);
      const lost = there.missing + there.ended + onSecond.failures;
      options.report('events: delivery, streams on a second process',
        `${acrossCommit.length > 0 ? 'commit' : 'write answer'} to stream p50 ${ms(percentile(acrossCommit.length > 0 ? acrossCommit : acrossAnswer, 0.5)).padStart(8)}  p99 ${ms(acrossP99).padStart(8)}  goal p99 < ${EVENT_DELIVERY_P99_GOAL_MS} ms  ` +
          `(writes through the first process, ${onSecond.requestsPerSecond.toFixed(0)} req/s; ${acrossAnswer.length} deliveries; write answer to stream p99 ${ms(percentile(acrossAnswer, 0.99))}` +
          `${there.missing ? `; ${there.missing} never came (the events of ${there.missingWrites} writes)` : ''}${there.ended ? `; ${there.ended} streams ended by the server` : ''}` +
          `${onSecond.failures ? `; ${onSecond.failures} failed requests` : ''})`,
        acrossAnswer.length > 0 && acrossP99 < EVENT_DELIVERY_P99_GOAL_MS && lost === 0 ? 'ok' : 'FAIL');
    }
    options.report(`events: RSS, ${EVENT_STREAMS} streams open`,
      `${rssOpen.toFixed(0).padStart(6)} MB as they opened, ${rssPeak.toFixed(0)} MB peak under the write load  (no goal of its own)`,
      'report');
  } finally {
    await readers.stop();
  }
}
