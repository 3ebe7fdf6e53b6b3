// Team changes that touch several rows, each in one transaction with its domain event. The team row is locked before
// the managers are counted, so two concurrent demotions cannot both pass the "at least one manager" check. Who may
// make these changes is decided before they are called (the handlers ask the policy table).
import { sql } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, notFound, unprocessable } from '../errors.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import { foldCase } from '../text/fold.ts';
import { nameIsTaken, findUserByUsername } from '../users/users.service.ts';
import { teamNameProblem } from './names.ts';
import { Membership, Team, type TeamRole } from './team.entity.ts';
import { deleteTeamRow, lockTeamRow } from './teams.repository.ts';

/** The team of this name (compared by foldCase with the stored key, `teams.name_key`), or null. */
export async function findTeam(em: EntityManager, name: string): Promise<Team | null> {
  return em.findOne(Team, { [sql.ref('name_key')]: foldCase(name) });
}

function checkName(name: string, pointer: string): void {
  const problem = teamNameProblem(name);
  if (problem) throw unprocessable(problem.code, `team name ${problem.detail}`, [{ pointer, detail: problem.detail }]);
}

export async function createTeam(em: EntityManager, actor: Actor, name: string): Promise<Team> {
  checkName(name, '/team/name');
  return em.transactional(async (tx) => {
    if (await nameIsTaken(tx, name)) throw conflict('name_taken', `the name "${name}" is already taken by a user or team`);
    const team = tx.create(Team, { name, isDefault: false, plan: 'free', fullname: null, url: null, description: null });
    tx.create(Membership, { team, user: actor.id, role: 'manager' });
    await tx.flush();
    await recordEvent(tx, { type: 'team.created', actor, team });
    return team;
  });
}

export async function renameTeam(em: EntityManager, actor: Actor, team: Team, name: string): Promise<Team> {
  checkName(name, '/team/name');
  if (team.isDefault && name !== team.name) {
    throw unprocessable('default_team', "a user's default team keeps the user's name", [{ pointer: '/team/name', detail: 'cannot rename a default team' }]);
  }
  if (name === team.name) return team;
  return em.transactional(async (tx) => {
    const sameNameOtherCase = foldCase(name) === foldCase(team.name);
    if (!sameNameOtherCase && (await nameIsTaken(tx, name))) throw conflict('name_taken', `the name "${name}" is already taken by a user or team`);
    const from = team.name;
    team.name = name;
    await recordEvent(tx, { type: 'team.renamed', actor, team, from });
    return team;
  });
}

export async function deleteTeam(em: EntityManager, actor: Actor, team: Team): Promise<void> {
  if (team.isDefault) throw unprocessable('default_team', "a user's default team cannot be deleted");
  await em.transactional(async (tx) => {
    await recordEvent(tx, { type: 'team.deleted', actor, team });
    await tx.flush();
    // notes, their pages and everything in them go with the team (foreign keys cascade)
    await deleteTeamRow(tx, team.id);
  });
}

/** Adds a user to the team, or changes the role of a user already in it. */
export async function setTeamUser(em: EntityManager, actor: Actor, team: Team, username: string, role: TeamRole): Promise<void> {
  const user = await findUserByUsername(em, username);
  if (!user) throw unprocessable('unknown_user', `no user is named "${username}"`, [{ pointer: '/username', detail: 'no such user' }]);
  await em.transactional(async (tx) => {
    await lockTeamRow(tx, team.id);
    const existing = await tx.findOne(Membership, { team: team.id, user: user.id });
    if (!existing) {
      tx.create(Membership, { team: team.id, user: user.id, role });
      await recordEvent(tx, { type: 'member.added', actor, team, user, role });
    } else if (existing.role !== role) {
      if (existing.role === 'manager' && (await managerCount(tx, team.id)) <= 1) {
        throw conflict('last_manager', 'a team keeps at least one manager; make someone else a manager first');
      }
      existing.role = role;
      await recordEvent(tx, { type: 'member.changed', actor, team, user, role });
    }
  });
}

export async function removeTeamUser(em: EntityManager, actor: Actor, team: Team, userId: number): Promise<void> {
  await em.transactional(async (tx) => {
    await lockTeamRow(tx, team.id);
    const membership = await tx.findOne(Membership, { team: team.id, user: userId }, { populate: ['user'] });
    if (!membership) throw notFound('team member');
    if (team.isDefault && foldCase(membership.user.username) === foldCase(team.name)) {
      throw unprocessable('default_team', "a user cannot be removed from their own default team");
    }
    if (membership.role === 'manager' && (await managerCount(tx, team.id)) <= 1) {
      throw conflict('last_manager', 'a team keeps at least one manager; make someone else a manager first');
    }
    tx.remove(membership);
    await recordEvent(tx, { type: 'member.removed', actor, team, user: membership.user });
  });
}

async function managerCount(em: EntityManager, teamId: number): Promise<number> {
  return em.count(Membership, { team: teamId, role: 'manager' });
}
