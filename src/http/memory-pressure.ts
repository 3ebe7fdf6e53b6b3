// The heap's headroom, watched. The heap's ceiling (HEAP_LIMIT_MB, scripts/serve.sh) is sized at least twice what is
// alive at the worst moment measured (docs/operating.md, Memory): a service that stays small by running into its
// ceiling dies of it. What is alive is read after each full collection (a `gc` performance entry of the major kind:
// what a full collection left is the live heap, give or take what was allocated before the entry was delivered).
//
// When the live heap passes half the ceiling (the headroom is less than 2x), or the heap in use right now passes 90 %
// of it, memory is tight: work that can be refused is refused with 503 `server_busy` and `Retry-After` (a large
// answer, an import, an export, a new change stream: callers of `refuseWhenTight`) instead of being built into a heap
// that may not hold it. Small requests always go on: they are what keeps the service usable while it recovers.
import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { HttpError } from './errors.ts';

/** The live heap's share of the ceiling from which memory is tight (the headroom under 2x). */
export const TIGHT_LIVE_SHARE = 0.5;
/** The share of the ceiling in use right now from which memory is tight, whatever a collection would free. */
export const TIGHT_USED_SHARE = 0.9;
/** Seconds a refused caller is asked to wait: about the time a full collection and the answers in flight take. */
export const RETRY_AFTER_SECONDS = 5;

export type HeapReading = { usedBytes: number; limitBytes: number };

export type HeapState = {
  /** The heap's ceiling in bytes: HEAP_LIMIT_MB where the server was given it, else V8's heap size limit. */
  limitBytes: number;
  /** What the last full collection left alive, in bytes (0 before the first one). */
  liveBytes: number;
  /** The largest `liveBytes` seen since the start. */
  peakLiveBytes: number;
  /** Requests refused since the start because memory was tight. */
  refused: number;
};

function readHeap(): HeapReading {
  const stats = v8.getHeapStatistics();
  return { usedBytes: stats.used_heap_size, limitBytes: stats.heap_size_limit };
}

export class MemoryPressure {
  #live = 0;
  #peakLive = 0;
  #refused = 0;
  readonly #read: () => HeapReading;
  readonly #ceiling: number | undefined;
  #observer: PerformanceObserver | undefined;

  /**
   * `read`: the heap's reading (V8's statistics; a test passes its own). `ceilingBytes`: the old generation's ceiling
   * (HEAP_LIMIT_MB), where the heap runs out: V8's own limit adds the young generation to it. Without it, V8's limit.
   */
  constructor(read: () => HeapReading = readHeap, ceilingBytes?: number) {
    this.#read = read;
    this.#ceiling = ceilingBytes;
  }

  #limit(reading: HeapReading): number {
    return this.#ceiling === undefined ? reading.limitBytes : Math.min(this.#ceiling, reading.limitBytes);
  }

  /** Watches full collections for the live heap; idempotent. The observer does not keep the process alive. */
  start(): this {
    if (this.#observer) return this;
    this.#observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const detail = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail;
        if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) this.recordLive(this.#read().usedBytes);
      }
    });
    this.#observer.observe({ entryTypes: ['gc'] });
    return this;
  }

  stop(): void {
    this.#observer?.disconnect();
    this.#observer = undefined;
  }

  /** What a full collection left alive (the observer's reading; tests call it directly). */
  recordLive(bytes: number): void {
    this.#live = bytes;
    if (bytes > this.#peakLive) this.#peakLive = bytes;
  }

  /** True when work that can be refused should be. */
  tight(): boolean {
    const reading = this.#read();
    const limitBytes = this.#limit(reading);
    return this.#live > TIGHT_LIVE_SHARE * limitBytes || reading.usedBytes > TIGHT_USED_SHARE * limitBytes;
  }

  /** Throws 503 `server_busy` with `Retry-After` when memory is tight; `what` names the refused work in the detail. */
  refuseWhenTight(what: string): void {
    if (!this.tight()) return;
    this.#refused += 1;
    throw new HttpError(503, 'server_busy', `the server is short of memory and does not start ${what} now; retry in ${RETRY_AFTER_SECONDS} seconds`, {
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    });
  }

  state(): HeapState {
    return { limitBytes: this.#limit(this.#read()), liveBytes: this.#live, peakLiveBytes: this.#peakLive, refused: this.#refused };
  }
}
