import { defineOperation, noContent, readerOf, type HandlerContext } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { unprocessable } from '../errors.ts';
import { findBudgeted } from '../../db/rows.ts';
import { listBudget, listPlace } from '../../http/pagination.ts';
import { authorize, findTeamScope, type NoteScope } from '../access/scope.ts';
import { Membership } from '../teams/team.entity.ts';
import { findTeam } from '../teams/teams.service.ts';
import { foldCase } from '../text/fold.ts';
import type { Caller } from '../access/caller.ts';
import { actorOf } from '../access/caller.ts';
import { Note } from './note.entity.ts';
import { presentNote, type NoteVariant } from './note.presenter.ts';
import { NOTE_TEXT_BYTES } from './notes.repository.ts';
import { momentOf } from '../pages/history.ts';
import { loadNoteView, loadNoteViews, recentFirst } from './notes.loader.ts';
import { createNote, deleteNote, updateNote } from './notes.service.ts';
import { contributorOperations } from './contributors.handlers.ts';

/** Presents a note just written, from what is loaded (no read-back of the note itself). */
async function present(context: HandlerContext, note: Note, variant: NoteVariant) {
  return presentNote(await loadNoteView(readerOf(context), note), context.urls, variant);
}

/** The team a note body names: one that does not exist is a valid shape naming nothing (422). */
async function bodyTeam(context: HandlerContext, caller: Caller, name: string) {
  const scope = await findTeamScope(context.em, caller, name);
  if (!scope) throw unprocessable('unknown_team', `no team is named "${name}"`, [{ pointer: '/note/team', detail: 'no such team' }]);
  return scope;
}

const noteFilters = {
  all: {},
  private: { isPrivate: true },
  public: { isPrivate: false },
  fork: { forkedFrom: { $ne: null } },
} as const;

type NoteBodyFields = { title: string; team: string; description?: string | null; slug?: string | null; is_private?: boolean | null };

/** A different `team` moves the note: that takes a manager of its team and a manager of the target. */
async function update(context: HandlerContext, scope: NoteScope, fields: NoteBodyFields) {
  let target = scope.team;
  if (foldCase(fields.team) !== foldCase(scope.team.name)) {
    const targetScope = await bodyTeam(context, scope.caller, fields.team);
    authorize(scope, 'note.manage');
    authorize(targetScope, 'team.manage');
    target = targetScope.team;
  }
  const note = await updateNote(context.em, actorOf(scope.caller), scope.note, target, { ...fields, slugGiven: 'slug' in fields });
  return present(context, note, 'updated');
}

export const noteOperations = {
  /** Notes of the teams the caller belongs to, private ones too. */
  listNotes: defineOperation('listNotes', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const { em } = context;
    let teamIds = (await em.find(Membership, { user: caller.user.id }, { fields: ['team'] })).map((membership) => membership.team.id);
    if (query.team !== undefined) {
      // a team that does not exist, or that the caller is not in, simply contributes no notes
      const team = await findTeam(em, query.team);
      teamIds = teamIds.filter((id) => id === team?.id);
    }
    const { items: notes, total, page } = await findBudgeted(
      em,
      Note,
      { team: { $in: teamIds }, ...noteFilters[query.type ?? 'all'] },
      { populate: ['team'], orderBy: recentFirst },
      NOTE_TEXT_BYTES,
      listBudget(context, query),
    );
    const list = listPlace(page, total);
    const views = await loadNoteViews(readerOf(context), notes);
    return answerWith(views.map((view) => presentNote(view, context.urls, 'read')), { list });
  }),

  /** With `at`: the note for that moment (its pages then: listPages and getPage with the same `at`, history.ts). */
  getNote: defineOperation('getNote', { scope: 'note', action: 'note.read' }, async ({ query }, scope, context) => {
    const at = query.at === undefined ? undefined : momentOf(scope.note, query.at, Date.now());
    const body = await present(context, scope.note, 'read');
    return at ? { ...body, at: at.toISOString() } : body;
  }),

  createNote: defineOperation('createNote', { scope: 'caller', action: 'team.createNote' }, async ({ body }, { caller }, context) => {
    const teamScope = await bodyTeam(context, caller, body.note.team);
    authorize(teamScope, 'team.createNote');
    const note = await createNote(context.em, actorOf(caller), teamScope.team, body.note);
    return present(context, note, 'created');
  }),

  updateNote: defineOperation('updateNote', { scope: 'note', action: 'note.edit' }, async ({ body }, scope, context) => update(context, scope, body.note)),
  updateNoteViaPatch: defineOperation('updateNoteViaPatch', { scope: 'note', action: 'note.edit' }, async ({ body }, scope, context) => update(context, scope, body.note)),

  deleteNote: defineOperation('deleteNote', { scope: 'note', action: 'note.manage' }, async (_input, scope, context) => {
    await deleteNote(context.em, actorOf(scope.caller), scope.note);
    return noContent;
  }),

  ...contributorOperations,
};
