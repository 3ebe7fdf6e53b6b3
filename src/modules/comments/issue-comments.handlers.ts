// Comments on an issue (`type` = `issue`): the same service as note and page comments (size limit, mentions,
// notifications, activity log), with the issue, found by its index in the note, as the commented object.
import { defineOperation, noContent, readerOf, type HandlerContext } from '../../http/handler.ts';
import { shared } from '../../http/json.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { authorize, type NoteScope } from '../access/scope.ts';
import { presentIssue } from '../issues/issue.presenter.ts';
import { loadIssueView, requireIssueInNote, type LoadedIssue } from '../issues/issues.loader.ts';
import { Comment } from './comment.entity.ts';
import { presentComment, type CommentTarget } from './comment.presenter.ts';
import { commentsOn, createComment, deleteComment, findCommentOn, loadCommentViews, oldestFirst } from './comments.service.ts';

/** The issue as every comment on it embeds it: presented once, shared by the whole list. */
async function issueTarget(context: HandlerContext, issue: LoadedIssue): Promise<CommentTarget> {
  return { type: 'issue', issue: shared(presentIssue(await loadIssueView(readerOf(context), issue), context.urls)) };
}

const callerOf = (scope: NoteScope) => ({ id: scope.caller.user.id, role: scope.role });

export const issueCommentOperations = {
  listIssueComments: defineOperation('listIssueComments', { scope: 'note' }, async ({ path, query }, scope, context) => {
    const issue = await requireIssueInNote(context.em, scope.note.id, path.index);
    const results = pagination(query);
    const [comments, total] = await context.em.findAndCount(Comment, commentsOn(scope.note, { type: 'issue', issue }), {
      populate: ['user'],
      orderBy: oldestFirst,
      limit: results.perPage,
      offset: results.offset,
    });
    sendPaginationHeaders(context, results, total);
    if (comments.length === 0) return [];
    const views = await loadCommentViews(context.em, callerOf(scope), comments, await issueTarget(context, issue));
    return views.map((view) => presentComment(view, context.urls));
  }),

  createIssueComment: defineOperation('createIssueComment', { scope: 'note' }, async ({ path, body }, scope, context) => {
    authorize(scope, 'note.comment', scope.note);
    const issue = await requireIssueInNote(context.em, scope.note.id, path.index);
    const { comment, mentioned } = await createComment(context.em, scope.caller.user, scope.note, { type: 'issue', issue }, {
      comment: body.comment.comment,
      mentions: body.mentions,
    });
    return presentComment({ comment, author: scope.caller.user, mentions: mentioned, caller: callerOf(scope), target: await issueTarget(context, issue) }, context.urls);
  }),

  /** The author, or a manager of the note's team. */
  deleteIssueComment: defineOperation('deleteIssueComment', { scope: 'note' }, async ({ path }, scope, context) => {
    const issue = await requireIssueInNote(context.em, scope.note.id, path.index);
    const target = { type: 'issue', issue } as const;
    const comment = await findCommentOn(context.em, scope.note, target, path.id);
    authorize(scope, 'comment.delete', { authorId: comment.user.id });
    await deleteComment(context.em, scope.caller.user, scope.note, target, comment);
    return noContent;
  }),
};
