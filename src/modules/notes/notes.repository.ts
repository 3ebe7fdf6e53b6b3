// The notes module's SQL, where its ORM entities do not express it: the size of a note's text in a list, whether a
// fork can pull (notes.loader.ts; the requests' and pages' statements embed the same condition), notes with their
// teams by id, a note's contributors (contributors.handlers.ts) and a note's delete (notes.service.ts).
//
// Placeholders: `?` for em.execute, as everywhere. The one exception: `notesWithTeams` is a prepared statement
// (db/rows.ts, `preparedQuery`) sent to node-postgres directly, which only takes `$1`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { aliasedColumns, mapAliased, preparedQuery } from '../../db/rows.ts';
import { Team } from '../teams/team.entity.ts';
import { Note } from './note.entity.ts';

/** A note's text in a list, in bytes as stored: its description, sent as `description_html` (db/rows.ts, `findBudgeted`). */
export const NOTE_TEXT_BYTES = 'octet_length(item.description)';

/**
 * SQL condition: the original (`originalId`, an SQL expression) has a change the fork (`fork`, a table alias) has not
 * pulled: a page the fork has whose latest version is not that fork page's base, a page created in the original
 * since the fork's last pull that the fork lacks (what pullFork copies in), a page the fork deleted that the
 * original changed since (a `delete_modify` to resolve), or a fork page whose original page was deleted (pulling
 * deletes it, or asks). A page the fork deleted on purpose, and that did not change since, counts for nothing.
 */
export function originalChangedSql(fork: string, originalId: string): string {
  return `(exists (
    select 1 from pages original_page
      join page_versions latest on latest.page_id = original_page.id and latest.index = original_page.version_sequence
     where original_page.note_id = ${originalId}
       and (exists (select 1 from pages fork_page
                     where fork_page.note_id = ${fork}.id and fork_page.origin_page_id = original_page.id
                       and fork_page.base_version_id is distinct from latest.id)
            or exists (select 1 from fork_deletions deleted
                        where deleted.note_id = ${fork}.id and deleted.upstream_page_id = original_page.id
                          and deleted.base_version_id is distinct from latest.id)
            or (original_page.created_at >= coalesce(${fork}.pulled_at, ${fork}.created_at)
                and not exists (select 1 from pages fork_page
                                 where fork_page.note_id = ${fork}.id and fork_page.origin_page_id = original_page.id)
                and not exists (select 1 from fork_deletions deleted
                                 where deleted.note_id = ${fork}.id and deleted.upstream_page_id = original_page.id))))
    or exists (select 1 from pages fork_page
                where fork_page.note_id = ${fork}.id and fork_page.upstream_page_id is not null and fork_page.origin_page_id is null))`;
}

/** The forks (of those given) whose original has a change they have not pulled: a list shows which can pull. */
export async function forksThatCanPull(em: EntityManager, forkIds: readonly number[]): Promise<Set<number>> {
  if (forkIds.length === 0) return new Set();
  const rows = await em.execute<{ id: number }[]>(
    `select fork.id from notes fork
      where fork.id = any(?::int[]) and fork.forked_from_id is not null
        and ${originalChangedSql('fork', 'fork.forked_from_id')}`,
    [`{${forkIds.join(',')}}`],
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * The notes of these ids with their teams, mapped to entities, in one prepared statement (no ORM query building:
 * search answers 100 notes at a time); in no particular order, ids not found left out.
 */
export async function notesWithTeams(em: EntityManager, ids: readonly number[]): Promise<Note[]> {
  const rows = await preparedQuery<Record<string, unknown>>(
    em,
    'notes_by_ids',
    `select ${aliasedColumns(em, Team, 't')}, ${aliasedColumns(em, Note, 'n')}
       from notes n join teams t on t.id = n.team_id
      where n.id = any($1::int[])`,
    [`{${ids.join(',')}}`],
  );
  return rows.map((row) => {
    mapAliased(em, Team, row, 't');
    return mapAliased(em, Note, row, 'n')!;
  });
}

/**
 * The co-authors of the note's versions, of users that exist (no foreign key): `user_id`, and `sort_key`, the
 * version's id and the co-author's place in it (after the version's author, who is at 0).
 */
const coAuthorRows = `co.user_id, array[v.id, co.place::int] as sort_key
  from page_versions v cross join unnest(v.co_author_ids) with ordinality as co(user_id, place)
  join users u on u.id = co.user_id where v.note_id = ? and v.co_author_ids <> '{}'`;

/**
 * One page of the note's contributors (its creator, then everyone who wrote a version of its pages or is named as a
 * co-author of one, in the order of their first contribution), each row with the list's total: one statement for the
 * page and its count.
 */
export async function contributorRows(em: EntityManager, noteId: number, limit: number, offset: number): Promise<{ user_id: number; total: string }[]> {
  return em.execute<{ user_id: number; total: string }[]>(
    `select user_id, count(*) over () as total from (
         select user_id, min(sort_key) as first from (
           select user_id, array[0, 0] as sort_key from notes where id = ?
           union all
           select user_id, array[id, 0] as sort_key from page_versions where note_id = ?
           union all
           select ${coAuthorRows}
         ) contributions group by user_id
       ) firsts order by first, user_id limit ? offset ?`,
    [noteId, noteId, noteId, limit, offset],
  );
}

/** How many contributors the note has: asked only for a page past the end, whose rows carry no total. */
export async function contributorCount(em: EntityManager, noteId: number): Promise<number> {
  const [row] = await em.execute<{ n: string }[]>(
    `select count(distinct user_id) as n from (select user_id from notes where id = ? union all select user_id from page_versions where note_id = ?
       union all select user_id from (select ${coAuthorRows}) co_authors) c`,
    [noteId, noteId, noteId],
  );
  return Number(row!.n);
}

/** Deletes the note in one statement: pages, versions, issues, comments, attachments and requests go by cascade. */
export async function deleteNoteRow(tx: EntityManager, noteId: number): Promise<void> {
  await tx.execute('delete from notes where id = ?', [noteId]);
}
