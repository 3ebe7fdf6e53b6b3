// The change stream's safe bound: the highest change id below which no change can still appear. Change ids are
// handed out when a row is written, not when it commits, so a transaction that wrote id 10 may commit after the one
// that wrote id 11; a reader that went past 11 when it saw it would never send 10. The bound is found from what the
// database says of itself, read by `readWatermark`: the last change id handed out, then the transactions appending
// to the change log.
//   - every transaction that appends a change takes CHANGE_WRITERS_LOCK (events.repository.ts) before its row gets
//     its id, and holds it until it has committed or rolled back;
//   - a reading reads the last id first, then the lock's holders: a transaction holding an id <= last either still
//     holds the lock when the locks are read (it is among `running`), or has ended, and then its rows are committed
//     (visible to every statement after) or never will be;
//   - so once none of the holders of that reading holds the lock any more (at once, when none did, or at a later
//     reading), every id <= last is safe.
// Only the transactions that append count: a projection's, which writes the search index for hundreds of
// milliseconds under a write load, or a long one of a tool, holds nothing back. (The snapshot's xmin would not do
// either: it leaves out transactions newer than the last one that ended.) Ids increase in the order they are sent,
// and the changes of one page come in commit order (a page's writers hold its row lock from before they take a
// change id until they commit). Cost: one small statement per reading; a bound moves at the reading that sees the id
// when nothing else was appending, else at the first reading after the appenders then running end.
import type { Watermark } from './event-stream.repository.ts';

type Candidate = { last: number; holders: ReadonlySet<string> };

export class SafeBound {
  /** The highest id known safe; undefined until a first bound is found. */
  value: number | undefined;
  readonly #candidates: Candidate[] = [];

  /** Takes a reading (readings must not overlap); returns whether the bound moved. */
  observe(reading: Watermark): boolean {
    const previous = this.#candidates[this.#candidates.length - 1];
    // a reading whose last is already a candidate (or already safe) adds nothing: that candidate's holders include
    // every transaction that can hold its ids
    if ((previous === undefined || previous.last !== reading.last) && (this.value === undefined || reading.last > this.value)) {
      this.#candidates.push({ last: reading.last, holders: reading.running });
    }
    let moved = false;
    while (this.#candidates.length > 0) {
      const first = this.#candidates[0]!;
      if ([...first.holders].some((xid) => reading.running.has(xid))) break;
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
