// Attachments: their rows in the database, their bytes in the storage (storage.ts), named by checksum and shared by
// every row with the same bytes (a second upload of them, a fork's copies). Each write takes a transaction-scoped
// advisory lock on the checksum, so an upload that finds the bytes stored and a delete that removes the last row
// referring to them cannot interleave: the bytes go exactly when no row refers to them any more.
import { rm } from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedQuery, aliasedColumns, mapAliased } from '../../db/rows.ts';
import { notFound } from '../errors.ts';
import { can, type Role } from '../access/policy.ts';
import type { Caller } from '../access/caller.ts';
import { recordEvent, type Actor } from '../events/events.ts';
import { Note } from '../notes/note.entity.ts';
import { Team } from '../teams/team.entity.ts';
import { Attachment } from './attachment.entity.ts';
import type { Storage } from './storage.ts';
import type { ReceivedFile } from './upload.ts';
import path from 'node:path';

/** Newest first; ids break ties between attachments uploaded in the same second. */
export const newestFirst = { createdAt: 'desc', id: 'desc' } as const;

export async function lockChecksum(em: EntityManager, checksum: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`attachment:${checksum}`]);
}

/** The extension with its dot (`.png`), as the contract shows it; empty when there is none (or it is too long to be one). */
export function extensionOf(filename: string): string {
  const extension = path.extname(filename);
  return extension.length <= 32 ? extension : '';
}

/** Removes the bytes when no attachment refers to them (after a failed upload, or a delete). */
async function releaseIfUnreferenced(em: EntityManager, storage: Storage, checksum: string): Promise<void> {
  const references = await em.count(Attachment, { checksum });
  if (references === 0) await storage.delete(checksum);
}

/**
 * Attaches a received file to the note: its bytes into the storage unless they are there already, and its row, in
 * one transaction with its event. The temporary file is gone afterwards, whatever happened.
 */
export async function createAttachment(
  em: EntityManager,
  storage: Storage,
  actor: Actor,
  note: Note,
  file: ReceivedFile & { contentType: string },
): Promise<Attachment> {
  let stored = false;
  try {
    return await em.transactional(async (tx) => {
      await lockChecksum(tx, file.checksum);
      if (!(await storage.has(file.checksum))) {
        await storage.put(file.checksum, file.tempPath, file.byteSize);
        stored = true;
      }
      const attachment = tx.create(Attachment, {
        note: note.id,
        user: actor.id,
        filename: file.filename,
        extname: extensionOf(file.filename),
        contentType: file.contentType,
        byteSize: file.byteSize,
        checksum: file.checksum,
        managed: true,
        forkedFrom: null,
      });
      await tx.flush();
      await recordEvent(tx, { type: 'attachment.created', actor, note, attachment });
      return attachment;
    });
  } catch (error) {
    // bytes this upload stored for a row that was never written go again (unless another row came to need them)
    if (stored) await em.transactional(async (tx) => {
      await lockChecksum(tx, file.checksum);
      await releaseIfUnreferenced(tx, storage, file.checksum);
    });
    throw error;
  } finally {
    await rm(file.tempPath, { force: true });
  }
}

/** Deletes the attachment; its bytes go with it when no other attachment (a copy, a fork's) refers to them. */
export async function deleteAttachment(em: EntityManager, storage: Storage, actor: Actor, note: Note, attachment: Attachment): Promise<void> {
  await em.transactional(async (tx) => {
    await lockChecksum(tx, attachment.checksum);
    await recordEvent(tx, { type: 'attachment.deleted', actor, note, attachment });
    await tx.flush();
    await tx.nativeDelete(Attachment, { id: attachment.id });
    // inside the lock and the transaction: an upload of the same bytes waits for this one to end
    await releaseIfUnreferenced(tx, storage, attachment.checksum);
  });
}

/**
 * A fork carries its original's attachments: one row per attachment, in one statement, remembering where it came
 * from (`forked_from_id`, shown as `forked_id`) and sharing its stored bytes (same checksum: nothing is copied).
 * Runs inside the fork's transaction. Returns how many were copied.
 */
export async function copyAttachmentsToFork(em: EntityManager, fromNoteId: number, toNoteId: number): Promise<number> {
  const result = await em.execute(
    `insert into attachments (note_id, user_id, filename, extname, content_type, byte_size, checksum, managed, forked_from_id, created_at, updated_at)
     select ?, user_id, filename, extname, content_type, byte_size, checksum, managed, id, created_at, updated_at
       from attachments where note_id = ? order by id`,
    [toNoteId, fromNoteId],
    'run',
  );
  return (result as { affectedRows?: number }).affectedRows ?? 0;
}

// Ids are PostgreSQL `integer`: a larger number names nothing (and must not reach the database as one).
const LARGEST_ID = 2_147_483_647;
const validId = (id: number) => Number.isSafeInteger(id) && id > 0 && id <= LARGEST_ID;

/** The attachment `id` of the note, else 404. */
export async function findAttachmentOf(em: EntityManager, note: Note, id: number): Promise<Attachment> {
  const attachment = validId(id) ? await em.findOne(Attachment, { id, note: note.id }) : null;
  if (!attachment) throw notFound('attachment');
  return attachment;
}

export type ReadableAttachment = { attachment: Attachment; note: Note; team: Team; role: Role };

/**
 * The attachment `id` with its note, the note's team and the caller's role there, in one statement; 404 when there
 * is none or the caller may not read its note (a private note's attachment is as absent as a missing one).
 */
export async function findReadableAttachment(em: EntityManager, caller: Caller, id: number): Promise<ReadableAttachment> {
  if (!validId(id)) throw notFound('attachment');
  const rows = await preparedQuery<Record<string, unknown>>(
    em,
    'attachment_with_note',
    `select ${aliasedColumns(em, Team, 't')}, ${aliasedColumns(em, Note, 'n')}, ${aliasedColumns(em, Attachment, 'a')}, m.role as "role"
       from attachments a
       join notes n on n.id = a.note_id
       join teams t on t.id = n.team_id
       left join memberships m on m.team_id = t.id and m.user_id = $2
      where a.id = $1`,
    [id, caller.user.id],
  );
  const row = rows[0];
  if (!row) throw notFound('attachment');
  const team = mapAliased(em, Team, row, 't')!;
  const note = mapAliased(em, Note, row, 'n')!;
  const attachment = mapAliased(em, Attachment, row, 'a')!;
  const role = (row.role ?? undefined) as Role;
  if (!can('note.read', { role, callerId: caller.user.id }, note)) throw notFound('attachment');
  return { attachment, note, team, role };
}
