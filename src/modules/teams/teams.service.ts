// Team changes that touch several rows, each in one transaction. The team row is locked before the managers are
// counted, so two concurrent demotions cannot both pass the "at least one manager" check.
import { sql } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, forbidden, notFound, unprocessable } from '../../http/errors.ts';
import { teamPolicy, type Role } from '../access/policy.ts';
import { nameIsTaken, findUserByUsername } from '../users/users.service.ts';
import type { User } from '../users/user.entity.ts';
import { teamNameProblem } from './names.ts';
import { Membership, Team, type TeamRole } from './team.entity.ts';

/** The team of this name (case-insensitively), or null. */
export async function findTeam(em: EntityManager, name: string): Promise<Team | null> {
  return em.findOne(Team, { [sql.lower('name')]: name.toLowerCase() });
}

/** The team of this name, or 404. */
export async function findTeamByName(em: EntityManager, name: string): Promise<Team> {
  const team = await findTeam(em, name);
  if (!team) throw notFound('team');
  return team;
}

function checkName(name: string, pointer: string): void {
  const problem = teamNameProblem(name);
  if (problem) {
    const code = problem.endsWith('is reserved') ? 'reserved_name' : 'invalid_name';
    throw unprocessable(code, `team name ${problem}`, [{ pointer, detail: problem }]);
  }
}

async function lockTeam(em: EntityManager, teamId: number): Promise<void> {
  await em.execute('select id from teams where id = ? for update', [teamId]);
}

export async function createTeam(em: EntityManager, caller: User, name: string): Promise<Team> {
  checkName(name, '/team/name');
  return em.transactional(async (tx) => {
    if (await nameIsTaken(tx, name)) throw conflict('name_taken', `the name "${name}" is already taken by a user or team`);
    const team = tx.create(Team, { name, isDefault: false, plan: 'free', fullname: null, url: null, description: null });
    tx.create(Membership, { team, user: caller, role: 'manager' });
    await tx.flush();
    return team;
  });
}

export function requireManager(role: Role): void {
  if (!teamPolicy.manage(role)) throw forbidden('only a manager of the team may do this');
}

export async function renameTeam(em: EntityManager, team: Team, name: string): Promise<Team> {
  checkName(name, '/team/name');
  if (team.isDefault && name !== team.name) {
    throw unprocessable('default_team', "a user's default team keeps the user's name", [{ pointer: '/team/name', detail: 'cannot rename a default team' }]);
  }
  if (name === team.name) return team;
  return em.transactional(async (tx) => {
    const sameNameOtherCase = name.toLowerCase() === team.name.toLowerCase();
    if (!sameNameOtherCase && (await nameIsTaken(tx, name))) throw conflict('name_taken', `the name "${name}" is already taken by a user or team`);
    const managed = await tx.findOneOrFail(Team, team.id);
    managed.name = name;
    await tx.flush();
    return managed;
  });
}

export async function deleteTeam(em: EntityManager, team: Team): Promise<void> {
  if (team.isDefault) throw unprocessable('default_team', "a user's default team cannot be deleted");
  // notes, their pages and everything in them go with the team (foreign keys cascade)
  await em.execute('delete from teams where id = ?', [team.id]);
}

/** Adds a user to the team, or changes the role of a user already in it. */
export async function setTeamUser(em: EntityManager, team: Team, username: string, role: TeamRole): Promise<void> {
  const user = await findUserByUsername(em, username);
  if (!user) throw unprocessable('unprocessable', `no user is named "${username}"`, [{ pointer: '/username', detail: 'no such user' }]);
  await em.transactional(async (tx) => {
    await lockTeam(tx, team.id);
    const existing = await tx.findOne(Membership, { team: team.id, user: user.id });
    if (!existing) {
      tx.create(Membership, { team: team.id, user: user.id, role });
    } else if (existing.role !== role) {
      if (existing.role === 'manager' && (await managerCount(tx, team.id)) <= 1) {
        throw conflict('last_manager', 'a team keeps at least one manager; make someone else a manager first');
      }
      existing.role = role;
    }
    await tx.flush();
  });
}

export async function removeTeamUser(em: EntityManager, team: Team, userId: number): Promise<void> {
  await em.transactional(async (tx) => {
    await lockTeam(tx, team.id);
    const membership = await tx.findOne(Membership, { team: team.id, user: userId }, { populate: ['user'] });
    if (!membership) throw notFound('team member');
    if (team.isDefault && membership.user.username.toLowerCase() === team.name.toLowerCase()) {
      throw unprocessable('default_team', "a user cannot be removed from their own default team");
    }
    if (membership.role === 'manager' && (await managerCount(tx, team.id)) <= 1) {
      throw conflict('last_manager', 'a team keeps at least one manager; make someone else a manager first');
    }
    tx.remove(membership);
    await tx.flush();
  });
}

async function managerCount(em: EntityManager, teamId: number): Promise<number> {
  return em.count(Membership, { team: teamId, role: 'manager' });
}
