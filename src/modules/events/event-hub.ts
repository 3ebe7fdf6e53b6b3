// The change stream of one server process (GET /api/v1/events; the OpenAPI document describes it): the open streams,
// and one loop that sends them the change log's new rows. The loop wakes when this process answered a write, when
// the database announces a change made anywhere (the change feed: every transaction that appends to the log
// announces `c` as it commits, migration 0018), and every second besides, and passes at most every gap
// (passGapMs), so a pass under a write load carries many events; its statements run on the stream's own connections
// (STREAM_CONNECTION, database.ts), not behind the writers' in the pool. It moves the safe bound (safe-bound.ts),
// reads the changes up to it once with what they show and which of the listeners may read them now (permissions at
// delivery), and writes each listener the events it may see. On PostgreSQL all the reading is one statement (the
// SQL function change_stream_pass: the watermark, the settle, the changes), so a pass waits once for this busy
// thread to take an answer, not two to eight times (docs/speed.md); embedded, two. The writes go through the writer
// process that holds the streams' sockets (EVENTS_FAN_OUT=process, fan-out.ts), one message a pass. A stream that
// resumes from an older id first catches up alone (in pages of BATCH rows), then joins the loop. Every stream gets a
// heartbeat comment each EVENTS_HEARTBEAT_SECONDS, when its token is also checked: a token deleted or expired ends it
// (a deletion announced by the feed ends it at once).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeEvent } from '../../../generated/client/types.gen.ts';
import type { ChangeFeed } from '../../db/change-feed.ts';
import { STREAM_CONNECTION } from '../../db/database.ts';
import { tokenOf } from '../../cache/tags.ts';
import type { Logger } from '../../http/logger.ts';
import type { Urls } from '../../http/urls.ts';
import type { ChangeRow } from './events.repository.ts';
import { eventContextOf, eventTypeOf, idsOf, mayRead, presentEvent, type EventContext, type EventType } from './event-presenter.ts';
import { changesFor, changesWithContext, eventContext, liveTokens, readWatermark, streamPass, type PassRead, type Watermark } from './event-stream.repository.ts';
import { SafeBound } from './safe-bound.ts';
import { Bytes, StreamOut } from './stream-out.ts';
import { FanOut } from './fan-out.ts';
import { matches, storedTypes, type Listener } from './event-filter.ts';

/** `begun`: its first lines are written (a heartbeat before them would come ahead of the `retry` line). */
type Stream = Listener & { out: StreamOut; after: number; live: boolean; begun: boolean };

const HEARTBEAT = new Bytes(Buffer.from(': heartbeat\n\n'));

/** Rows read per statement, live and catching up. */
const BATCH = 500;
/** How often the loop runs with nothing announced (changes of a tool whose feed is down, tokens that expired). */
const POLL_MS = 1000;
/**
 * The least time between two passes of the loop, after the number of streams open. A pass costs a reading of the
 * database and, when the bound moved, one more statement and one write to every open stream (~17 µs of CPU each,
 * most of it the socket's write, in the writer process: docs/speed.md), whether it carries one event or fifty; and
 * the clients as many reads. So the gap grows with the streams, PASS_GAP_PER_STREAM_MS each, between
 * PASS_GAP_MIN_MS (with few streams, an event goes out sooner; the readings still cost the database) and
 * PASS_GAP_MAX_MS. An event waits at most a gap for the next pass; a pass then carries every change committed
 * meanwhile. 0.4 ms (80 ms with 200 streams) keeps delivery p99 from the commit under 200 ms in `make bench`, where
 * 0.6 ms (120 ms) did not once the server's thread wrote the sockets (docs/speed.md, 2026-11-29).
 */
const PASS_GAP_MIN_MS = 50;
const PASS_GAP_PER_STREAM_MS = 0.4;
const PASS_GAP_MAX_MS = 150;
const passGapMs = (streams: number): number => Math.min(PASS_GAP_MAX_MS, Math.max(PASS_GAP_MIN_MS, streams * PASS_GAP_PER_STREAM_MS));
/** How soon the loop reads again while the bound waits for transactions to end (no sooner than the gap). */
const PENDING_MS = 3;
/**
 * How long a pass waits for the appenders its first reading saw to end, and how often it reads the watermark again
 * meanwhile: they are most often a few milliseconds from their commit, and without the wait the changes they held
 * back went out a whole gap later (delivery p99 with 200 streams, gap 100 ms: 181 ms without, 99 ms with). On
 * PostgreSQL the wait runs in the database, inside the pass's one statement (change_stream_pass, migration 0025).
 */
const SETTLE_MS = 20;
const SETTLE_STEP_MS = 3;
/** How long a request waits for the bound to reach the changes committed before it. */
const BOUND_WAIT_MS = 2000;
/** How soon the loop tries again after the database failed it. */
const RETRY_MS = 200;
/** A client that reads this much slower than events come is dropped; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * `embedded`: the database is the embedded one this process opened (its watermark needs no look at the locks);
 * `fanOut`: 'process' hands each stream's socket to the writer process (fan-out.ts), 'inline' writes them here.
 */
export type EventHubOptions = { heartbeatSeconds: number; streamsPerToken: number; embedded: boolean; fanOut: 'process' | 'inline' };

export function sseFrame(event: ChangeEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export class EventHub {
  readonly #em: EntityManager;
  readonly #urls: Urls;
  readonly #log: Logger;
  readonly #options: EventHubOptions;
  readonly #bound = new SafeBound();
  readonly #streams = new Set<Stream>();
  readonly #perToken = new Map<number, number>();
  /** Resolved when the bound reaches at least the id they wait for. */
  #waiters: { id: number; resolve: () => void }[] = [];
  #running: Promise<void> | undefined;
  #again = false;
  /** When the last pass began (performance.now()), and the pass already scheduled for the end of the gap. */
  #lastPass = Number.NEGATIVE_INFINITY;
  #scheduled: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #fanOut: FanOut | undefined;

  constructor(em: EntityManager, changes: ChangeFeed, urls: Urls, log: Logger, options: EventHubOptions) {
    this.#em = em;
    this.#urls = urls;
    this.#log = log;
    this.#options = options;
    this.#fanOut = options.fanOut === 'process' ? new FanOut(log, MAX_BUFFERED_BYTES) : undefined;
    changes.subscribe((change) => {
      if (this.#streams.size === 0 && this.#waiters.length === 0) return;
      this.poke();
      if ('tags' in change && change.tags.some((tag) => tokenOf(tag) !== undefined)) void this.#checkTokens();
    });
    const poll = setInterval(() => {
      if (this.#streams.size > 0) this.poke();
    }, POLL_MS);
    const heartbeat = setInterval(() => this.#heartbeat(), options.heartbeatSeconds * 1000);
    poll.unref();
    heartbeat.unref();
    this.#timers.push(poll, heartbeat);
  }

  /** How many streams are open in this process. */
  get open(): number {
    return this.#streams.size;
  }

  /** How many of them the writer process writes (EVENTS_FAN_OUT=process: fan-out.ts). */
  get handedOver(): number {
    return this.#fanOut?.held ?? 0;
  }

  /** The writer process's id, while it runs. */
  get writerPid(): number | undefined {
    return this.#fanOut?.pid;
  }


  /**
   * The highest id below which no change can still appear, for a request that arrived now: every change committed
   * before the call is at or below it. A transaction left open somewhere on the database holds the bound back: after
   * BOUND_WAIT_MS the bound as it is is answered (lower: the events come later, none is lost), or undefined when this
   * process has none yet; `seen` is the last id handed out when the call began.
   */
  async safeBound(): Promise<{ bound: number | undefined; seen: number }> {
    const seen = (await this.#watermark()).last;
    if (this.#bound.value === undefined || this.#bound.value < seen) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push({ id: seen, resolve });
        timer = setTimeout(resolve, BOUND_WAIT_MS);
        this.poke();
      });
      clearTimeout(timer);
    }
    return { bound: this.#bound.value, seen };
  }

  /**
   * Opens a stream for the listener, starting after `since` (undefined: now): what the answer sends (stream-out.ts), or
   * undefined when the token already holds as many streams as it may here. `first` is written before any event (the
   * `retry` line, a `truncated` event).
   */
  async openStream(listener: Listener, since: number | undefined, first: string): Promise<StreamOut | undefined> {
    // the token's place is taken before anything is awaited, so streams opened at the same moment are counted too
    const held = this.#perToken.get(listener.tokenId) ?? 0;
    if (held >= this.#options.streamsPerToken) return undefined;
    this.#perToken.set(listener.tokenId, held + 1);
    const out = new StreamOut(this.#fanOut);
    const stream: Stream = { ...listener, out, after: 0, live: false, begun: false };
    out.body.on('close', () => this.#remove(stream));
    this.#streams.add(stream);
    try {
      if (since !== undefined) stream.after = since;
      else {
        const { bound, seen } = await this.safeBound();
        stream.after = bound ?? seen;
      }
    } catch (error) {
      out.body.destroy();
      throw error;
    }
    out.write(new Bytes(Buffer.from(first)));
    stream.begun = true;
    void this.#catchUp(stream).catch((error: unknown) => {
      this.#log.warn({ err: error }, 'a change stream could not catch up; it is closed (the client resumes)');
      out.end();
    });
    return out;
  }

  /** Wakes the loop: something may have been written. A pass begins now, or once the gap after the last one is over. */
  poke(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    const wait = this.#lastPass + passGapMs(this.#streams.size) - performance.now();
    if (wait > 0) {
      // the pass begins at the first poke after the gap, or at the gap's end when none comes: under a load that
      // keeps the event loop busy, a timer fires late, and writes answered (pokes) come all along
      if (!this.#scheduled) {
        this.#scheduled = setTimeout(() => {
          this.#scheduled = undefined;
          this.poke();
        }, wait);
        this.#scheduled.unref();
      }
      return;
    }
    clearTimeout(this.#scheduled);
    this.#scheduled = undefined;
    this.#lastPass = performance.now();
    let failed = false;
    this.#running = this.#run()
      .catch((error: unknown) => {
        failed = true;
        this.#log.warn({ err: error }, 'the change stream could not read the change log; it tries again');
      })
      .finally(() => {
        this.#running = undefined;
        const again = this.#again && !failed;
        this.#again = false;
        if (again) this.poke();
        // a bound still waiting for transactions to end is read again soon; after a failure, a little later
        else if (this.#waiters.length > 0 || (this.#bound.pending && this.#streams.size > 0)) setTimeout(() => this.poke(), failed ? RETRY_MS : PENDING_MS).unref();
      });
  }

  /** Ends every stream (the server is stopping: clients resume elsewhere with Last-Event-ID). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    clearTimeout(this.#scheduled);
    for (const stream of this.#streams) stream.out.end();
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters = [];
    await this.#running;
    await this.#fanOut?.close();
  }

  #remove(stream: Stream): void {
    if (!this.#streams.delete(stream)) return;
    const left = (this.#perToken.get(stream.tokenId) ?? 1) - 1;
    if (left === 0) this.#perToken.delete(stream.tokenId);
    else this.#perToken.set(stream.tokenId, left);
  }

  /** Where the change log stands, read on the stream's connection (the embedded database: its last id alone). */
  #watermark(): Promise<Watermark> {
    return readWatermark(this.#em.fork(), STREAM_CONNECTION, this.#options.embedded);
  }

  async #run(): Promise<void> {
    const live = [...this.#streams].filter((stream) => stream.live);
    if (!this.#options.embedded && this.#bound.value !== undefined && live.length > 0) return this.#passInOne(this.#bound.value, live);
    const before = this.#bound.value;
    this.#bound.observe(await this.#watermark());
    // the appenders this reading saw are near their commit: a few readings of the watermark alone see them end, and
    // the pass carries every change handed out before it began, not leaving those to the pass after the next gap
    const seen = this.#bound.seen;
    for (const settle = performance.now() + SETTLE_MS; seen !== undefined && (this.#bound.value ?? -1) < seen && performance.now() < settle && !this.#closed; ) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_STEP_MS));
      this.#bound.observe(await this.#watermark());
    }
    const bound = this.#bound.value;
    if (bound === undefined) return;
    // from the previous bound, or from where the live streams are when this is the first one
    let from = before ?? bound;
    for (const stream of this.#streams) if (stream.live && stream.after < from) from = stream.after;
    if (bound > from) await this.#deliver(from, bound);
    this.#resolveWaiters(bound);
  }

  /** Resolves the requests waiting for the bound to reach what it has now reached. */
  #resolveWaiters(bound: number): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) {
      if (waiter.id <= bound) waiter.resolve();
      else this.#waiters.push(waiter);
    }
  }

  /**
   * A pass on PostgreSQL in one statement (streamPass): the readings and the settle run in the database, and the
   * changes come with them, so the pass waits for one answer on this process's busy thread, not for two to eight.
   */
  async #passInOne(before: number, live: readonly Stream[]): Promise<void> {
    let from = before;
    for (const stream of live) if (stream.after < from) from = stream.after;
    const users = [...new Set(live.map((stream) => stream.userId))];
    const read = await streamPass(this.#em.fork(), { after: from, limit: BATCH, users, settleMs: SETTLE_MS, stepMs: SETTLE_STEP_MS }, STREAM_CONNECTION);
    this.#bound.observe(read.first);
    this.#bound.observe(read.final);
    const bound = this.#bound.value!;
    if (bound > from) await this.#deliver(from, bound, { read, live });
    this.#resolveWaiters(bound);
  }

  /** Sends the changes in (after, upTo] to the live streams, in pages of BATCH. */
  async #deliver(after: number, upTo: number, first?: { read: PassRead; live: readonly Stream[] }): Promise<void> {
    let from = after;
    // the first page may come read already (streamPass), for the streams live then (its context is for their users),
    // up to a last id beyond the bound: cut to the bound
    let page = first;
    while (from < upTo) {
      const live = page ? page.live.filter((stream) => stream.live && this.#streams.has(stream)) : [...this.#streams].filter((stream) => stream.live);
      if (live.length === 0) return;
      const read = page?.read ?? await changesWithContext(this.#em.fork(), { after: from, upTo, limit: BATCH }, [...new Set(live.map((stream) => stream.userId))], STREAM_CONNECTION);
      page = undefined;
      const changes = read.changes.filter((change) => Number(change.id) <= upTo);
      if (changes.length > 0) {
        const context = eventContextOf(read.context);
        // each event is presented and framed once, and each set of events encoded once, whatever the streams
        const frames = new Map<ChangeRow, string>();
        const chunks = new Map<string, Bytes>();
        for (const stream of live) this.#send(stream, changes, context, upTo, frames, chunks);
      }
      from = read.changes.length < BATCH ? upTo : Math.min(upTo, Number(read.changes[read.changes.length - 1]!.id));
      for (const stream of live) if (stream.live && stream.after < from) stream.after = from;
    }
  }

  /** A stream that starts before the bound reads what it missed alone, then joins the live streams. */
  async #catchUp(stream: Stream): Promise<void> {
    if (this.#closed) return;
    const types = storedTypes(stream.filter.types);
    // a process that has no bound yet finds one first (a stream resumed right after a restart reads what it missed)
    if (this.#bound.value === undefined) await this.safeBound();
    for (;;) {
      // still none (a transaction held open on the database): live now; the first bound's delivery starts here
      const bound = this.#bound.value ?? stream.after;
      if (stream.after >= bound) {
        stream.live = true;
        return;
      }
      const changes = await changesFor(this.#em.fork(), { after: stream.after, upTo: bound, limit: BATCH }, { teamId: stream.filter.teamId, noteId: stream.filter.noteId, types }, STREAM_CONNECTION);
      if (!this.#streams.has(stream)) return;
      if (changes.length > 0) this.#send(stream, changes, await this.#context(changes, [stream.userId]), bound);
      stream.after = changes.length < BATCH ? bound : Number(changes[changes.length - 1]!.id);
    }
  }

  async #context(changes: readonly ChangeRow[], users: readonly number[]): Promise<EventContext> {
    return eventContextOf(await eventContext(this.#em.fork(), { ...idsOf(changes), users: [...new Set(users)] }, STREAM_CONNECTION));
  }

  /**
   * Writes the stream the events of `changes` it may see. `framed` holds each event's frame, and `chunks` the bytes
   * of each set of events already written to a stream of this pass: streams that see the same events (unfiltered
   * streams of callers who may read the same notes: most of them) share one encoded chunk, framed once.
   */
  #send(stream: Stream, changes: readonly ChangeRow[], context: EventContext, upTo: number, framed = new Map<ChangeRow, string>(), chunks = new Map<string, Bytes>()): void {
    const seen: ChangeRow[] = [];
    for (const change of changes) {
      if (Number(change.id) <= stream.after || Number(change.id) > upTo) continue;
      const type = eventTypeOf(change);
      if (type === undefined || !matches(stream.filter, change, type) || !mayRead(change, stream.userId, context)) continue;
      seen.push(change);
    }
    if (seen.length === 0) return;
    const key = seen.map((change) => change.id).join(',');
    let chunk = chunks.get(key);
    if (chunk === undefined) {
      let frames = '';
      for (const change of seen) {
        let frame = framed.get(change);
        if (frame === undefined) {
          const event = presentEvent(change, context, this.#urls);
          frame = event ? sseFrame(event) : '';
          framed.set(change, frame);
        }
        frames += frame;
      }
      chunk = new Bytes(Buffer.from(frames));
      chunks.set(key, chunk);
    }
    if (chunk.plain.length === 0) return;
    if (stream.out.buffered > MAX_BUFFERED_BYTES) {
      stream.out.end();
      return;
    }
    stream.out.write(chunk);
  }

  #heartbeat(): void {
    for (const stream of this.#streams) if (stream.begun) stream.out.write(HEARTBEAT);
    void this.#checkTokens();
  }

  /** Ends the streams whose token was deleted or has expired. */
  async #checkTokens(): Promise<void> {
    if (this.#streams.size === 0) return;
    const streams = [...this.#streams];
    try {
      const live = await liveTokens(this.#em.fork(), [...new Set(streams.map((stream) => stream.tokenId))], STREAM_CONNECTION);
      for (const stream of streams) if (!live.has(stream.tokenId)) stream.out.end();
    } catch (error) {
      this.#log.warn({ err: error }, 'the change stream could not check its tokens; it tries again at the next heartbeat');
    }
  }
}
