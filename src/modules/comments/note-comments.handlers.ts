// Comments on a note itself (`type` = `note`): the same service as page comments (size limit, mentions,
// notifications, activity log), with the note as the commented object.
import { defineOperation, noContent, type HandlerContext, readerOf } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { shared } from '../../http/json.ts';
import { authorize, type NoteScope } from '../access/scope.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { Comment } from './comment.entity.ts';
import { presentComment, type CommentTarget } from './comment.presenter.ts';
import { commentsOn, createComment, deleteComment, findCommentOn, loadCommentViews, oldestFirst } from './comments.service.ts';

const onNote = { type: 'note' } as const;

/** The note as every comment on it embeds it: presented once, shared by the whole list. */
async function noteTarget(context: HandlerContext, scope: NoteScope): Promise<CommentTarget> {
  return { type: 'note', note: shared(presentNote(await loadNoteView(readerOf(context), scope.note), context.urls, 'read')) };
}

export const noteCommentOperations = {
  listNoteComments: defineOperation('listNoteComments', { scope: 'note' }, async ({ query }, scope, context) => {
    const results = pagination(query);
    const [comments, total] = await context.em.findAndCount(Comment, commentsOn(scope.note, onNote), {
      populate: ['user'],
      orderBy: oldestFirst,
      limit: results.perPage,
      offset: results.offset,
    });
    sendPaginationHeaders(context, results, total);
    if (comments.length === 0) return [];
    const views = await loadCommentViews(context.em, { id: scope.caller.user.id, role: scope.role }, comments, await noteTarget(context, scope));
    return views.map((view) => presentComment(view, context.urls));
  }),

  createNoteComment: defineOperation('createNoteComment', { scope: 'note' }, async ({ body }, scope, context) => {
    authorize(scope, 'note.comment', scope.note);
    const { comment, mentioned } = await createComment(context.em, scope.caller.user, scope.note, onNote, {
      comment: body.comment.comment,
      mentions: body.mentions,
    });
    const caller = { id: scope.caller.user.id, role: scope.role };
    return presentComment({ comment, author: scope.caller.user, mentions: mentioned, caller, target: await noteTarget(context, scope) }, context.urls);
  }),

  /** The author, or a manager of the note's team. */
  deleteNoteComment: defineOperation('deleteNoteComment', { scope: 'note' }, async ({ path }, scope, context) => {
    const comment = await findCommentOn(context.em, scope.note, onNote, path.id);
    authorize(scope, 'comment.delete', { authorId: comment.user.id });
    await deleteComment(context.em, scope.caller.user, scope.note, onNote, comment);
    return noContent;
  }),
};
