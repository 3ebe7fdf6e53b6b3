// Forks: make one (`createFork`), bring one up to date (`pullFork`), and list the caller's forks that can be brought
// up to date (`listChecks`, type `pull`). Anyone who may read a note may fork it, into a team they are a member of.
import { actorOf } from '../access/caller.ts';
import { unprocessable } from '../errors.ts';
import { defineOperation, readerOf } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { authorize, findTeamScope } from '../access/scope.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView, loadNoteViews, notesByIds } from '../notes/notes.loader.ts';
import { createFork } from './forks.service.ts';
import { pullFork } from './pull.service.ts';
import { resolutionsByPage } from './merge.service.ts';
import { originalOf } from './requests.handlers.ts';
import { pullableForks } from './requests.repository.ts';

export const forkOperations = {
  /** Into `team`, or the caller's default team (the one named after them). */
  createFork: defineOperation('createFork', { scope: 'note', action: 'note.read' }, async ({ body }, scope, context) => {
    const name = body?.team || scope.caller.user.username;
    const target = await findTeamScope(context.em, scope.caller, name);
    if (!target) throw unprocessable('unknown_team', `no team is named "${name}"`, [{ pointer: '/team', detail: 'no such team' }]);
    authorize(target, 'team.createNote');
    const fork = await createFork(context.em, actorOf(scope.caller), scope.note, scope.team, target.team, { title: body?.title });
    return presentNote(await loadNoteView(readerOf(context), fork), context.urls, 'forked');
  }),

  /** Members of the fork's team; `resolutions` decide the pages that conflict (`ours`: the fork). */
  pullFork: defineOperation('pullFork', { scope: 'note', action: 'note.edit' }, async ({ body }, scope, context) => {
    const original = await originalOf(context.em, scope);
    await pullFork(context.em, actorOf(scope.caller), scope.note, original, resolutionsByPage(body?.resolutions), context.config.limits);
    return presentNote(await loadNoteView(readerOf(context), scope.note), context.urls, 'forked');
  }),

  /**
   * `pull`: forks of the caller's teams whose original (which the caller may read) has a page version the fork has
   * not taken in, or a page the fork does not have; the original with the most recently changed page first.
   */
  listChecks: defineOperation('listChecks', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const results = pagination(query);
    const rows = await pullableForks(context.em, caller.user.id, results.perPage, results.offset);
    const list = listPlace(results, Number(rows[0]?.total ?? 0));
    const notes = await notesByIds(context.em, rows.map((row) => row.id));
    const views = await loadNoteViews(readerOf(context), notes);
    return answerWith(views.map((view) => presentNote(view, context.urls, 'read')), { list });
  }),
};
