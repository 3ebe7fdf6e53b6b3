// Presenting a job: pure, from its row, the progress this process knows of it while it runs, and its note presented.
import type { Job as JobBody, Note as NoteBody } from '../../../generated/client/types.gen.ts';
import type { JobRow } from './jobs.repository.ts';

export function presentJob(job: JobRow, live: { progress: number | undefined; note: NoteBody | null }): JobBody {
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    progress: job.state === 'done' ? 100 : (live.progress ?? job.progress),
    note: job.state === 'done' ? live.note : null,
    error: job.state === 'failed' ? { code: job.error_code ?? 'internal', detail: job.error_detail ?? '' } : null,
    created_at: new Date(job.created_at).toISOString(),
    updated_at: new Date(job.updated_at).toISOString(),
    model: 'job',
  };
}
