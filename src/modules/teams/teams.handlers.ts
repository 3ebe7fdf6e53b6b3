import { sql } from '@mikro-orm/core';
import type {
  AddTeamUserData, AddTeamUserResponse, CreateTeamData, CreateTeamResponse, DeleteTeamData, GetTeamData, GetTeamResponse,
  ListTeamNotesData, ListTeamNotesResponse, ListTeamsData, ListTeamsResponse, RemoveTeamUserData, RemoveTeamUserResponse,
  UpdateTeamData, UpdateTeamResponse,
} from '../../../generated/client/types.gen.ts';
import { noContent, operation, type HandlerContext } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { Note } from '../notes/note.entity.ts';
import { loadNoteViews, recentFirst } from '../notes/notes.loader.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { roleIn } from '../access/roles.ts';
import { Membership, Team } from './team.entity.ts';
import { presentTeam } from './team.presenter.ts';
import { loadTeamViews } from './teams.loader.ts';
import { createTeam, deleteTeam, findTeamByName, removeTeamUser, renameTeam, requireManager, setTeamUser } from './teams.service.ts';

async function presentOne(context: HandlerContext, team: Team) {
  const [view] = await loadTeamViews(context.em.fork(), context.user.id, [team]);
  return presentTeam(view!, context.urls);
}

async function managedTeam(context: HandlerContext, name: string): Promise<Team> {
  const team = await findTeamByName(context.em, name);
  requireManager(await roleIn(context.em, context.user.id, team.id));
  return team;
}

const updateTeam = operation<UpdateTeamData, UpdateTeamResponse>(async ({ path, body }, context) => {
  const team = await managedTeam(context, path.team);
  return presentOne(context, await renameTeam(context.em, team, body.team.name));
});

export const teamOperations = {
  /** The teams the caller belongs to. */
  listTeams: operation<ListTeamsData, ListTeamsResponse>(async ({ query }, context) => {
    const page = pagination(query);
    const [teams, total] = await context.em.findAndCount(
      Team,
      { memberships: { user: context.user.id } },
      { orderBy: [{ isDefault: 'desc' }, { [sql.lower('name')]: 'asc' }, { id: 'asc' }], limit: page.perPage, offset: page.offset },
    );
    sendPaginationHeaders(context, page, total);
    const views = await loadTeamViews(context.em, context.user.id, teams);
    return views.map((view) => presentTeam(view, context.urls));
  }),

  getTeam: operation<GetTeamData, GetTeamResponse>(async ({ path }, context) =>
    presentOne(context, await findTeamByName(context.em, path.team)),
  ),

  /** The team's notes the caller may read: all of them for members, the ones that are not private for others. */
  listTeamNotes: operation<ListTeamNotesData, ListTeamNotesResponse>(async ({ path, query }, context) => {
    const team = await findTeamByName(context.em, path.team);
    const member = (await context.em.count(Membership, { team: team.id, user: context.user.id })) > 0;
    const page = pagination(query);
    const [notes, total] = await context.em.findAndCount(
      Note,
      member ? { team: team.id } : { team: team.id, isPrivate: false },
      { populate: ['team'], orderBy: recentFirst, limit: page.perPage, offset: page.offset },
    );
    sendPaginationHeaders(context, page, total);
    const views = await loadNoteViews(context.em, context.user.id, notes);
    return views.map((view) => presentNote(view, context.urls, 'read'));
  }),

  createTeam: operation<CreateTeamData, CreateTeamResponse>(async ({ body }, context) =>
    presentOne(context, await createTeam(context.em, context.user, body.team.name)),
  ),

  updateTeam,
  updateTeamViaPatch: updateTeam,

  deleteTeam: operation<DeleteTeamData, never>(async ({ path }, context) => {
    await deleteTeam(context.em, await managedTeam(context, path.team));
    return noContent;
  }),

  /** Adds a user by username with a role, or changes the role of a user already in the team. */
  addTeamUser: operation<AddTeamUserData, AddTeamUserResponse>(async ({ path, body }, context) => {
    const team = await managedTeam(context, path.team);
    await setTeamUser(context.em, team, body.username, body.role ?? 'member');
    return presentOne(context, team);
  }),

  /** Managers remove anyone; any user may also remove themselves (leave the team). */
  removeTeamUser: operation<RemoveTeamUserData, RemoveTeamUserResponse>(async ({ path }, context) => {
    const team = await findTeamByName(context.em, path.team);
    if (path.id !== context.user.id) await managedTeam(context, path.team);
    await removeTeamUser(context.em, team, path.id);
    return presentOne(context, team);
  }),
};
