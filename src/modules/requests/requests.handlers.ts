// The request operations. A request is listed, read, opened, closed and merged on the original note (the path's
// note); it is created on the fork. Creating takes `note.edit` on the fork; opening and closing `request.manage`
// (its author, or a manager of the original's team); merging `note.manage` on the original (a manager).
import { actorOf } from '../access/caller.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { unprocessable } from '../errors.ts';
import { defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { can } from '../access/policy.ts';
import { rolesOfUsersInTeam } from '../access/roles.ts';
import { authorize, type NoteScope } from '../access/scope.ts';
import { Note } from '../notes/note.entity.ts';
import { MergeRequest, type MergeRequestStatus } from './merge-request.entity.ts';
import { mergeRequest } from './merge.service.ts';
import { presentRequest } from './request.presenter.ts';
import { loadRequestView, loadRequestViews, requestRelations, requireRequestInNote } from './requests.loader.ts';
import { closeRequest, createRequest, openRequest } from './requests.service.ts';

const STATES: Record<'open' | 'merged' | 'closed' | 'all', MergeRequestStatus[] | undefined> = {
  open: ['draft', 'opened'],
  merged: ['merged'],
  closed: ['closed'],
  all: undefined,
};

/** Presents the request as stored now (after a write: read again). */
async function answer(context: HandlerContext, noteId: number, index: number) {
  const request = await requireRequestInNote(context.em, noteId, index);
  return presentRequest(await loadRequestView(readerOf(context), request), context.urls);
}

/** The original of a fork, which the caller must be able to read (422 `not_a_fork` otherwise). */
export async function originalOf(em: EntityManager, scope: NoteScope) {
  const original = scope.note.forkedFrom ? await em.findOne(Note, scope.note.forkedFrom.id, { populate: ['team'] }) : null;
  const role = original ? (await rolesOfUsersInTeam(em, original.team.id, [scope.caller.user.id])).get(scope.caller.user.id) : undefined;
  if (!original || !can('note.read', { role, callerId: scope.caller.user.id }, original)) {
    throw unprocessable('not_a_fork', 'the note is not a fork, or its original has been deleted or cannot be read');
  }
  return original;
}

async function transition(context: HandlerContext, scope: NoteScope, index: number, change: typeof openRequest) {
  const request = await requireRequestInNote(context.em, scope.note.id, index);
  authorize(scope, 'request.manage', { authorId: request.user.id });
  await change(context.em, actorOf(scope.caller), scope.note, request, request.user);
  return answer(context, scope.note.id, index);
}

export const requestOperations = {
  /** Newest first; `state` open (draft and opened, the default), merged, closed or all. */
  listRequests: defineOperation('listRequests', { scope: 'note', action: 'note.read' }, async ({ query }, scope, context) => {
    const results = pagination(query);
    const statuses = STATES[query.state ?? 'open'];
    const [requests, total] = await context.em.findAndCount(
      MergeRequest,
      { toNote: scope.note.id, ...(statuses ? { status: { $in: statuses } } : {}) },
      { populate: requestRelations, orderBy: { index: 'desc' }, limit: results.perPage, offset: results.offset },
    );
    const list = listPlace(results, total);
    const views = await loadRequestViews(readerOf(context), requests);
    return answerWith(views.map((view) => presentRequest(view, context.urls)), { list });
  }),

  getRequest: defineOperation('getRequest', { scope: 'note', action: 'note.read' }, async ({ path }, scope, context) => answer(context, scope.note.id, path.index)),

  /** On the fork: the request is numbered on, and answered from, the original. */
  createRequest: defineOperation('createRequest', { scope: 'note', action: 'note.edit' }, async ({ body }, scope, context) => {
    const original = await originalOf(context.em, scope);
    const request = await createRequest(context.em, actorOf(scope.caller), scope.note, original, original.team, body);
    return answer(context, original.id, request.index);
  }),

  openRequest: defineOperation('openRequest', { scope: 'note', action: 'request.manage' }, async ({ path }, scope, context) => transition(context, scope, path.index, openRequest)),
  closeRequest: defineOperation('closeRequest', { scope: 'note', action: 'request.manage' }, async ({ path }, scope, context) => transition(context, scope, path.index, closeRequest)),

  mergeRequest: defineOperation('mergeRequest', { scope: 'note', action: 'note.manage' }, async ({ path, body }, scope, context) => {
    const request = await requireRequestInNote(context.em, scope.note.id, path.index);
    await mergeRequest(context.em, actorOf(scope.caller), scope.note, request, request.user, {
      expectedHeadVersions: body?.expected_head_versions,
      resolutions: body?.resolutions,
    }, context.config.limits);
    return answer(context, scope.note.id, path.index);
  }),
};
