// The sweep of attachment bytes that no attachment refers to any more. Deleting an attachment removes its bytes at
// once when it was the last to refer to them (attachments.service.ts); but a note's attachments go with the note by
// the foreign key's cascade, which cannot touch the storage, and a crash can leave a temporary file of an upload.
// The server sweeps at start-up and every hour: each stored checksum no row names is deleted under the same
// advisory lock uploads take (an upload of those very bytes either committed its row before, or checks for the
// bytes after and stores them again), and temporary files older than an hour go.
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { Attachment } from './attachment.entity.ts';
import { lockChecksum, referencedChecksums } from './attachments.repository.ts';
import { storageFor, type Storage } from './storage.ts';

export const ATTACHMENT_SWEEP_INTERVAL_MS = 60 * 60 * 1000;
const BATCH = 500;

async function sweepBatch(em: EntityManager, storage: Storage, checksums: string[]): Promise<number> {
  const referenced = await referencedChecksums(em, checksums);
  let removed = 0;
  for (const checksum of checksums.filter((candidate) => !referenced.has(candidate))) {
    await em.transactional(async (tx) => {
      await lockChecksum(tx, checksum);
      if ((await tx.count(Attachment, { checksum })) > 0) return;
      await storage.delete(checksum);
      removed += 1;
    });
  }
  return removed;
}

async function sweepTemporaryFiles(storage: Storage, olderThanMs: number): Promise<void> {
  const names = await readdir(storage.tempDir).catch(() => [] as string[]);
  for (const name of names) {
    const file = path.join(storage.tempDir, name);
    const info = await stat(file).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > olderThanMs) await rm(file, { force: true });
  }
}

/** Deletes stored bytes no attachment refers to, and stale temporary files; how many stored files it deleted. */
export async function sweepAttachmentBytes(em: EntityManager, config: Config, options: { temporaryOlderThanMs?: number } = {}): Promise<number> {
  const storage = storageFor(config);
  await sweepTemporaryFiles(storage, options.temporaryOlderThanMs ?? ATTACHMENT_SWEEP_INTERVAL_MS);
  let removed = 0;
  let batch: string[] = [];
  for await (const checksum of storage.list()) {
    batch.push(checksum);
    if (batch.length === BATCH) {
      removed += await sweepBatch(em, storage, batch);
      batch = [];
    }
  }
  if (batch.length > 0) removed += await sweepBatch(em, storage, batch);
  return removed;
}
