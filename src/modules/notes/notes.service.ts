import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, forbidden, unprocessable } from '../../http/errors.ts';
import { notePolicy, teamPolicy, type Role } from '../access/policy.ts';
import { roleIn } from '../access/roles.ts';
import { Team } from '../teams/team.entity.ts';
import { findTeam } from '../teams/teams.service.ts';
import { notifyNewNote } from '../notifications/notifications.service.ts';
import type { User } from '../users/user.entity.ts';
import { Note } from './note.entity.ts';

export type NoteFields = {
  title: string;
  team: string;
  description?: string | null | undefined;
  slug?: string | null | undefined;
  is_private?: boolean | null | undefined;
};

/** The team named in a note body: one that does not exist is a valid shape naming nothing (422). */
async function teamForNote(em: EntityManager, name: string): Promise<Team> {
  const team = await findTeam(em, name);
  if (!team) throw unprocessable('unprocessable', `no team is named "${name}"`, [{ pointer: '/note/team', detail: 'no such team' }]);
  return team;
}

async function checkSlugFree(em: EntityManager, teamId: number, slug: string, exceptNoteId?: number): Promise<void> {
  const clash = await em.findOne(Note, { team: teamId, slug, ...(exceptNoteId ? { id: { $ne: exceptNoteId } } : {}) });
  if (clash) throw conflict('name_taken', `the team already has a note with the slug "${slug}"`, [{ pointer: '/note/slug', detail: 'already taken in this team' }]);
}

export async function createNote(em: EntityManager, caller: User, fields: NoteFields): Promise<Note> {
  const team = await teamForNote(em, fields.team);
  const role = await roleIn(em, caller.id, team.id);
  if (!teamPolicy.createNote(role)) throw forbidden(`only members of ${team.name} may create notes in it`);
  return em.transactional(async (tx) => {
    if (fields.slug) await checkSlugFree(tx, team.id, fields.slug);
    const note = tx.create(Note, {
      team: team.id,
      user: caller.id,
      slug: fields.slug ?? null,
      title: fields.title,
      description: fields.description ?? '',
      isPrivate: fields.is_private ?? false,
      forkedFrom: null,
      pulledAt: null,
    });
    await tx.flush();
    await notifyNewNote(tx, note, caller);
    await tx.flush();
    return note;
  });
}

/** Updates the note; a different `team` moves it, which takes a manager of both teams. */
export async function updateNote(em: EntityManager, caller: User, note: Note, role: Role, fields: NoteFields & { slugGiven: boolean }): Promise<Note> {
  if (!notePolicy.edit(role)) throw forbidden('only members of the note\'s team may edit it');
  let targetTeam: Team = note.team;
  if (fields.team.toLowerCase() !== note.team.name.toLowerCase()) {
    targetTeam = await teamForNote(em, fields.team);
    if (!notePolicy.manage(role)) throw forbidden('only a manager of the note\'s team may move it to another team');
    if (!teamPolicy.manage(await roleIn(em, caller.id, targetTeam.id))) throw forbidden(`only a manager of ${targetTeam.name} may move notes into it`);
  }
  return em.transactional(async (tx) => {
    const managed = await tx.findOneOrFail(Note, note.id, { populate: ['team'] });
    const slug = fields.slugGiven ? (fields.slug ?? null) : managed.slug;
    if (slug && (slug !== managed.slug || targetTeam.id !== managed.team.id)) await checkSlugFree(tx, targetTeam.id, slug, managed.id);
    managed.title = fields.title;
    managed.slug = slug;
    if (fields.description !== undefined) managed.description = fields.description ?? '';
    if (fields.is_private !== undefined) managed.isPrivate = fields.is_private ?? false;
    if (targetTeam.id !== managed.team.id) managed.team = tx.getReference(Team, targetTeam.id);
    await tx.flush();
    return managed;
  });
}

export async function deleteNote(em: EntityManager, note: Note, role: Role): Promise<void> {
  if (!notePolicy.manage(role)) throw forbidden('only a manager of the note\'s team may delete it');
  // pages, versions, issues, comments, attachments and requests go with it (foreign keys cascade); its forks stay
  await em.execute('delete from notes where id = ?', [note.id]);
}
