// The readers of the `events` case of `make bench` (scripts/lib/bench-events.ts): one child process that holds every
// open change stream (GET /api/v1/events with `Accept: text/event-stream`), one per token, and notes when each page
// version's event reaches each stream. It is its own process so that reading 200 streams does not share an event
// loop with the writers' client (autocannon in the parent): a busy loop there would stamp the write answers late
// (shortening the measured delay) and here it would stamp the events late. It reads cheaply: raw sockets, no HTTP
// client (openOne says why), per chunk one clock reading, then the `"page":{"id":N,"version":V}` of each frame found by string search, no JSON parsing, once
// for a text that every stream receives alike.
// Times are CLOCK_MONOTONIC milliseconds (process.hrtime), the same clock in every process of the machine, so the
// parent's answer times and these arrival times compare directly.
// Driven over IPC (fork with serialization 'advanced', for the typed arrays):
//   - { type: 'open', baseUrl, tokens }: opens one stream per token, waits until each answered 200 with its first
//     line (`retry: 2000`: the server then holds it as a live stream), replies { type: 'opened', streams }.
//   - { type: 'close', answers, graceMs }: `answers` are the writes answered while the streams were open (page id,
//     version, answer time); waits (at most graceMs) until each has reached every stream, closes the streams and
//     replies with one delay per delivery (write x stream): from the write's answer, and from the event's
//     `occurred_at` (the change's time in the database, wall clock), from its commit when `commits` names the
//     commit time of each change (PostgreSQL with track_commit_timestamp), and what went wrong.
// Exits when its parent goes away.
import net from 'node:net';

export type ReadersRequest =
  | { type: 'open'; baseUrl: string; tokens: string[] }
  | { type: 'close'; answers: Float64Array; graceMs: number; commits?: Float64Array };
export type ReadersReply =
  | { type: 'opened'; streams: number }
  | {
      type: 'closed';
      /** Per delivery, milliseconds from the write's answer to the event at the stream (negative: it came first). */
      fromAnswer: Float64Array;
      /** Per delivery, milliseconds from the event's occurred_at to its arrival (wall clock, 1 ms resolution). */
      fromOccurred: Float64Array;
      /**
       * Per delivery, milliseconds from the change's commit to its arrival (wall clock), when `close` was given the
       * commit times (change id, epoch milliseconds, two numbers each: PostgreSQL's track_commit_timestamp).
       */
      fromCommit: Float64Array;
      /** Deliveries that had not come within graceMs, on streams still open, and the writes they were of. */
      missing: number;
      missingWrites: number;
      /** Streams that ended before they were closed here (the server drops a reader that falls behind). */
      ended: number;
    }
  | { type: 'error'; message: string };

/** Monotonic milliseconds, comparable across the processes of one machine. */
const now = () => Number(process.hrtime.bigint()) / 1e6;
/** Wall clock minus monotonic clock, to put arrivals on occurred_at's clock. */
const wallOffset = Date.now() - now();

const PAGE = '"page":{"id":';
const VERSION = ',"version":';
const OCCURRED = '"occurred_at":"';
const FRAME_ID = 'id: ';

type Stream = { socket: net.Socket; tail: string; ended: boolean };
let streams: Stream[] = [];
/** Per page version (`id:version`): its arrival time at each stream (NaN: not yet). */
let arrivals = new Map<string, Float64Array>();
/** Per page version: its occurred_at, epoch milliseconds. */
let occurred = new Map<string, number>();
/** Per page version: the id of its change (the frame's `id:` line). */
let changeIds = new Map<string, number>();
let closing = false;

const send = (reply: ReadersReply) => process.send?.(reply);

/** Reads the digits at `from`; NaN when there are none. */
function digitsAt(text: string, from: number): { value: number; end: number } {
  let end = from;
  while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end += 1;
  return { value: end > from ? Number(text.slice(from, end)) : Number.NaN, end };
}

/**
 * The last text read and the arrival rows of its page versions: the server sends every stream the same bytes in a
 * pass, so the 199 streams after the first find them here rather than searching the text again.
 */
let lastText = '';
let lastRows: Float64Array[] = [];

/** Notes the page versions in `text` (whole frames) as arrived at stream `index` at `at`. */
function record(text: string, index: number, at: number): void {
  if (text !== lastText) {
    lastText = text;
    lastRows = rowsOf(text);
  }
  for (const times of lastRows) if (Number.isNaN(times[index]!)) times[index] = at;
}

/** The arrival rows of the page versions in `text`, each made (with its occurred_at) when first seen. */
function rowsOf(text: string): Float64Array[] {
  const rows: Float64Array[] = [];
  for (let found = text.indexOf(PAGE); found >= 0; found = text.indexOf(PAGE, found + PAGE.length)) {
    const id = digitsAt(text, found + PAGE.length);
    if (Number.isNaN(id.value) || !text.startsWith(VERSION, id.end)) continue; // a page event without a version
    const version = digitsAt(text, id.end + VERSION.length);
    if (Number.isNaN(version.value)) continue;
    const key = `${id.value}:${version.value}`;
    let times = arrivals.get(key);
    if (!times) {
      times = new Float64Array(streams.length).fill(Number.NaN);
      arrivals.set(key, times);
      const stamp = text.lastIndexOf(OCCURRED, found);
      if (stamp >= 0) occurred.set(key, Date.parse(text.slice(stamp + OCCURRED.length, text.indexOf('"', stamp + OCCURRED.length))));
      // the frame's first line: `id: <change id>` (the JSON after it has no "id: ", only "id":)
      const frame = text.lastIndexOf(FRAME_ID, found);
      if (frame >= 0) changeIds.set(key, digitsAt(text, frame + FRAME_ID.length).value);
    }
    rows.push(times);
  }
  return rows;
}

/**
 * Opens a stream on a socket of its own and reads it raw: an HTTP client would parse every chunk of 200 streams a
 * pass, CPU that the benchmark's readers take from the same 2 cores as the server and its database (a real client
 * has a machine of its own). The answer's head is read once (its status must be 200); after it, the chunked body's
 * size lines sit between whole frames (a pass's events are one chunk), where the frames' search does not look.
 * Latin-1: one byte one character, the cheapest decoding; what is searched is ASCII.
 */
function openOne(baseUrl: string, token: string, index: number): Promise<Stream> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.setEncoding('latin1');
    const stream: Stream = { socket, tail: '', ended: false };
    let opened = false;
    let head = '';
    socket.once('error', (error) => (opened ? (stream.ended = true) : reject(error)));
    socket.once('connect', () => socket.write(`GET /api/v1/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`));
    socket.on('data', (chunk: string) => {
      const at = now();
      let text: string;
      if (!opened) {
        head += chunk;
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!head.startsWith('HTTP/1.1 200 ')) {
          // the whole answer, for the message (an error's body is small)
          setTimeout(() => {
            socket.destroy();
            reject(new Error(`GET /api/v1/events: ${head.slice(0, 600)}`));
          }, 200);
          return;
        }
        // the body is chunked: its first chunk begins with the `retry` line (the server then holds a live stream)
        const body = head.slice(end + 4);
        const retry = body.indexOf('retry:');
        if (retry < 0) return;
        if (!/^[0-9a-f]+\r\n$/.test(body.slice(0, retry))) return reject(new Error(`the stream began with ${JSON.stringify(body.slice(0, 80))}`));
        opened = true;
        resolve(stream);
        text = body.slice(retry);
      } else text = stream.tail + chunk;
      const cut = text.lastIndexOf('\n\n');
      if (cut < 0) {
        stream.tail = text;
        return;
      }
      stream.tail = text.slice(cut + 2);
      record(text.slice(0, cut), index, at);
    });
    socket.once('close', () => {
      if (!closing) stream.ended = true;
    });
  });
}

async function open(baseUrl: string, tokens: string[]): Promise<void> {
  closing = false;
  lastText = '';
  lastRows = [];
  arrivals = new Map();
  occurred = new Map();
  changeIds = new Map();
  streams = new Array<Stream>(tokens.length);
  // 20 at a time: 200 clients connecting at the very same moment is not what is measured
  const pending: Promise<Stream>[] = [];
  try {
    for (let start = 0; start < tokens.length; start += 20) {
      const batch = tokens.slice(start, start + 20).map((token, offset) => openOne(baseUrl, token, start + offset));
      pending.push(...batch);
      for (const [offset, stream] of (await Promise.all(batch)).entries()) streams[start + offset] = stream;
    }
  } catch (error) {
    closing = true;
    for (const stream of await Promise.allSettled(pending)) if (stream.status === 'fulfilled') stream.value.socket.destroy();
    streams = [];
    throw error;
  }
  send({ type: 'opened', streams: streams.length });
}

async function close(answers: Float64Array, graceMs: number, commits: Float64Array | undefined): Promise<void> {
  const committed = new Map<number, number>();
  for (let at = 0; commits !== undefined && at < commits.length; at += 2) committed.set(commits[at]!, commits[at + 1]!);
  const keys: string[] = [];
  for (let at = 0; at < answers.length; at += 3) keys.push(`${answers[at]}:${answers[at + 1]}`);
  const complete = (key: string) => {
    const times = arrivals.get(key);
    return times !== undefined && streams.every((stream, index) => stream.ended || !Number.isNaN(times[index]!));
  };
  for (const deadline = now() + graceMs; now() < deadline && !keys.every(complete); ) await new Promise((resolve) => setTimeout(resolve, 20));
  closing = true;
  for (const stream of streams) stream.socket.destroy();
  const fromAnswer: number[] = [];
  const fromOccurred: number[] = [];
  const fromCommit: number[] = [];
  let missing = 0;
  let missingWrites = 0;
  for (const [at, key] of keys.entries()) {
    const before = missing;
    const answered = answers[3 * at + 2]!;
    const times = arrivals.get(key);
    const stamp = occurred.get(key);
    const change = changeIds.get(key);
    const commit = change === undefined ? undefined : committed.get(change);
    for (const [index, stream] of streams.entries()) {
      const arrived = times?.[index];
      if (arrived === undefined || Number.isNaN(arrived)) {
        if (!stream.ended) missing += 1;
        continue;
      }
      fromAnswer.push(arrived - answered);
      if (stamp !== undefined) fromOccurred.push(arrived + wallOffset - stamp);
      if (commit !== undefined) fromCommit.push(arrived + wallOffset - commit);
    }
    if (missing > before) missingWrites += 1;
  }
  const ended = streams.filter((stream) => stream.ended).length;
  lastText = '';
  lastRows = [];
  arrivals = new Map();
  occurred = new Map();
  changeIds = new Map();
  streams = [];
  send({ type: 'closed', fromAnswer: Float64Array.from(fromAnswer), fromOccurred: Float64Array.from(fromOccurred), fromCommit: Float64Array.from(fromCommit), missing, missingWrites, ended });
}

process.on('message', (message: ReadersRequest) => {
  const work = message.type === 'open' ? open(message.baseUrl, message.tokens) : close(message.answers, message.graceMs, message.commits);
  work.catch((error: unknown) => send({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) }));
});
process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
