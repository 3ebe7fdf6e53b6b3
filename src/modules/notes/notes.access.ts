import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../../http/errors.ts';
import { notePolicy, type Role } from '../access/policy.ts';
import { roleIn } from '../access/roles.ts';
import { findTeamByName } from '../teams/teams.service.ts';
import { Note } from './note.entity.ts';

export type NoteAccess = { note: Note; role: Role };

/**
 * The note at /{team}/{note} as the caller may see it: addressed by slug, or by numeric id (also when it has a slug).
 * A private note the caller may not read is answered exactly like one that does not exist.
 */
export async function findReadableNote(em: EntityManager, callerId: number, teamName: string, noteRef: string): Promise<NoteAccess> {
  const team = await findTeamByName(em, teamName);
  const where = /^\d+$/.test(noteRef) ? { id: Number(noteRef), team: team.id } : { slug: noteRef, team: team.id };
  if ('id' in where && !Number.isSafeInteger(where.id)) throw notFound('note');
  const note = await em.findOne(Note, where, { populate: ['team'] });
  if (!note) throw notFound('note');
  const role = await roleIn(em, callerId, team.id);
  if (!notePolicy.read(role, note)) throw notFound('note');
  return { note, role };
}
