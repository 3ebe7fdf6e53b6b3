// Comments on a page (`type` = `page`), embedding the page as getPage presents it.
import { defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import type { PageScope } from '../access/scope.ts';
import { loadPageView } from '../pages/pages.loader.ts';
import { commentOn, deleteCommentOn, listCommentsOn } from './comment-operations.ts';
import type { CommentTarget } from './comment.presenter.ts';

const onPage = (scope: PageScope) => ({ type: 'page', page: scope.page }) as const;
const pageTarget = (context: HandlerContext, scope: PageScope) => async (): Promise<CommentTarget> =>
  ({ type: 'page', page: await loadPageView(readerOf(context), scope.note, scope.page) });

export const pageCommentOperations = {
  // the path's `page` is the page id; the query's `page` is the page of results
  listPageComments: defineOperation('listPageComments', { scope: 'page', action: 'note.read' }, async ({ query }, scope, context) =>
    listCommentsOn(context, scope, onPage(scope), query, pageTarget(context, scope))),

  createPageComment: defineOperation('createPageComment', { scope: 'page', action: 'note.comment' }, async ({ body }, scope, context) =>
    commentOn(context, scope, onPage(scope), { comment: body.comment.comment, mentions: body.mentions }, pageTarget(context, scope))),

  /** The author, or a manager of the note's team. */
  deletePageComment: defineOperation('deletePageComment', { scope: 'page', action: 'comment.delete' }, async ({ path }, scope, context) =>
    deleteCommentOn(context, scope, onPage(scope), path.id)),
};
