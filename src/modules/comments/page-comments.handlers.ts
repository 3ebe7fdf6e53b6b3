import type { Loaded } from '@mikro-orm/core';
import { notFound } from '../../http/errors.ts';
import { defineOperation, noContent, type HandlerContext, readerOf } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { authorize, type PageScope } from '../access/scope.ts';
import { loadPageView } from '../pages/pages.loader.ts';
import { Comment } from './comment.entity.ts';
import { presentComment } from './comment.presenter.ts';
import { createPageComment, deleteComment, loadCommentViews } from './comments.service.ts';

// Ids are PostgreSQL `integer`: a larger number names nothing (and must not reach the database as one).
const LARGEST_ID = 2_147_483_647;

/** Oldest first; ids break ties between comments written in the same second. */
const oldestFirst = { createdAt: 'asc', id: 'asc' } as const;

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
      { type: 'page', page: scope.page.id },
      { populate: ['user'], orderBy: oldestFirst, limit: results.perPage, offset: results.offset },
    );
    sendPaginationHeaders(context, results, total);
    return presentPageComments(context, scope, comments);
  }),

  createPageComment: defineOperation('createPageComment', { scope: 'page' }, async ({ body }, scope, context) => {
    authorize(scope, 'note.comment', scope.note);
    const { comment, mentioned } = await createPageComment(context.em, scope.caller.user, scope.note, scope.page, {
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
    const comment = Number.isSafeInteger(path.id) && path.id <= LARGEST_ID
      ? await context.em.findOne(Comment, { id: path.id, type: 'page', page: scope.page.id })
      : null;
    if (!comment) throw notFound('comment');
    authorize(scope, 'comment.delete', { authorId: comment.user.id });
    await deleteComment(context.em, scope.caller.user, scope.note, comment);
    return noContent;
  }),
};
