// What the three kinds of comment operation share (on a note, a page, an issue): list one page of the comments on
// the commented object, comment on it, delete a comment of it. Each handler names its object and how the object is
// presented inside its comments (presented once per answer, only when there is a comment to embed it in).
import type { Comment as CommentBody } from '../../../generated/client/types.gen.ts';
import { noContent, type HandlerContext } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { authorize, type NoteScope, type PageScope } from '../access/scope.ts';
import { Comment, type CommentedObject } from './comment.entity.ts';
import { presentComment, type CommentTarget } from './comment.presenter.ts';
import { commentsOn, createComment, deleteComment, findCommentOn, loadCommentViews, oldestFirst, type NewComment } from './comments.service.ts';

type Scope = NoteScope | PageScope;
type PresentTarget = () => Promise<CommentTarget>;

const callerOf = (scope: Scope) => ({ id: scope.caller.user.id, role: scope.role });

/** One page of the comments on `target`, oldest first, with the pagination headers. */
export async function listCommentsOn(
  context: HandlerContext,
  scope: Scope,
  target: CommentedObject,
  query: { page?: number | undefined; per_page?: number | undefined },
  presentTarget: PresentTarget,
): Promise<CommentBody[]> {
  const results = pagination(query);
  const [comments, total] = await context.em.findAndCount(Comment, commentsOn(scope.note, target), {
    populate: ['user'],
    orderBy: oldestFirst,
    limit: results.perPage,
    offset: results.offset,
  });
  sendPaginationHeaders(context, results, total);
  if (comments.length === 0) return [];
  const views = await loadCommentViews(context.em, callerOf(scope), comments, await presentTarget());
  return views.map((view) => presentComment(view, context.urls));
}

/** A new comment on `target` by the caller, presented from what was written (no read-back). */
export async function commentOn(context: HandlerContext, scope: Scope, target: CommentedObject, input: NewComment, presentTarget: PresentTarget): Promise<CommentBody> {
  authorize(scope, 'note.comment', scope.note);
  const { comment, mentioned } = await createComment(context.em, scope.caller.user, scope.note, target, input);
  return presentComment({ comment, author: scope.caller.user, mentions: mentioned, caller: callerOf(scope), target: await presentTarget() }, context.urls);
}

/** Deletes comment `id` of `target`: its author, or a manager of the note's team. */
export async function deleteCommentOn(context: HandlerContext, scope: Scope, target: CommentedObject, id: number): Promise<typeof noContent> {
  const comment = await findCommentOn(context.em, scope.note, target, id);
  authorize(scope, 'comment.delete', { authorId: comment.user.id });
  await deleteComment(context.em, scope.caller.user, scope.note, target, comment);
  return noContent;
}
