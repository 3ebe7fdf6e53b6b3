// Moving the bytes that earlier versions kept in the database out into the attachment storage. The migration
// 0007-attachments-out-of-database renamed their table to `attachment_blobs_to_move` (SQL cannot write files);
// this step, run after the migrations by the server at start-up and by `npm run migrate`, moves them one at a
// time, read in 1 MiB slices (never a whole file in memory), each stored like an upload (SHA-256 name, temporary
// file then rename), its row's checksum, size and sniffed type set, and its blob deleted, in one transaction per
// file. Stopped half-way, it goes on from where it was at the next start; when nothing is left it drops the table.
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { lockChecksum } from './attachments.service.ts';
import { sniffType } from './content.ts';
import { storageFor, type Storage } from './storage.ts';
import { SNIFF_BYTES } from './upload.ts';

const TABLE = 'attachment_blobs_to_move';
const SLICE = 1024 * 1024;

async function tableExists(em: EntityManager): Promise<boolean> {
  const [row] = await em.execute<{ present: boolean }[]>(`select to_regclass('${TABLE}') is not null as present`);
  return row?.present === true;
}

/** Writes one blob to a temporary file, slice by slice; its checksum, size and first bytes. */
async function copyOut(em: EntityManager, storage: Storage, attachmentId: number, size: number) {
  await mkdir(storage.tempDir, { recursive: true });
  const tempPath = path.join(storage.tempDir, `move-${randomUUID()}`);
  const out = createWriteStream(tempPath, { flags: 'wx' });
  const hash = createHash('sha256');
  let head = Buffer.alloc(0);
  try {
    for (let offset = 0; offset < size; offset += SLICE) {
      const [row] = await em.execute<{ slice: Buffer }[]>(
        `select substring(data from ? for ?) as slice from ${TABLE} where attachment_id = ?`,
        [offset + 1, SLICE, attachmentId],
      );
      const slice = Buffer.from(row!.slice);
      hash.update(slice);
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, slice.subarray(0, SNIFF_BYTES - head.length)]);
      if (!out.write(slice)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    out.end();
    await finished(out);
  } catch (error) {
    out.destroy();
    await rm(tempPath, { force: true });
    throw error;
  }
  return { tempPath, checksum: hash.digest('hex'), head };
}

/** Moves every blob left in the database into the storage; how many it moved. */
export async function moveAttachmentBlobs(em: EntityManager, config: Config): Promise<number> {
  if (!(await tableExists(em))) return 0;
  const storage = storageFor(config);
  let moved = 0;
  for (;;) {
    const [next] = await em.execute<{ attachment_id: number; size: number }[]>(
      `select attachment_id, octet_length(data) as size from ${TABLE} order by attachment_id limit 1`,
    );
    if (!next) break;
    const size = Number(next.size);
    const { tempPath, checksum, head } = await copyOut(em, storage, next.attachment_id, size);
    try {
      const contentType = await sniffType(head);
      await em.transactional(async (tx) => {
        await lockChecksum(tx, checksum);
        if (!(await storage.has(checksum))) await storage.put(checksum, tempPath, size);
        await tx.execute('update attachments set checksum = ?, byte_size = ?, content_type = ? where id = ?', [checksum, size, contentType, next.attachment_id]);
        await tx.execute(`delete from ${TABLE} where attachment_id = ?`, [next.attachment_id]);
      });
    } finally {
      await rm(tempPath, { force: true });
    }
    moved += 1;
  }
  await em.execute(`drop table if exists ${TABLE}`);
  return moved;
}
