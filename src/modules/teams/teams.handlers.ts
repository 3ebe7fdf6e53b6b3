import { sql } from '@mikro-orm/core';
import { actorOf } from '../access/caller.ts';
import { defineOperation, noContent, readerOf, type HandlerContext } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { findBudgeted } from '../../db/rows.ts';
import { listBudget, listPlace, pagination } from '../../http/pagination.ts';
import { authorize } from '../access/scope.ts';
import { Note } from '../notes/note.entity.ts';
import { loadNoteViews, recentFirst } from '../notes/notes.loader.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { NOTE_TEXT_BYTES } from '../notes/notes.repository.ts';
import { Team } from './team.entity.ts';
import { presentTeam } from './team.presenter.ts';
import { loadTeamViews } from './teams.loader.ts';
import { createTeam, deleteTeam, removeTeamUser, renameTeam, setTeamUser } from './teams.service.ts';

/** Presents a team with its members as they are now (one query for the memberships). */
async function present(context: HandlerContext, team: Team) {
  const [view] = await loadTeamViews(readerOf(context), [team]);
  return presentTeam(view!, context.urls);
}

export const teamOperations = {
  /** The teams the caller belongs to. */
  listTeams: defineOperation('listTeams', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const page = pagination(query);
    const [teams, total] = await context.em.findAndCount(
      Team,
      { memberships: { user: caller.user.id } },
      { orderBy: [{ isDefault: 'desc' }, { [sql.ref('name_key')]: 'asc' }, { id: 'asc' }], limit: page.perPage, offset: page.offset },
    );
    const list = listPlace(page, total);
    const views = await loadTeamViews(readerOf(context), teams);
    return answerWith(views.map((view) => presentTeam(view, context.urls)), { list });
  }),

  getTeam: defineOperation('getTeam', { scope: 'team', action: 'team.read' }, async (_input, scope, context) => {
    return present(context, scope.team);
  }),

  /** The team's notes the caller may read: all of them for members, the ones that are not private for others. */
  listTeamNotes: defineOperation('listTeamNotes', { scope: 'team', action: 'team.read' }, async ({ query }, scope, context) => {
    const { items: notes, total, page } = await findBudgeted(
      context.em,
      Note,
      scope.role !== undefined ? { team: scope.team.id } : { team: scope.team.id, isPrivate: false },
      { populate: ['team'], orderBy: recentFirst },
      NOTE_TEXT_BYTES,
      listBudget(context, query),
    );
    const list = listPlace(page, total);
    const views = await loadNoteViews(readerOf(context), notes);
    return answerWith(views.map((view) => presentNote(view, context.urls, 'read')), { list });
  }),

  createTeam: defineOperation('createTeam', { scope: 'caller', action: 'signed-in' }, async ({ body }, { caller }, context) =>
    present(context, await createTeam(context.em, actorOf(caller), body.team.name)),
  ),

  updateTeam: defineOperation('updateTeam', { scope: 'team', action: 'team.manage' }, async ({ body }, scope, context) => {
    return present(context, await renameTeam(context.em, actorOf(scope.caller), scope.team, body.team.name));
  }),
  updateTeamViaPatch: defineOperation('updateTeamViaPatch', { scope: 'team', action: 'team.manage' }, async ({ body }, scope, context) => {
    return present(context, await renameTeam(context.em, actorOf(scope.caller), scope.team, body.team.name));
  }),

  deleteTeam: defineOperation('deleteTeam', { scope: 'team', action: 'team.manage' }, async (_input, scope, context) => {
    await deleteTeam(context.em, actorOf(scope.caller), scope.team);
    return noContent;
  }),

  /** Adds a user by username with a role, or changes the role of a user already in the team. */
  addTeamUser: defineOperation('addTeamUser', { scope: 'team', action: 'team.manage' }, async ({ body }, scope, context) => {
    await setTeamUser(context.em, actorOf(scope.caller), scope.team, body.username, body.role ?? 'member');
    return present(context, scope.team);
  }),

  /** Managers remove anyone; any user may also remove themselves (leave the team). */
  removeTeamUser: defineOperation('removeTeamUser', { scope: 'team', action: 'team.removeUser' }, async ({ path }, scope, context) => {
    authorize(scope, 'team.removeUser', { userId: path.id });
    await removeTeamUser(context.em, actorOf(scope.caller), scope.team, path.id);
    return present(context, scope.team);
  }),
};
