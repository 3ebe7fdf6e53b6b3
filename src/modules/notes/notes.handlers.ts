import type {
  CreateNoteData, CreateNoteResponse, DeleteNoteData, GetNoteData, GetNoteResponse, ListNotesData, ListNotesResponse,
  UpdateNoteData, UpdateNoteResponse,
} from '../../../generated/client/types.gen.ts';
import { noContent, operation, type HandlerContext } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { Membership } from '../teams/team.entity.ts';
import { findTeam } from '../teams/teams.service.ts';
import { Note } from './note.entity.ts';
import { presentNote, type NoteVariant } from './note.presenter.ts';
import { findReadableNote } from './notes.access.ts';
import { loadNoteView, loadNoteViews, recentFirst } from './notes.loader.ts';
import { createNote, deleteNote, updateNote } from './notes.service.ts';

async function presentOne(context: HandlerContext, noteId: number, variant: NoteVariant) {
  const em = context.em.fork();
  const note = await em.findOneOrFail(Note, noteId, { populate: ['team'] });
  return presentNote(await loadNoteView(em, context.user.id, note), context.urls, variant);
}

const noteFilters = {
  all: {},
  private: { isPrivate: true },
  public: { isPrivate: false },
  fork: { forkedFrom: { $ne: null } },
} as const;

const update = operation<UpdateNoteData, UpdateNoteResponse>(async ({ path, body }, context) => {
  const { note, role } = await findReadableNote(context.em, context.user.id, path.team, path.note);
  const fields = body.note;
  const updated = await updateNote(context.em, context.user, note, role, { ...fields, slugGiven: 'slug' in fields });
  return presentOne(context, updated.id, 'updated');
});

export const noteOperations = {
  /** Notes of the teams the caller belongs to, private ones too. */
  listNotes: operation<ListNotesData, ListNotesResponse>(async ({ query }, context) => {
    const { em, user } = context;
    let teamIds = (await em.find(Membership, { user: user.id }, { fields: ['team'] })).map((membership) => membership.team.id);
    if (query.team !== undefined) {
      // a team that does not exist, or that the caller is not in, simply contributes no notes
      const team = await findTeam(em, query.team);
      teamIds = teamIds.filter((id) => id === team?.id);
    }
    const page = pagination(query);
    const [notes, total] = await em.findAndCount(
      Note,
      { team: { $in: teamIds }, ...noteFilters[query.type ?? 'all'] },
      { populate: ['team'], orderBy: recentFirst, limit: page.perPage, offset: page.offset },
    );
    sendPaginationHeaders(context, page, total);
    const views = await loadNoteViews(em, user.id, notes);
    return views.map((view) => presentNote(view, context.urls, 'read'));
  }),

  getNote: operation<GetNoteData, GetNoteResponse>(async ({ path }, context) => {
    const { note } = await findReadableNote(context.em, context.user.id, path.team, path.note);
    return presentNote(await loadNoteView(context.em, context.user.id, note), context.urls, 'read');
  }),

  createNote: operation<CreateNoteData, CreateNoteResponse>(async ({ body }, context) => {
    const note = await createNote(context.em, context.user, body.note);
    return presentOne(context, note.id, 'created');
  }),

  updateNote: update,
  updateNoteViaPatch: update,

  deleteNote: operation<DeleteNoteData, never>(async ({ path }, context) => {
    const { note, role } = await findReadableNote(context.em, context.user.id, path.team, path.note);
    await deleteNote(context.em, note, role);
    return noContent;
  }),
};

