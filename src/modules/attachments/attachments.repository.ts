// The attachments module's SQL: the checksum lock every write of stored bytes takes (attachments.service.ts,
// sweep.ts, blob-move.ts), a fork's copies of the rows, an attachment read with its note in one statement, and the
// move of the bytes earlier versions kept in the database (blob-move.ts).
//
// Placeholders: `?` for em.execute, as everywhere. The one exception: `attachmentWithNote` is a prepared statement
// (db/rows.ts, `preparedQuery`) sent to node-postgres directly, which only takes `$1`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { aliasedColumns, mapAliased, preparedQuery } from '../../db/rows.ts';
import type { Role } from '../access/policy.ts';
import { Note } from '../notes/note.entity.ts';
import { Team } from '../teams/team.entity.ts';
import { Attachment } from './attachment.entity.ts';

/**
 * Takes the transaction-scoped advisory lock on the bytes' checksum: an upload that finds the bytes stored and a
 * delete (or the sweep) that removes the last row referring to them cannot interleave.
 */
export async function lockChecksum(em: EntityManager, checksum: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`attachment:${checksum}`]);
}

/** Copies the note's attachment rows to the fork in one statement, sharing their bytes; how many it copied. */
export async function copyNoteAttachments(em: EntityManager, fromNoteId: number, toNoteId: number): Promise<number> {
  const result = await em.execute(
    `insert into attachments (note_id, user_id, filename, extname, content_type, byte_size, checksum, managed, forked_from_id, created_at, updated_at)
     select ?, user_id, filename, extname, content_type, byte_size, checksum, managed, id, created_at, updated_at
       from attachments where note_id = ? order by id`,
    [toNoteId, fromNoteId],
    'run',
  );
  return (result as { affectedRows?: number }).affectedRows ?? 0;
}

/**
 * The attachment with its note, the note's team and the caller's role there, in one prepared statement (downloads
 * are the hot read); undefined when there is no such attachment.
 */
export async function attachmentWithNote(
  em: EntityManager,
  id: number,
  callerId: number,
): Promise<{ attachment: Attachment; note: Note; team: Team; role: Role | undefined } | undefined> {
  const rows = await preparedQuery<Record<string, unknown>>(
    em,
    'attachment_with_note',
    `select ${aliasedColumns(em, Team, 't')}, ${aliasedColumns(em, Note, 'n')}, ${aliasedColumns(em, Attachment, 'a')}, m.role as "role"
       from attachments a
       join notes n on n.id = a.note_id
       join teams t on t.id = n.team_id
       left join memberships m on m.team_id = t.id and m.user_id = $2
      where a.id = $1`,
    [id, callerId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const team = mapAliased(em, Team, row, 't')!;
  const note = mapAliased(em, Note, row, 'n')!;
  const attachment = mapAliased(em, Attachment, row, 'a')!;
  return { attachment, note, team, role: (row.role ?? undefined) as Role | undefined };
}

/** Which of the checksums some attachment still names: the sweep deletes the stored bytes of the others. */
export async function referencedChecksums(em: EntityManager, checksums: readonly string[]): Promise<Set<string>> {
  const rows = await em.execute<{ checksum: string }[]>('select distinct checksum from attachments where checksum = any(?::text[])', [`{${checksums.join(',')}}`]);
  return new Set(rows.map((row) => row.checksum));
}

// --- the bytes earlier versions kept in the database (blob-move.ts) ---

/** The table migration 0007 renamed the stored bytes' table to (SQL cannot write files: blob-move.ts moves them). */
const TABLE = 'attachment_blobs_to_move';

/** Whether bytes are left to move: the table is dropped once it is empty. */
export async function blobTableExists(em: EntityManager): Promise<boolean> {
  const [row] = await em.execute<{ present: boolean }[]>(`select to_regclass('${TABLE}') is not null as present`);
  return row?.present === true;
}

/** The next blob to move (the lowest attachment id) and its size, or undefined when none is left. */
export async function nextBlobToMove(em: EntityManager): Promise<{ attachment_id: number; size: number } | undefined> {
  const [next] = await em.execute<{ attachment_id: number; size: number }[]>(
    `select attachment_id, octet_length(data) as size from ${TABLE} order by attachment_id limit 1`,
  );
  return next;
}

/** `length` bytes of the attachment's blob from `offset` (0-based): a blob is read in slices, never whole. */
export async function blobSlice(em: EntityManager, attachmentId: number, offset: number, length: number): Promise<Buffer> {
  const [row] = await em.execute<{ slice: Buffer }[]>(
    `select substring(data from ? for ?) as slice from ${TABLE} where attachment_id = ?`,
    [offset + 1, length, attachmentId],
  );
  return Buffer.from(row!.slice);
}

/** Points the attachment at its moved bytes and drops them from the table, inside the move's transaction. */
export async function recordBlobMoved(tx: EntityManager, attachmentId: number, moved: { checksum: string; size: number; contentType: string }): Promise<void> {
  await tx.execute('update attachments set checksum = ?, byte_size = ?, content_type = ? where id = ?', [moved.checksum, moved.size, moved.contentType, attachmentId]);
  await tx.execute(`delete from ${TABLE} where attachment_id = ?`, [attachmentId]);
}

/** Drops the emptied table: the move is done for good. */
export async function dropBlobTable(em: EntityManager): Promise<void> {
  await em.execute(`drop table if exists ${TABLE}`);
}
