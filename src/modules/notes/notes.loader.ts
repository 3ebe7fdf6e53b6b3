// Loads what presenting a list of notes needs, in a fixed number of queries however long the list: the originals
// of forks, the memberships of every team involved (which also give the caller's roles), and which forks can pull.
import type { Reader } from '../../cache/memory.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { can } from '../access/policy.ts';
import { aliasedColumns, mapAliased, preparedQuery } from '../../db/rows.ts';

import { membersOf, teamView } from '../teams/teams.loader.ts';
import type { TeamView } from '../teams/team.presenter.ts';
import { Team } from '../teams/team.entity.ts';
import { Note } from './note.entity.ts';
import type { NoteView } from './note.presenter.ts';

/** How every list of notes is ordered: most recently updated first, newest first among equals. */
export const recentFirst = { updatedAt: 'desc', id: 'desc' } as const;

/** Forks (of those given) whose original has a page version the fork has not taken in yet. */
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

async function forksThatCanPull(em: EntityManager, forkIds: readonly number[]): Promise<Set<number>> {
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
 * The notes of these ids with their teams, in one prepared statement (no ORM query building: search answers 100 notes
 * at a time); ids not found are left out, the order is the ids'.
 */
export async function notesByIds(em: EntityManager, ids: readonly number[]): Promise<Note[]> {
  if (ids.length === 0) return [];
  const rows = await preparedQuery<Record<string, unknown>>(
    em,
    'notes_by_ids',
    `select ${aliasedColumns(em, Team, 't')}, ${aliasedColumns(em, Note, 'n')}
       from notes n join teams t on t.id = n.team_id
      where n.id = any($1::int[])`,
    [`{${ids.join(',')}}`],
  );
  const byId = new Map<number, Note>();
  for (const row of rows) {
    mapAliased(em, Team, row, 't');
    const note = mapAliased(em, Note, row, 'n')!;
    byId.set(note.id, note);
  }
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export async function loadNoteViews(reader: Reader, notes: readonly Note[]): Promise<NoteView[]> {
  const { em, callerId } = reader;
  const originalIds = [...new Set(notes.flatMap((note) => (note.forkedFrom ? [note.forkedFrom.id] : [])))];
  const originals = originalIds.length === 0 ? [] : await em.find(Note, { id: { $in: originalIds } }, { populate: ['team'] });
  const originalsById = new Map(originals.map((original) => [original.id, original]));
  const teams = new Map<number, Team>();
  for (const note of [...notes, ...originals]) teams.set(note.team.id, note.team);
  const memberships = await membersOf(reader, [...teams.keys()]);
  // one view per team, so a team embedded by many notes is presented once
  const views = new Map<number, TeamView>();
  const viewOf = (team: Team): TeamView => {
    let view = views.get(team.id);
    if (!view) {
      view = teamView(team, memberships, callerId);
      views.set(team.id, view);
    }
    return view;
  };
  const candidates = notes.filter((note) => note.forkedFrom && originalsById.has(note.forkedFrom.id) && can('note.edit', viewOf(note.team)));
  const pullable = await forksThatCanPull(em, candidates.map((note) => note.id));
  return notes.map((note) => {
    const original = note.forkedFrom ? originalsById.get(note.forkedFrom.id) : undefined;
    return {
      note,
      team: viewOf(note.team),
      original: original && can('note.read', viewOf(original.team), original) ? { note: original, team: viewOf(original.team) } : undefined,
      pullable: pullable.has(note.id),
    };
  });
}

export async function loadNoteView(reader: Reader, note: Note): Promise<NoteView> {
  const [view] = await loadNoteViews(reader, [note]);
  return view!;
}
