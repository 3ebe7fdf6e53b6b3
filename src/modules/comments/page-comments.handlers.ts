import type { Loaded } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  CreatePageCommentData, CreatePageCommentResponse, DeletePageCommentData, ListPageCommentsData, ListPageCommentsResponse,
} from '../../../generated/client/types.gen.ts';
import { notFound } from '../../http/errors.ts';
import { noContent, operation, type HandlerContext } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import type { PageAccess } from '../pages/pages.access.ts';
import { findReadablePage } from '../pages/pages.access.ts';
import { loadPageView } from '../pages/pages.loader.ts';
import { Comment } from './comment.entity.ts';
import { presentComment } from './comment.presenter.ts';
import { createPageComment, deleteComment, loadCommentViews } from './comments.service.ts';

// Ids are PostgreSQL `integer`: a larger number names nothing (and must not reach the database as one).
const LARGEST_ID = 2_147_483_647;

/** Oldest first; ids break ties between comments written in the same second. */
const oldestFirst = { createdAt: 'asc', id: 'asc' } as const;

/** Presents comments on the page of `access`, all sharing one presentation of the page. */
async function presentPageComments(em: EntityManager, context: HandlerContext, access: PageAccess, comments: readonly Loaded<Comment, 'user'>[]) {
  if (comments.length === 0) return [];
  const page = await loadPageView(em, context.user.id, context.urls, access.note, access.page);
  const views = await loadCommentViews(em, { id: context.user.id, role: access.role }, comments, { type: 'page', page });
  return views.map((view) => presentComment(view, context.urls));
}

export const pageCommentOperations = {
  listPageComments: operation<ListPageCommentsData, ListPageCommentsResponse>(async ({ path, query }, context) => {
    const { em } = context;
    const access = await findReadablePage(em, context.user.id, path.team, path.note, path.page);
    // the path's `page` is the page id; the query's `page` is the page of results
    const results = pagination(query);
    const [comments, total] = await em.findAndCount(
      Comment,
      { type: 'page', page: access.page.id },
      { populate: ['user'], orderBy: oldestFirst, limit: results.perPage, offset: results.offset },
    );
    sendPaginationHeaders(context, results, total);
    return presentPageComments(em, context, access, comments);
  }),

  createPageComment: operation<CreatePageCommentData, CreatePageCommentResponse>(async ({ path, body }, context) => {
    const access = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
    const created = await createPageComment(context.em, context.user, access.note, access.page, {
      comment: body.comment.comment,
      mentions: body.mentions,
    });
    // answer with the comment as a later read shows it
    const em = context.em.fork();
    const comment = await em.findOneOrFail(Comment, created.id, { populate: ['user'] });
    const [presented] = await presentPageComments(em, context, access, [comment]);
    return presented!;
  }),

  /** The author, or a manager of the note's team. */
  deletePageComment: operation<DeletePageCommentData, never>(async ({ path }, context) => {
    const { em } = context;
    const access = await findReadablePage(em, context.user.id, path.team, path.note, path.page);
    const comment = Number.isSafeInteger(path.id) && path.id <= LARGEST_ID
      ? await em.findOne(Comment, { id: path.id, type: 'page', page: access.page.id })
      : null;
    if (!comment) throw notFound('comment');
    await deleteComment(em, context.user.id, access.role, comment);
    return noContent;
  }),
};
