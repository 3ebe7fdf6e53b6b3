import type { EntityManager } from '@mikro-orm/postgresql';
import { Membership } from '../teams/team.entity.ts';
import type { Role } from './policy.ts';

/** The caller's role in each of the given teams, in one query. */
export async function rolesIn(em: EntityManager, userId: number, teamIds: readonly number[]): Promise<Map<number, Role>> {
  const roles = new Map<number, Role>();
  const unique = [...new Set(teamIds)];
  if (unique.length === 0) return roles;
  const memberships = await em.find(Membership, { user: userId, team: { $in: unique } });
  for (const membership of memberships) roles.set(membership.team.id, membership.role);
  return roles;
}

export async function roleIn(em: EntityManager, userId: number, teamId: number): Promise<Role> {
  return (await rolesIn(em, userId, [teamId])).get(teamId);
}

/** The role in one team of each of the given users (absent: not in the team), in one query. */
export async function rolesOfUsersInTeam(em: EntityManager, teamId: number, userIds: readonly number[]): Promise<Map<number, Role>> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return new Map();
  const memberships = await em.find(Membership, { team: teamId, user: { $in: unique } });
  return new Map(memberships.map((membership) => [membership.user.id, membership.role]));
}
