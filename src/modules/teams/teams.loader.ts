// The members of teams, presented: every note embeds its team with all its users, so a list of 100 notes of a team of
// 200 needs those 200 users once, not once per note. They are read in one statement for all the teams asked about,
// and kept in memory per team while the change feed hears every change (src/cache/feed-cache.ts; the team's tag, announced when
// a membership, the team or one of its users changes).
import { tags } from '../../cache/tags.ts';
import type { Reader } from '../../cache/memory.ts';
import type { User as UserBody } from '../../../generated/client/types.gen.ts';
import { shared } from '../../http/json.ts';
import { presentUser, type UserFields } from '../users/user.presenter.ts';
import type { Team, TeamRole } from './team.entity.ts';
import type { TeamMembers } from './team-members.ts';
import type { TeamView } from './team.presenter.ts';
import { memberRows, type MemberRow } from './teams.repository.ts';

function userFrom(row: MemberRow): UserFields {
  return {
    id: row['u.id'] as number,
    username: row['u.username'] as string,
    name: row['u.name'] as string,
    lang: row['u.lang'] as string,
    receiveEmail: row['u.receive_email'] as boolean,
    keyboardShortcuts: row['u.keyboard_shortcuts'] as boolean,
    options: (row['u.options'] ?? null) as UserFields['options'],
    createdAt: new Date(row['u.created_at'] as string | Date),
    updatedAt: new Date(row['u.updated_at'] as string | Date),
  };
}

/** The members of each of these teams: from memory where kept, the others in one statement. */
export async function membersOf(reader: Reader, teamIds: readonly number[]): Promise<Map<number, TeamMembers>> {
  const result = new Map<number, TeamMembers>();
  const cache = reader.memory.teamMembers;
  const mark = cache.mark();
  const missing: number[] = [];
  for (const id of new Set(teamIds)) {
    const kept = reader.fresh ? undefined : cache.get(String(id));
    if (kept) result.set(id, kept);
    else missing.push(id);
  }
  if (missing.length === 0) return result;
  const rows = await memberRows(reader.em, missing);
  const building = new Map<number, { roles: Map<number, TeamRole>; managers: UserBody[]; members: UserBody[] }>();
  for (const id of missing) building.set(id, { roles: new Map(), managers: [], members: [] });
  for (const row of rows) {
    const team = building.get(row.team_id)!;
    const user = userFrom(row);
    team.roles.set(user.id, row.role);
    (row.role === 'manager' ? team.managers : team.members).push(presentUser(user, reader.urls));
  }
  for (const [id, members] of building) {
    // the lists are presented once and kept: serialised once too, wherever and however often they are embedded
    shared(members.managers);
    shared(members.members);
    result.set(id, members);
    if (!reader.fresh) cache.keep(String(id), members, [tags.team(id)], mark);
  }
  return result;
}

/** A team's view: the caller's role is read off its members, no query of its own. */
export function teamView(team: Team, members: ReadonlyMap<number, TeamMembers>, callerId: number): TeamView {
  const list = members.get(team.id) ?? { roles: new Map(), managers: [], members: [] };
  return { team, members: list, role: list.roles.get(callerId), callerId };
}

/** Everything needed to present these teams to this caller, in at most one statement whatever their number. */
export async function loadTeamViews(reader: Reader, teams: readonly Team[]): Promise<TeamView[]> {
  const members = await membersOf(reader, teams.map((team) => team.id));
  return teams.map((team) => teamView(team, members, reader.callerId));
}
