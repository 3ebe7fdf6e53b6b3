import type { EntityManager } from '@mikro-orm/postgresql';
import { Membership } from '../teams/team.entity.ts';
import type { Role } from './policy.ts';

/** The role in one team of each of the given users (absent: not in the team), in one query. */
export async function rolesOfUsersInTeam(em: EntityManager, teamId: number, userIds: readonly number[]): Promise<Map<number, Role>> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return new Map();
  const memberships = await em.find(Membership, { team: teamId, user: { $in: unique } });
  return new Map(memberships.map((membership) => [membership.user.id, membership.role]));
}
