import type { EntityManager } from '@mikro-orm/postgresql';
import { Membership, type Team } from './team.entity.ts';
import type { TeamView } from './team.presenter.ts';

/** Memberships (with users) of many teams in one query, grouped by team id in join order. */
export async function membershipsOf(em: EntityManager, teamIds: readonly number[]): Promise<Map<number, Membership[]>> {
  const byTeam = new Map<number, Membership[]>();
  const unique = [...new Set(teamIds)];
  if (unique.length === 0) return byTeam;
  const memberships = await em.find(Membership, { team: { $in: unique } }, { populate: ['user'], orderBy: { id: 'asc' } });
  for (const membership of memberships) {
    const list = byTeam.get(membership.team.id) ?? [];
    list.push(membership);
    byTeam.set(membership.team.id, list);
  }
  return byTeam;
}

/** A team's view from its memberships: the caller's role is read off them, no query of its own. */
export function teamView(team: Team, memberships: ReadonlyMap<number, Membership[]>, callerId: number): TeamView {
  const list = memberships.get(team.id) ?? [];
  return { team, memberships: list, role: list.find((membership) => membership.user.id === callerId)?.role, callerId };
}

/** Everything needed to present these teams to this caller, in one query whatever their number. */
export async function loadTeamViews(em: EntityManager, callerId: number, teams: readonly Team[]): Promise<TeamView[]> {
  const memberships = await membershipsOf(em, teams.map((team) => team.id));
  return teams.map((team) => teamView(team, memberships, callerId));
}
