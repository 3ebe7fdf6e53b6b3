// Writing notes, each change in one transaction with its domain event. Who may do what is decided before these are
// called (the handlers ask the policy table); here only what the data itself forbids is checked.
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict } from '../errors.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Team } from '../teams/team.entity.ts';
import { Note } from './note.entity.ts';
import { deleteNoteRow } from './notes.repository.ts';

export type NoteFields = {
  title: string;
  description?: string | null | undefined;
  slug?: string | null | undefined;
  is_private?: boolean | null | undefined;
};

async function checkSlugFree(em: EntityManager, teamId: number, slug: string, exceptNoteId?: number): Promise<void> {
  const clash = await em.findOne(Note, { team: teamId, slug, ...(exceptNoteId ? { id: { $ne: exceptNoteId } } : {}) }, { fields: ['id'] });
  if (clash) throw conflict('name_taken', `the team already has a note with the slug "${slug}"`, [{ pointer: '/note/slug', detail: 'already taken in this team' }]);
}

export async function createNote(em: EntityManager, actor: Actor, team: Team, fields: NoteFields): Promise<Note> {
  return em.transactional(async (tx) => {
    if (fields.slug) await checkSlugFree(tx, team.id, fields.slug);
    const note = tx.create(Note, {
      team,
      user: actor.id,
      slug: fields.slug ?? null,
      title: fields.title,
      description: fields.description ?? '',
      isPrivate: fields.is_private ?? false,
      forkedFrom: null,
      pulledAt: null,
      coverPageId: null,
    });
    await tx.flush();
    await recordEvent(tx, { type: 'note.created', actor, note });
    return note;
  });
}

/** Updates the note; a `targetTeam` other than its own moves it there. `slugGiven`: an absent slug keeps its value. */
export async function updateNote(
  em: EntityManager,
  actor: Actor,
  note: Note,
  targetTeam: Team,
  fields: NoteFields & { slugGiven: boolean },
): Promise<Note> {
  return em.transactional(async (tx) => {
    const slug = fields.slugGiven ? (fields.slug ?? null) : note.slug;
    if (slug && (slug !== note.slug || targetTeam.id !== note.team.id)) await checkSlugFree(tx, targetTeam.id, slug, note.id);
    const changed: string[] = [];
    const set = <K extends 'title' | 'slug' | 'description' | 'isPrivate'>(key: K, value: Note[K]) => {
      if (note[key] !== value) changed.push(key);
      note[key] = value;
    };
    set('title', fields.title);
    set('slug', slug);
    if (fields.description !== undefined) set('description', fields.description ?? '');
    if (fields.is_private !== undefined) set('isPrivate', fields.is_private ?? false);
    if (targetTeam.id !== note.team.id) {
      note.team = targetTeam;
      changed.push('team');
    }
    if (changed.length > 0) await recordEvent(tx, { type: 'note.updated', actor, note, changed });
    return note;
  });
}

/** Pages, versions, issues, comments, attachments and requests go with it (foreign keys cascade); its forks stay. */
export async function deleteNote(em: EntityManager, actor: Actor, note: Note): Promise<void> {
  await em.transactional(async (tx) => {
    await recordEvent(tx, { type: 'note.deleted', actor, note });
    await tx.flush();
    await deleteNoteRow(tx, note.id);
  });
}
