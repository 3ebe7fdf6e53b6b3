// The merge off the event loop: big pages are merged here, in a worker thread, when a request is read (the answer
// says `mergeable: null` until the result is in). Messages: {id, pageId, base, ours, theirs, limits} in, {id, merge}
// out, where a conflict carries its data only (the resolver stays behind: a write merges again, in its transaction).
import { parentPort } from 'node:worker_threads';
import { budgetOf, type MergeLimits } from '../../text/merge3.ts';
import { mergePage, type Side } from './pages.ts';

type Job = { id: number; pageId: number; base: Side; ours: Side; theirs: Side; limits: MergeLimits };

parentPort!.on('message', (job: Job) => {
  const merge = mergePage(job.pageId, job.base, job.ours, job.theirs, budgetOf(job.limits));
  parentPort!.postMessage({ id: job.id, merge: merge.status === 'conflict' ? { status: 'conflict', conflict: merge.conflict } : merge });
});
