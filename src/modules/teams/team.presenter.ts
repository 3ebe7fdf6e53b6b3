import type { Team as TeamBody, User as UserBody } from '../../../generated/client/types.gen.ts';
import { shared } from '../../http/json.ts';
import type { Urls } from '../../http/urls.ts';
import type { Role } from '../access/policy.ts';
import type { Team } from './team.entity.ts';
import type { TeamMembers } from './team-members.ts';

/** A team with everything its presentation embeds: its members (presented, teams.loader.ts) and the caller's role. */
export type TeamView = { team: Team; members: TeamMembers; role: Role; callerId: number };

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

function presentTeamNow({ team, members, role }: TeamView, urls: Urls): TeamBody {
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
    // the very lists kept for the team (never changed once presented), so their JSON is made once
    managers: members.managers as UserBody[],
    members: members.members as UserBody[],
    plan: team.plan,
    model: 'team',
  };
}
