// Comments on a note itself (`type` = `note`): the same service as page comments (size limit, mentions,
// notifications, activity log), with the note as the commented object.
import { defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import { shared } from '../../http/json.ts';
import type { NoteScope } from '../access/scope.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { commentOn, deleteCommentOn, listCommentsOn } from './comment-operations.ts';
import type { CommentTarget } from './comment.presenter.ts';

const onNote = { type: 'note' } as const;

/** The note as every comment on it embeds it: presented once, shared by the whole list. */
const noteTarget = (context: HandlerContext, scope: NoteScope) => async (): Promise<CommentTarget> =>
  ({ type: 'note', note: shared(presentNote(await loadNoteView(readerOf(context), scope.note), context.urls, 'read')) });

export const noteCommentOperations = {
  listNoteComments: defineOperation('listNoteComments', { scope: 'note', action: 'note.read' }, async ({ query }, scope, context) =>
    listCommentsOn(context, scope, onNote, query, noteTarget(context, scope))),

  createNoteComment: defineOperation('createNoteComment', { scope: 'note', action: 'note.comment' }, async ({ body }, scope, context) =>
    commentOn(context, scope, onNote, { comment: body.comment.comment, mentions: body.mentions }, noteTarget(context, scope))),

  /** The author, or a manager of the note's team. */
  deleteNoteComment: defineOperation('deleteNoteComment', { scope: 'note', action: 'comment.delete' }, async ({ path }, scope, context) =>
    deleteCommentOn(context, scope, onNote, path.id)),
};
