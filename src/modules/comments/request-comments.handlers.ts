// Comments on a request (`type` = `request`): the same service as note, page and issue comments (size limit,
// mentions, notifications, activity log, change log), with the request, found by its index in the original note, as
// the commented object. Anyone who may read the original may comment, as on its issues; the request's author hears
// of comments on it.
import { defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import { shared } from '../../http/json.ts';
import type { NoteScope } from '../access/scope.ts';
import { presentRequest } from '../requests/request.presenter.ts';
import { loadRequestViews, requireRequestInNote, type LoadedRequest } from '../requests/requests.loader.ts';
import { commentOn, deleteCommentOn, listCommentsOn } from './comment-operations.ts';
import type { CommentedObject } from './comment.entity.ts';
import type { CommentTarget } from './comment.presenter.ts';

/** The request with this index to the scope's note (404 when there is none), as the commented object. */
async function onRequest(context: HandlerContext, scope: NoteScope, index: number): Promise<CommentedObject & { type: 'request'; request: LoadedRequest }> {
  return { type: 'request', request: await requireRequestInNote(context.em, scope.note.id, index) };
}

/**
 * The request as every comment on it embeds it: presented once, shared by the whole list, as lists of requests
 * present it (its pages' merges computed within the list's content bound).
 */
const requestTarget = (context: HandlerContext, request: LoadedRequest) => async (): Promise<CommentTarget> => {
  const [view] = await loadRequestViews(readerOf(context), [request]);
  return { type: 'request', request: shared(presentRequest(view!, context.urls)) };
};

export const requestCommentOperations = {
  listRequestComments: defineOperation('listRequestComments', { scope: 'note', action: 'note.read' }, async ({ path, query }, scope, context) => {
    const target = await onRequest(context, scope, path.index);
    return listCommentsOn(context, scope, target, query, requestTarget(context, target.request));
  }),

  createRequestComment: defineOperation('createRequestComment', { scope: 'note', action: 'note.comment' }, async ({ path, body }, scope, context) => {
    const target = await onRequest(context, scope, path.index);
    return commentOn(context, scope, target, { comment: body.comment.comment, mentions: body.mentions }, requestTarget(context, target.request));
  }),

  /** The author, or a manager of the note's team. */
  deleteRequestComment: defineOperation('deleteRequestComment', { scope: 'note', action: 'comment.delete' }, async ({ path }, scope, context) =>
    deleteCommentOn(context, scope, await onRequest(context, scope, path.index), path.id)),
};
