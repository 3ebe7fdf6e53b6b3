// Loads what presenting a list of notes needs, in a fixed number of queries however long the list: the originals
// of forks, the memberships of every team involved (which also give the caller's roles), and which forks can pull.
import type { Reader } from '../../cache/memory.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { can } from '../access/policy.ts';
import { membersOf, teamView } from '../teams/teams.loader.ts';
import type { TeamView } from '../teams/team.presenter.ts';
import type { Team } from '../teams/team.entity.ts';
import { Note } from './note.entity.ts';
import type { NoteView } from './note.presenter.ts';
import { forksThatCanPull, notesWithTeams } from './notes.repository.ts';

// for pages.repository.ts, which embeds the condition in its statements

/** How every list of notes is ordered: most recently updated first, newest first among equals. */
export const recentFirst = { updatedAt: 'desc', id: 'desc' } as const;

/**
 * The notes of these ids with their teams, in one prepared statement (no ORM query building: search answers 100 notes
 * at a time); ids not found are left out, the order is the ids'.
 */
export async function notesByIds(em: EntityManager, ids: readonly number[]): Promise<Note[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await notesWithTeams(em, ids)).map((note) => [note.id, note]));
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
