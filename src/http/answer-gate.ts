// Answers that carry a lot of text are built within one budget. A page of results of a list of long texts holds at
// most LIMIT_LIST_TEXT_BYTES of text (pagination.ts), but building one holds several copies of it at once (the rows
// as received, their strings, the JSON, its bytes): many clients asking for large pages, or for many different
// pages of most of a megabyte each, at the same moment would hold many times that, however small each answer is.
// So an answer whose text reaches WAIT_FROM_BYTES is admitted by its size against a budget of LIMIT_LARGE_ANSWERS
// times LIMIT_LIST_TEXT_BYTES (default 1 x 4 MiB) of text being built at once, held until the answer is sent or the
// client goes away; one larger than the whole budget is built alone. Smaller answers never wait. The server's
// memory under any number of such readers is then bounded by the budget, not by the readers, and that bound is what
// the heap's ceiling is sized for (scripts/serve.sh). When memory is tight (memory-pressure.ts) an answer that would
// wait here is refused at once with 503 and `Retry-After` instead: smaller answers still go on.
import type { Response } from 'express';
import type { MemoryPressure } from './memory-pressure.ts';

/** Text from which an answer waits for its share of the budget, in bytes. */
export const WAIT_FROM_BYTES = 256 * 1024;

type Waiter = { weight: number; admit: () => void };

export class AnswerGate {
  /** Text being built now, in bytes (each answer counted up to the whole budget). */
  private inFlight = 0;
  private holding = 0;
  private readonly waiting: Waiter[] = [];
  private readonly budget: number;
  private readonly pressure: MemoryPressure | undefined;
  // the requests holding a share: a request that builds several answers (a web view) is admitted once, and never
  // waits again while it holds its share (two such requests would wait for each other for ever)
  private readonly holders = new WeakSet<object>();

  /** `budget`: the text, in bytes, that answers being built at once may carry in all; `pressure`: the heap's watch. */
  constructor(budget: number, pressure?: MemoryPressure) {
    this.budget = budget;
    this.pressure = pressure;
  }

  /** Resolves when an answer with `textBytes` of text may be built; a large one holds its share until `res` closes. */
  async admit(res: Response, textBytes: number): Promise<void> {
    const holder: object = res.req ?? res;
    if (textBytes < WAIT_FROM_BYTES || this.holders.has(holder)) return;
    this.pressure?.refuseWhenTight('a large answer');
    this.holders.add(holder);
    const weight = Math.min(textBytes, this.budget);
    // first come, first served: none passes one that waits, so a large answer is never starved by small ones
    if (this.waiting.length === 0 && this.inFlight + weight <= this.budget) this.take(weight);
    else await new Promise<void>((resolve) => this.waiting.push({ weight, admit: resolve }));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.holders.delete(holder);
      this.inFlight -= weight;
      this.holding -= 1;
      // the freed share goes to those next in line, as many as now fit
      while (this.waiting.length > 0 && this.inFlight + this.waiting[0]!.weight <= this.budget) {
        const next = this.waiting.shift()!;
        this.take(next.weight);
        next.admit();
      }
    };
    if (res.closed || res.destroyed) release();
    else res.once('close', release);
  }

  private take(weight: number): void {
    this.inFlight += weight;
    this.holding += 1;
  }

  /** Answers admitted and being built, their text, and answers waiting (for tests and metrics). */
  state(): { busy: number; bytes: number; waiting: number } {
    return { busy: this.holding, bytes: this.inFlight, waiting: this.waiting.length };
  }
}
