// The teams module's SQL: the team row's lock and delete (teams.service.ts) and the members of many teams in one
// statement (teams.loader.ts).
//
// Placeholders: `?` for em.execute, as everywhere. The one exception: `memberRows` is a prepared statement (db/rows.ts,
// `preparedQuery`) sent to node-postgres directly, which only takes `$1`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { aliasedColumns, preparedQuery } from '../../db/rows.ts';
import { User } from '../users/user.entity.ts';
import type { TeamRole } from './team.entity.ts';

/** Locks the team's row for the transaction: membership changes of one team take turns (the last manager stays). */
export async function lockTeamRow(em: EntityManager, teamId: number): Promise<void> {
  await em.execute('select id from teams where id = ? for update', [teamId]);
}

/** Deletes the team in one statement: its notes and everything in them go by the foreign keys' cascade. */
export async function deleteTeamRow(tx: EntityManager, teamId: number): Promise<void> {
  await tx.execute('delete from teams where id = ?', [teamId]);
}

/** A membership with its user's columns as `u.<column>`. */
export type MemberRow = Record<string, unknown> & { team_id: number; role: TeamRole };

/** The memberships of these teams with their users, in membership order: one prepared statement for every team asked about. */
export async function memberRows(em: EntityManager, teamIds: readonly number[]): Promise<MemberRow[]> {
  return preparedQuery<MemberRow>(
    em,
    'team_members',
    `select m.team_id, m.role, ${aliasedColumns(em, User, 'u')}
       from memberships m join users u on u.id = m.user_id
      where m.team_id = any($1::int[]) order by m.id`,
    [`{${teamIds.join(',')}}`],
  );
}
