// The jobs table's SQL (migration 0023): a job is inserted queued, runs, and ends done (with its note) or failed
// (with an error code and detail). `heartbeat_at` is touched while it runs, where the database has a connection to
// spare; a start of the server fails what a dead process left unfinished.
import type { EntityManager } from '@mikro-orm/postgresql';

export type JobState = 'queued' | 'running' | 'done' | 'failed';

export type JobRow = {
  id: number;
  kind: 'import';
  user_id: number;
  team_id: number | null;
  state: JobState;
  progress: number;
  note_id: number | null;
  error_code: string | null;
  error_detail: string | null;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = 'id, kind, user_id, team_id, state, progress, note_id, error_code, error_detail, created_at, updated_at';

export async function insertJob(em: EntityManager, job: { userId: number; teamId: number }): Promise<JobRow> {
  const [row] = await em.execute<JobRow[]>(`insert into jobs (kind, user_id, team_id) values ('import', ?, ?) returning ${COLUMNS}`, [job.userId, job.teamId]);
  return row!;
}

/** The job, when the user started it (undefined otherwise: someone else's job is as absent as a missing one). */
export async function findJobOf(em: EntityManager, id: number, userId: number): Promise<JobRow | undefined> {
  const [row] = await em.execute<JobRow[]>(`select ${COLUMNS} from jobs where id = ? and user_id = ?`, [id, userId]);
  return row;
}

export async function markRunning(em: EntityManager, id: number): Promise<void> {
  await em.execute("update jobs set state = 'running', heartbeat_at = now(), updated_at = now() where id = ?", [id]);
}

/** Progress (and that the process still runs the job). */
export async function touchJob(em: EntityManager, id: number, progress: number): Promise<void> {
  await em.execute("update jobs set progress = ?, heartbeat_at = now(), updated_at = now() where id = ? and state = 'running'", [progress, id]);
}

export async function finishJob(em: EntityManager, id: number, noteId: number): Promise<void> {
  await em.execute("update jobs set state = 'done', progress = 100, note_id = ?, updated_at = now() where id = ?", [noteId, id]);
}

export async function failJob(em: EntityManager, id: number, code: string, detail: string): Promise<void> {
  await em.execute("update jobs set state = 'failed', error_code = ?, error_detail = ?, updated_at = now() where id = ?", [code, detail, id]);
}

/**
 * Fails the jobs a process that died left queued or running: every one (`all`: the embedded database, which one
 * process at a time opens), else those whose process stopped touching them `staleSeconds` ago. How many it failed.
 */
export async function failAbandonedJobs(em: EntityManager, options: { all: boolean; staleSeconds: number }): Promise<number> {
  const rows = await em.execute<{ id: number }[]>(
    `update jobs set state = 'failed', error_code = 'interrupted', error_detail = 'the server stopped while the job ran; start it again',
            updated_at = now()
      where state in ('queued', 'running') and (? or heartbeat_at < now() - make_interval(secs => ?))
      returning id`,
    [options.all, options.staleSeconds],
  );
  return rows.length;
}
