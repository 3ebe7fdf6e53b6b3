// The change stream's safe bound: the highest change id below which no change can still appear. Change ids are
// handed out when a row is written, not when it commits, so a transaction that wrote id 10 may commit after the one
// that wrote id 11; a reader that went past 11 when it saw it would never send 10. The bound is found from the
// database's own bookkeeping, read by `readWatermark` (xmin: the oldest transaction still running; xmax: the next
// transaction id; last: the last change id handed out):
//   - every change row's transaction has its id before the row gets its change id (events.repository.ts takes it
//     first; the page write's statement locks the page first);
//   - so every id <= last of a reading k was handed to a transaction whose id is below the xmax of any reading made
//     after k ended (reading k+1);
//   - once a later reading's xmin reaches that xmax, every such transaction has ended: each id <= last_k has
//     committed (and is visible) or never will be. last_k is then safe.
// Ids increase in the order they are sent, and the changes of one page come in commit order (a page's writers hold
// its row lock from before they take a change id until they commit). Cost: one small statement per reading; a bound
// moves after two or three readings, a few milliseconds after the transactions running at the time have ended.
import type { Watermark } from './event-stream.repository.ts';

type Candidate = { last: number; below: bigint | undefined };

export class SafeBound {
  /** The highest id known safe; undefined until a first bound is found. */
  value: number | undefined;
  readonly #candidates: Candidate[] = [];

  /** Takes a reading (readings must not overlap); returns whether the bound moved. */
  observe(reading: Watermark): boolean {
    for (const candidate of this.#candidates) candidate.below ??= reading.xmax;
    const previous = this.#candidates[this.#candidates.length - 1];
    // a reading whose last is already a candidate (or already safe) adds nothing
    if ((previous === undefined || previous.last !== reading.last) && (this.value === undefined || reading.last > this.value)) {
      this.#candidates.push({ last: reading.last, below: undefined });
    }
    let moved = false;
    while (this.#candidates.length > 0) {
      const first = this.#candidates[0]!;
      if (first.below === undefined || reading.xmin < first.below) break;
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
