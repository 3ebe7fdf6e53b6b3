// Comments on an issue (`type` = `issue`): the same service as note and page comments (size limit, mentions,
// notifications, activity log), with the issue, found by its index in the note, as the commented object.
import { defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import { shared } from '../../http/json.ts';
import type { NoteScope } from '../access/scope.ts';
import { presentIssue } from '../issues/issue.presenter.ts';
import { loadIssueView, requireIssueInNote, type LoadedIssue } from '../issues/issues.loader.ts';
import { commentOn, deleteCommentOn, listCommentsOn } from './comment-operations.ts';
import type { CommentedObject } from './comment.entity.ts';
import type { CommentTarget } from './comment.presenter.ts';

/** The issue with this index in the scope's note (404 when there is none), as the commented object. */
async function onIssue(context: HandlerContext, scope: NoteScope, index: number): Promise<CommentedObject & { type: 'issue'; issue: LoadedIssue }> {
  return { type: 'issue', issue: await requireIssueInNote(context.em, scope.note.id, index) };
}

/** The issue as every comment on it embeds it: presented once, shared by the whole list. */
const issueTarget = (context: HandlerContext, issue: LoadedIssue) => async (): Promise<CommentTarget> =>
  ({ type: 'issue', issue: shared(presentIssue(await loadIssueView(readerOf(context), issue), context.urls)) });

export const issueCommentOperations = {
  listIssueComments: defineOperation('listIssueComments', { scope: 'note', action: 'note.read' }, async ({ path, query }, scope, context) => {
    const target = await onIssue(context, scope, path.index);
    return listCommentsOn(context, scope, target, query, issueTarget(context, target.issue));
  }),

  createIssueComment: defineOperation('createIssueComment', { scope: 'note', action: 'note.comment' }, async ({ path, body }, scope, context) => {
    const target = await onIssue(context, scope, path.index);
    return commentOn(context, scope, target, { comment: body.comment.comment, mentions: body.mentions }, issueTarget(context, target.issue));
  }),

  /** The author, or a manager of the note's team. */
  deleteIssueComment: defineOperation('deleteIssueComment', { scope: 'note', action: 'comment.delete' }, async ({ path }, scope, context) =>
    deleteCommentOn(context, scope, await onIssue(context, scope, path.index), path.id)),
};
