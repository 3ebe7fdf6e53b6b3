import type { Team as TeamBody } from '../../../generated/client/types.gen.ts';
import { shared } from '../../http/json.ts';
import type { Urls } from '../../http/urls.ts';
import type { Role } from '../access/policy.ts';
import { presentUser } from '../users/user.presenter.ts';
import type { Membership, Team } from './team.entity.ts';

/** A team with everything its presentation embeds: its memberships (users loaded, in join order) and the caller's role. */
export type TeamView = { team: Team; memberships: readonly Membership[]; role: Role; callerId: number };

const presented = new WeakMap<TeamView, TeamBody>();

/** Presented once per view: every note of a list that embeds the team embeds this one object (`shared`). */
export function presentTeam(view: TeamView, urls: Urls): TeamBody {
  let body = presented.get(view);
  if (!body) {
    body = shared(presentTeamNow(view, urls));
    presented.set(view, body);
  }
  return body;
}

function presentTeamNow({ team, memberships, role }: TeamView, urls: Urls): TeamBody {
  return {
    id: team.id,
    name: team.name,
    is_default: team.isDefault,
    created_at: team.createdAt.toISOString(),
    updated_at: team.updatedAt.toISOString(),
    html_url: urls.team(team.name),
    avatar_url: urls.teamAvatar(team.id),
    // absent when the caller is not in the team
    ...(role ? { role } : {}),
    managers: memberships.filter((membership) => membership.role === 'manager').map((membership) => presentUser(membership.user, urls)),
    members: memberships.filter((membership) => membership.role === 'member').map((membership) => presentUser(membership.user, urls)),
    plan: team.plan,
    model: 'team',
  };
}
