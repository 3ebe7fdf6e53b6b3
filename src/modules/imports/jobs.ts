// Running jobs in this process, after their operation answered 202. The progress of a running job is kept here, in
// memory: an import's transaction may hold the embedded database's only connection, so the row cannot be written
// while it runs there; on PostgreSQL the row is written too (and touched every few seconds, so that a start of
// another process can tell a live job from one a dead process left: failAbandonedJobs).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../http/logger.ts';
import { ImportFailure } from './archive.ts';
import { failJob, finishJob, markRunning, touchJob } from './jobs.repository.ts';

/** How often a running job writes its progress to its row, where it can (PostgreSQL), and touches it at least, in milliseconds. */
export const PROGRESS_MS = 1000;
export const HEARTBEAT_MS = 10_000;
/** A job untouched this long is taken for one a dead process left (at a start of the server). */
export const STALE_SECONDS = 60;

const progressOf = new Map<number, number>();
const running = new Set<Promise<void>>();

/** The progress of a job running in this process (undefined: not running here). */
export function liveProgress(jobId: number): number | undefined {
  return progressOf.get(jobId);
}

/** Resolves when every job this process runs has ended (tests; a graceful stop). */
export async function settleJobs(): Promise<void> {
  while (running.size > 0) await Promise.allSettled([...running]);
}

/** Whether the database has a connection to spare beside a running job's transaction (PostgreSQL; PGlite has one). */
export function hasSpareConnections(em: EntityManager): boolean {
  return ((em.config.get('pool') as { max?: number } | undefined)?.max ?? 2) > 1;
}

export type JobWork = (report: (percent: number) => void) => Promise<number>;

/**
 * Runs the job after the answer: `work` resolves with the note it made, or fails (an ImportFailure names its code;
 * anything else is `internal`, logged). `writeProgress`: the database has connections to spare for the row.
 */
export function runJob(em: EntityManager, jobId: number, work: JobWork, options: { writeProgress: boolean; log: Logger; cleanUp: () => Promise<void> }): void {
  const spare = () => em.fork();
  const report = (percent: number) => progressOf.set(jobId, Math.max(0, Math.min(99, Math.floor(percent))));
  // the row is written from a timer, never from inside the job's work: a write there would run in the context of the
  // import's transaction (MikroORM finds it through async context) and show nothing until it commits
  let written = -1;
  let touched = Date.now();
  const write = () => {
    const progress = progressOf.get(jobId) ?? 0;
    if (progress === written && Date.now() - touched < HEARTBEAT_MS) return;
    written = progress;
    touched = Date.now();
    touchJob(spare(), jobId, progress).catch(() => undefined);
  };
  const timer = options.writeProgress ? setInterval(write, PROGRESS_MS) : undefined;
  timer?.unref();
  const run = (async () => {
    progressOf.set(jobId, 0);
    try {
      await markRunning(spare(), jobId);
      const noteId = await work(report);
      await finishJob(spare(), jobId, noteId);
    } catch (error) {
      const failure = error instanceof ImportFailure ? error : undefined;
      if (!failure) options.log.error({ err: error, job: jobId }, 'a job failed');
      await failJob(spare(), jobId, failure?.code ?? 'internal', failure?.message ?? 'the job failed on the server; the log says why')
        .catch((failed: unknown) => options.log.error({ err: failed, job: jobId }, 'a failed job could not be recorded'));
    } finally {
      clearInterval(timer);
      progressOf.delete(jobId);
      await options.cleanUp().catch(() => undefined);
    }
  })();
  running.add(run);
  void run.finally(() => running.delete(run));
}
