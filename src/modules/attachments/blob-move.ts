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
import { blobSlice, blobTableExists, dropBlobTable, lockChecksum, nextBlobToMove, recordBlobMoved } from './attachments.repository.ts';
import { sniffType } from './content.ts';
import { storageFor, type Storage } from './storage.ts';
import { SNIFF_BYTES } from './upload.ts';

const SLICE = 1024 * 1024;

/** Writes one blob to a temporary file, slice by slice; its checksum, size and first bytes. */
async function copyOut(em: EntityManager, storage: Storage, attachmentId: number, size: number) {
  await mkdir(storage.tempDir, { recursive: true });
  const tempPath = path.join(storage.tempDir, `move-${randomUUID()}`);
  const out = createWriteStream(tempPath, { flags: 'wx' });
  const hash = createHash('sha256');
  let head = Buffer.alloc(0);
  try {
    for (let offset = 0; offset < size; offset += SLICE) {
      const slice = await blobSlice(em, attachmentId, offset, SLICE);
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
  if (!(await blobTableExists(em))) return 0;
  const storage = storageFor(config);
  let moved = 0;
  for (;;) {
    const next = await nextBlobToMove(em);
    if (!next) break;
    const size = Number(next.size);
    const { tempPath, checksum, head } = await copyOut(em, storage, next.attachment_id, size);
    try {
      const contentType = await sniffType(head);
      await em.transactional(async (tx) => {
        await lockChecksum(tx, checksum);
        if (!(await storage.has(checksum))) await storage.put(checksum, tempPath, size);
        await recordBlobMoved(tx, next.attachment_id, { checksum, size, contentType });
      });
    } finally {
      await rm(tempPath, { force: true });
    }
    moved += 1;
  }
  await dropBlobTable(em);
  return moved;
}
