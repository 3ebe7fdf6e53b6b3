// The access module's SQL: a request's scope (team, note, page) with the caller's role and whether the caller's token
// is still alive, each in one prepared statement per request (scope.ts maps the rows and decides 404s).
//
// Placeholders: these are prepared statements (db/rows.ts, `preparedQuery`) sent to node-postgres directly, which
// only takes `$1`: the one exception to the ORM's `?`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { aliasedColumns, preparedQuery } from '../../db/rows.ts';
import { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { Team } from '../teams/team.entity.ts';

/**
 * A scope's row: `token_alive`, the caller's `role` (null outside the team), and the named objects' columns as
 * `t.<column>`, `n.<column>`, `p.<column>` (null where not found).
 */
export type ScopeRow = Record<string, unknown>;

/** The team whose name has this key, with the caller's role in it; the row is there even when the team is not. */
export async function teamScopeRow(em: EntityManager, nameKey: string, userId: number, tokenId: number): Promise<ScopeRow> {
  const rows = await preparedQuery<ScopeRow>(
    em,
    'scope_team',
    `select k.token_alive, ${aliasedColumns(em, Team, 't')}, m.role as "role"
       from (select exists (select 1 from tokens where id = $3 and (expires_at is null or expires_at > now())) as token_alive) k
       left join teams t on t.name_key = $1
       left join memberships m on m.team_id = t.id and m.user_id = $2`,
    [nameKey, userId, tokenId],
  );
  return rows[0]!;
}

/** The team and its note (by id or slug), with the caller's role in the team. */
export async function noteScopeRow(
  em: EntityManager,
  teamNameKey: string,
  note: { id: number | null; slug: string | null },
  userId: number,
  tokenId: number,
): Promise<ScopeRow | undefined> {
  const rows = await preparedQuery<ScopeRow>(
    em,
    'scope_note',
    `select k.token_alive, ${aliasedColumns(em, Team, 't')}, ${aliasedColumns(em, Note, 'n')}, m.role as "role"
       from (select exists (select 1 from tokens where id = $5 and (expires_at is null or expires_at > now())) as token_alive) k
       left join teams t on t.name_key = $1
       left join notes n on n.team_id = t.id and (n.id = $2 or n.slug = $3)
       left join memberships m on m.team_id = t.id and m.user_id = $4`,
    [teamNameKey, note.id, note.slug, userId, tokenId],
  );
  return rows[0];
}

/**
 * The team, its note and the note's page, with the caller's roles in the team and (for a fork) the original's team,
 * and the latest revisions of the note, its team, the original and its team: what a cached view of the page is keyed by.
 */
export async function pageScopeRow(
  em: EntityManager,
  teamNameKey: string,
  note: { id: number | null; slug: string | null },
  userId: number,
  pageId: number,
  tokenId: number,
): Promise<ScopeRow | undefined> {
  const rows = await preparedQuery<ScopeRow>(
    em,
    'scope_page',
    `select k.token_alive, ${aliasedColumns(em, Team, 't')}, ${aliasedColumns(em, Note, 'n')}, ${aliasedColumns(em, Page, 'p')},
            m.role as "role", om.role as "original_role", o.team_id as "original_team_id",
            (select max(r.id) from revisions r where r.kind = 'n' and r.target_id = n.id) as "note_revision",
            (select max(r.id) from revisions r where r.kind = 't' and r.target_id = t.id) as "team_revision",
            (select max(r.id) from revisions r where r.kind = 'n' and r.target_id = o.id) as "original_revision",
            (select max(r.id) from revisions r where r.kind = 't' and r.target_id = o.team_id) as "original_team_revision"
       from (select exists (select 1 from tokens where id = $6 and (expires_at is null or expires_at > now())) as token_alive) k
       left join teams t on t.name_key = $1
       left join notes n on n.team_id = t.id and (n.id = $2 or n.slug = $3)
       left join memberships m on m.team_id = t.id and m.user_id = $4
       left join pages p on p.id = $5 and p.note_id = n.id
       left join notes o on o.id = n.forked_from_id
       left join memberships om on om.team_id = o.team_id and om.user_id = $4`,
    [teamNameKey, note.id, note.slug, userId, pageId, tokenId],
  );
  return rows[0];
}
