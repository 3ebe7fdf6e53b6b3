// The change stream's safe bound: the highest change id below which no change can still appear. Change ids are
// handed out when a row is written, not when it commits, so a transaction that wrote id 10 may commit after the one
// that wrote id 11; a reader that went past 11 when it saw it would never send 10. The bound is found from what the
// database says of itself, read by `readWatermark` (the transactions running on the server, and the last change id
// handed out):
//   - every change row's transaction has its transaction id before the row gets its change id (events.repository.ts
//     takes it first; the page write's statement locks the page first);
//   - so a transaction holding an id <= last of a reading k, if it still runs at the next reading k+1, is among that
//     reading's running transactions (a later statement: its id was assigned before reading k);
//   - once none of those is running any more (at reading k+1 itself, or a later one), every id <= last_k has
//     committed (and is visible) or never will be. last_k is then safe.
// (The snapshot's xmin would not do: it leaves out transactions newer than the last one that ended.) Ids increase in
// the order they are sent, and the changes of one page come in commit order (a page's writers hold its row lock from
// before they take a change id until they commit). Cost: one small statement per reading; a bound moves after two
// readings, a few milliseconds after the transactions running at the time have ended.
import type { Watermark } from './event-stream.repository.ts';

type Candidate = { last: number; holders: ReadonlySet<string> | undefined };

export class SafeBound {
  /** The highest id known safe; undefined until a first bound is found. */
  value: number | undefined;
  readonly #candidates: Candidate[] = [];

  /** Takes a reading (readings must not overlap); returns whether the bound moved. */
  observe(reading: Watermark): boolean {
    for (const candidate of this.#candidates) candidate.holders ??= reading.running;
    const previous = this.#candidates[this.#candidates.length - 1];
    // a reading whose last is already a candidate (or already safe) adds nothing
    if ((previous === undefined || previous.last !== reading.last) && (this.value === undefined || reading.last > this.value)) {
      this.#candidates.push({ last: reading.last, holders: undefined });
    }
    let moved = false;
    while (this.#candidates.length > 0) {
      const first = this.#candidates[0]!;
      if (first.holders === undefined || [...first.holders].some((xid) => reading.running.has(xid))) break;
      this.#candidates.shift();
      if (this.value === undefined || first.last > this.value) {
        this.value = first.last;
        moved = true;
      }
    }
    return moved;
  }

  /** Whether a reading may still move the bound (a candidate is waiting for transactions to end). */
  get pending(): boolean {
    return this.#candidates.length > 0;
  }

  /** The highest id a reading has seen handed out (safe or not yet). */
  get seen(): number | undefined {
    return this.#candidates[this.#candidates.length - 1]?.last ?? this.value;
  }
}
