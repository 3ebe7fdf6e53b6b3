// Answers that carry megabytes of text are built a few at a time. A page of results of a list of long texts holds
// at most LIMIT_LIST_TEXT_BYTES of text (pagination.ts), but building one holds several copies of it at once (the
// rows as received, their strings, the JSON, its bytes): many clients asking for large pages at the same moment would
// hold many times that, however small each answer is. So an answer whose text reaches LARGE_ANSWER_BYTES waits for
// one of LIMIT_LARGE_ANSWERS slots (default 2, one per core of a small server), held until the answer is sent or the
// client goes away; smaller answers never wait. The server's memory under any number of such readers is then
// bounded by the slots, not by the readers.
import type { Response } from 'express';

/** Text at which an answer counts as large, in bytes. */
export const LARGE_ANSWER_BYTES = 1024 * 1024;

export class AnswerGate {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly slots: number;
  // the requests holding a slot: a request that builds several answers (a web view) holds one slot, never waits for
  // a second while holding the first (two such requests would wait for each other for ever)
  private readonly holders = new WeakSet<object>();

  constructor(slots: number) {
    this.slots = slots;
  }

  /** Resolves when an answer with `textBytes` of text may be built; a large one holds its slot until `res` closes. */
  async admit(res: Response, textBytes: number): Promise<void> {
    const holder: object = res.req ?? res;
    if (textBytes < LARGE_ANSWER_BYTES || this.holders.has(holder)) return;
    this.holders.add(holder);
    if (this.busy < this.slots) this.busy += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.holders.delete(holder);
      const next = this.waiting.shift();
      // the slot passes to the next in line, or is free again
      if (next) next();
      else this.busy -= 1;
    };
    if (res.closed || res.destroyed) release();
    else res.once('close', release);
  }

  /** Slots held and answers waiting (for tests and metrics). */
  state(): { busy: number; waiting: number } {
    return { busy: this.busy, waiting: this.waiting.length };
  }
}
