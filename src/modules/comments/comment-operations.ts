// What the four kinds of comment operation share (on a note, a page, an issue, a request): list one page of the comments on
// the commented object, comment on it, delete a comment of it. Each handler names its object and how the object is
// presented inside its comments (presented once per answer, only when there is a comment to embed it in).
import { actorOf } from '../access/caller.ts';
import type { Comment as CommentBody } from '../../../generated/client/types.gen.ts';
import { noContent, type HandlerContext } from '../../http/handler.ts';
import { answerWith, type Answer } from '../../http/answer.ts';
import { findBudgeted } from '../../db/rows.ts';
import { listBudget, listPlace } from '../../http/pagination.ts';
import { authorize, type NoteScope, type PageScope } from '../access/scope.ts';
import type { Note } from '../notes/note.entity.ts';
import { Comment, type CommentedObject } from './comment.entity.ts';
import { presentComment, type CommentTarget } from './comment.presenter.ts';
import { COMMENT_TEXT_BYTES } from './comments.repository.ts';
import { commentsOn, createComment, deleteComment, findCommentOn, loadCommentViews, oldestFirst, type NewComment } from './comments.service.ts';

type Scope = NoteScope | PageScope;
type PresentTarget = () => Promise<CommentTarget>;

const callerOf = (scope: Scope) => ({ id: scope.caller.user.id, role: scope.role });

/**
 * The long text of the commented object as each comment embeds it, in bytes: the note's description (sent as
 * `description_html`), and an issue's description (sent as `description` and `description_html`). A page is
 * embedded without its content. A request (its pages' diffs) is presented before the list is read, and measured.
 */
function embeddedTextBytes(note: Note, target: CommentedObject): number {
  const description = (text: string | null | undefined) => Buffer.byteLength(text ?? '', 'utf8');
  return description(note.description) + (target.type === 'issue' ? 2 * description(target.issue.description) : 0);
}

/** The bytes a presented request adds to each comment that embeds it (its pages' diffs can be long): measured. */
const presentedBytes = (target: CommentTarget) => (target.type === 'request' ? Buffer.byteLength(JSON.stringify(target.request), 'utf8') : 0);

/** One page of the comments on `target`, oldest first, with its place in the list (the pagination headers). */
export async function listCommentsOn(
  context: HandlerContext,
  scope: Scope,
  target: CommentedObject,
  query: { page?: number | undefined; per_page?: number | undefined },
  presentTarget: PresentTarget,
): Promise<Answer<CommentBody[]>> {
  // a page of results ends early at LIMIT_LIST_TEXT_BYTES of text: each comment's body, and the text of the commented
  // object that every comment embeds (one object in memory, json.ts `shared`, but sent in each comment)
  const presentedFirst = target.type === 'request' ? await presentTarget() : undefined;
  const embedded = embeddedTextBytes(scope.note, target) + (presentedFirst ? presentedBytes(presentedFirst) : 0);
  const { items: comments, total, page } = await findBudgeted(context.em, Comment, commentsOn(scope.note, target), {
    populate: ['user'],
    orderBy: oldestFirst,
  }, `${COMMENT_TEXT_BYTES} + ${embedded}`, listBudget(context, query));
  const list = listPlace(page, total);
  if (comments.length === 0) return answerWith([], { list });
  const views = await loadCommentViews(context.em, callerOf(scope), comments, presentedFirst ?? await presentTarget());
  return answerWith(views.map((view) => presentComment(view, context.urls)), { list });
}

/** A new comment on `target` by the caller, presented from what was written (no read-back). */
export async function commentOn(context: HandlerContext, scope: Scope, target: CommentedObject, input: NewComment, presentTarget: PresentTarget): Promise<CommentBody> {
  const { comment, mentioned } = await createComment(context.em, actorOf(scope.caller), scope.note, target, input);
  return presentComment({ comment, author: scope.caller.user, mentions: mentioned, caller: callerOf(scope), target: await presentTarget() }, context.urls);
}

/** Deletes comment `id` of `target`: its author, or a manager of the note's team. */
export async function deleteCommentOn(context: HandlerContext, scope: Scope, target: CommentedObject, id: number): Promise<typeof noContent> {
  const comment = await findCommentOn(context.em, scope.note, target, id);
  authorize(scope, 'comment.delete', { authorId: comment.user.id });
  await deleteComment(context.em, actorOf(scope.caller), scope.note, target, comment);
  return noContent;
}
