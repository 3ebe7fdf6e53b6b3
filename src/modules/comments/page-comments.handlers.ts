import type { Loaded } from '@mikro-orm/core';
import { defineOperation, noContent, type HandlerContext, readerOf } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { authorize, type PageScope } from '../access/scope.ts';
import { loadPageView } from '../pages/pages.loader.ts';
import { Comment } from './comment.entity.ts';
import { presentComment } from './comment.presenter.ts';
import { commentsOn, createComment, deleteComment, findCommentOn, loadCommentViews, oldestFirst } from './comments.service.ts';

/** Presents comments on the scope's page, all sharing one presentation of the page. */
async function presentPageComments(context: HandlerContext, scope: PageScope, comments: readonly Loaded<Comment, 'user'>[]) {
  if (comments.length === 0) return [];
  const { em } = context;
  const page = await loadPageView(readerOf(context), scope.note, scope.page);
  const views = await loadCommentViews(em, { id: scope.caller.user.id, role: scope.role }, comments, { type: 'page', page });
  return views.map((view) => presentComment(view, context.urls));
}

export const pageCommentOperations = {
  listPageComments: defineOperation('listPageComments', { scope: 'page' }, async ({ query }, scope, context) => {
    // the path's `page` is the page id; the query's `page` is the page of results
    const results = pagination(query);
    const [comments, total] = await context.em.findAndCount(
      Comment,
      commentsOn(scope.note, { type: 'page', page: scope.page }),
      { populate: ['user'], orderBy: oldestFirst, limit: results.perPage, offset: results.offset },
    );
    sendPaginationHeaders(context, results, total);
    return presentPageComments(context, scope, comments);
  }),

  createPageComment: defineOperation('createPageComment', { scope: 'page' }, async ({ body }, scope, context) => {
    authorize(scope, 'note.comment', scope.note);
    const { comment, mentioned } = await createComment(context.em, scope.caller.user, scope.note, { type: 'page', page: scope.page }, {
      comment: body.comment.comment,
      mentions: body.mentions,
    });
    // presented from what was written: the author is the caller, the mentions the users just found
    const page = await loadPageView(readerOf(context), scope.note, scope.page);
    const caller = { id: scope.caller.user.id, role: scope.role };
    return presentComment({ comment, author: scope.caller.user, mentions: mentioned, caller, target: { type: 'page', page } }, context.urls);
  }),

  /** The author, or a manager of the note's team. */
  deletePageComment: defineOperation('deletePageComment', { scope: 'page' }, async ({ path }, scope, context) => {
    const target = { type: 'page', page: scope.page } as const;
    const comment = await findCommentOn(context.em, scope.note, target, path.id);
    authorize(scope, 'comment.delete', { authorId: comment.user.id });
    await deleteComment(context.em, scope.caller.user, scope.note, target, comment);
    return noContent;
  }),
};
