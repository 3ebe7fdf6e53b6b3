// Importing a note (`importNote`: managers of the team) and the jobs that do it (`getJob`: only the user who started
// the job; anyone else's is 404). The upload is streamed to a temporary file within LIMIT_IMPORT_BYTES; the answer is
// 202 with the job, and the import runs after it in this process (jobs.ts), all or nothing (import.service.ts).
import { rm } from 'node:fs/promises';
import { accepted, defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import { actorOf } from '../access/caller.ts';
import { storageFor } from '../attachments/storage.ts';
import { receiveUpload } from '../attachments/upload.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { Note } from '../notes/note.entity.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { importNote, isNoteName } from './import.service.ts';
import { slugTaken } from './import.repository.ts';
import { presentJob } from './job.presenter.ts';
import { findJobOf, insertJob, type JobRow } from './jobs.repository.ts';
import { hasSpareConnections, liveProgress, runJob } from './jobs.ts';

async function presentedJob(context: HandlerContext, job: JobRow) {
  const note = job.state === 'done' && job.note_id !== null ? await context.em.findOne(Note, job.note_id, { populate: ['team'] }) : null;
  const noteBody = note ? presentNote(await loadNoteView(readerOf(context), note), context.urls, 'read') : null;
  return presentJob(job, { progress: liveProgress(job.id), note: noteBody });
}

export const importOperations = {
  importNote: defineOperation('importNote', { scope: 'team', action: 'team.manage' }, async (_input, scope, context) => {
    context.refuseWhenTight('an import');
    const storage = storageFor(context.config);
    const upload = await receiveUpload(context.request, { tempDir: storage.tempDir, limit: context.config.limits.importBytes });
    const cleanUp = () => rm(upload.tempPath, { force: true });
    let job: JobRow;
    let name: string | null | undefined;
    try {
      const given = upload.fields.name;
      name = given === undefined ? undefined : given.trim() === '' ? null : given.trim();
      if (name && !isNoteName(name)) {
        throw badRequest('`name` is not a note name: 1-64 of a-z 0-9 _ -, not all digits', [{ pointer: '/name', detail: 'must be a note name' }]);
      }
      if (name && (await slugTaken(context.em, scope.team.id, name))) {
        throw conflict('name_taken', `the team already has a note named "${name}"`, [{ pointer: '/name', detail: 'already taken in this team' }]);
      }
      job = await insertJob(context.em, { userId: scope.caller.user.id, teamId: scope.team.id });
    } catch (error) {
      await cleanUp();
      throw error;
    }
    const actor = actorOf(scope.caller);
    const { limits } = context.config;
    runJob(context.em.fork(), job.id, (report) => importNote(context.em.fork(), storage, {
      actor, team: scope.team, file: upload.tempPath, name, limits, onProgress: report,
    }), { writeProgress: hasSpareConnections(context.em), log: context.log, cleanUp });
    return accepted(presentJob(job, { progress: 0, note: null }));
  }),

  getJob: defineOperation('getJob', { scope: 'caller', action: 'signed-in' }, async ({ path }, scope, context) => {
    const job = path.id <= 2_147_483_647 ? await findJobOf(context.em, path.id, scope.caller.user.id) : undefined;
    if (!job) throw notFound('job');
    return presentedJob(context, job);
  }),
};
