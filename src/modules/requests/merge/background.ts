// Running merges in a worker thread (merge.worker.ts), one per process, started on first use and never keeping the
// process alive. A job for a key already running is not started twice.
import { Worker } from 'node:worker_threads';
import { DEFAULT_MERGE_LIMITS, type MergeLimits } from '../../text/merge3.ts';
import type { PageConflict, Side } from './pages.ts';

/** What comes back: as PageMerge, without the resolver. */
export type BackgroundMerge = { status: 'clean'; result: Side } | { status: 'conflict'; conflict: PageConflict } | { status: 'unknown'; reason: string };

/** In the worker the budget is longer: it blocks nobody. */
export const BACKGROUND_LIMITS: MergeLimits = { ...DEFAULT_MERGE_LIMITS, timeBudgetMs: 20_000 };

let worker: Worker | undefined;
let nextId = 1;
const waiting = new Map<number, (merge: BackgroundMerge) => void>();
const running = new Set<string>();

function theWorker(): Worker {
  if (worker) return worker;
  const started = new Worker(new URL('./merge.worker.ts', import.meta.url));
  started.on('message', ({ id, merge }: { id: number; merge: BackgroundMerge }) => {
    waiting.get(id)?.(merge);
    waiting.delete(id);
  });
  const fail = (reason: string) => {
    for (const done of waiting.values()) done({ status: 'unknown', reason });
    waiting.clear();
    worker = undefined;
  };
  started.on('error', (error) => fail(`the merge failed: ${error.message}`));
  started.on('exit', () => fail('the merge worker stopped'));
  // after the listeners (adding one refs the worker again)
  started.unref();
  worker = started;
  return started;
}

/** Starts the merge of `key` unless it is running; `done` gets the result. */
export function mergeInBackground(key: string, pageId: number, sides: { base: Side; ours: Side; theirs: Side }, done: (merge: BackgroundMerge) => void): void {
  if (running.has(key)) return;
  running.add(key);
  const id = nextId++;
  waiting.set(id, (merge) => {
    running.delete(key);
    done(merge);
  });
  theWorker().postMessage({ id, pageId, ...sides, limits: BACKGROUND_LIMITS });
}
