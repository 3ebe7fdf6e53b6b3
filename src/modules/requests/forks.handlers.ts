// Forks: make one (`createFork`), bring one up to date (`pullFork`), and list the caller's forks that can be brought
// up to date (`listChecks`, type `pull`). Anyone who may read a note may fork it, into a team they are a member of.
import { unprocessable } from '../../http/errors.ts';
import { defineOperation, readerOf } from '../../http/handler.ts';
import { authorize, findTeamScope } from '../access/scope.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { createFork } from './forks.service.ts';

export const forkOperations = {
  /** Into `team`, or the caller's default team (the one named after them). */
  createFork: defineOperation('createFork', { scope: 'note' }, async ({ body }, scope, context) => {
    const name = body?.team || scope.caller.user.username;
    const target = await findTeamScope(context.em, scope.caller, name);
    if (!target) throw unprocessable('unknown_team', `no team is named "${name}"`, [{ pointer: '/team', detail: 'no such team' }]);
    authorize(target, 'team.createNote');
    const fork = await createFork(context.em, scope.caller.user, scope.note, scope.team, target.team, { title: body?.title });
    return presentNote(await loadNoteView(readerOf(context), fork), context.urls, 'forked');
  }),
};
