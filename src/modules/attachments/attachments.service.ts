// Attachments: their rows in the database, their bytes in the storage (storage.ts), named by checksum and shared by
// every row with the same bytes (a second upload of them, a fork's copies). Each write takes a transaction-scoped
// advisory lock on the checksum, so an upload that finds the bytes stored and a delete that removes the last row
// referring to them cannot interleave: the bytes go exactly when no row refers to them any more.
import { rm } from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../errors.ts';
import { can, type Role } from '../access/policy.ts';
import type { Caller } from '../access/caller.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import { Note } from '../notes/note.entity.ts';
import { Team } from '../teams/team.entity.ts';
import { Attachment } from './attachment.entity.ts';
import { attachmentWithNote, copyNoteAttachments, lockChecksum } from './attachments.repository.ts';
import type { Storage } from './storage.ts';
import type { ReceivedFile } from './upload.ts';
import path from 'node:path';

/** Newest first; ids break ties between attachments uploaded in the same second. */
export const newestFirst = { createdAt: 'desc', id: 'desc' } as const;

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
  return copyNoteAttachments(em, fromNoteId, toNoteId);
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
  const found = await attachmentWithNote(em, id, caller.user.id);
  if (!found) throw notFound('attachment');
  const { attachment, note, team } = found;
  const role = found.role as Role;
  if (!can('note.read', { role, callerId: caller.user.id }, note)) throw notFound('attachment');
  return { attachment, note, team, role };
}
