// The bytes earlier versions kept in the database: migration 0007 leaves them in `attachment_blobs_to_move`, and the
// start-up step (also run by `npm run migrate`) moves them into the storage and drops the table.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attachment } from '../../src/modules/attachments/attachment.entity.ts';
import { moveAttachmentBlobs } from '../../src/modules/attachments/blob-move.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
afterAll(async () => app?.close());
beforeAll(async () => {
  app = await startTestApp();
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('moving attachment bytes out of the database', () => {
  it('stores each blob under its SHA-256, corrects its row, and drops the table when none is left', async () => {
    const { manager, notes } = await makeScenario(app, { notes: { old: {} } });
    const em = app.em();
    expect((await em.execute(`select to_regclass('attachment_blobs_to_move') is not null as present`))[0]?.present).toBe(true);
    // larger than one 1 MiB slice, and a PNG whose stored type was only the client's word
    const big = Buffer.alloc(2.5 * 1024 * 1024 + 7);
    for (let i = 0; i < big.length; i += 1) big[i] = (i * 13) & 0xff;
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
    const ids: number[] = [];
    for (const [data, name, type] of [[big, 'big.bin', 'text/html'], [png, 'p.png', 'text/html']] as const) {
      const [row] = await em.execute<{ id: number }[]>(
        `insert into attachments (note_id, user_id, filename, extname, content_type, byte_size, checksum, managed, created_at, updated_at)
         values (?, ?, ?, ?, ?, 0, 'unknown', true, now(), now()) returning id`,
        [notes.old.id, manager.user.id, name, path.extname(name), type],
      );
      ids.push(row!.id);
      await em.execute('insert into attachment_blobs_to_move (attachment_id, data) values (?, ?)', [row!.id, data]);
    }
    expect(await moveAttachmentBlobs(app.em(), app.config)).toBe(2);
    const root = path.join(app.config.dataDir, 'attachments');
    const fileOf = (checksum: string) => path.join(root, checksum.slice(0, 2), checksum.slice(2, 4), checksum);
    const [first, second] = await app.em().find(Attachment, { id: { $in: ids } }, { orderBy: { id: 'asc' } });
    expect([first!.checksum, first!.byteSize, first!.contentType]).toEqual([sha256(big), big.length, 'application/octet-stream']);
    expect([second!.checksum, second!.byteSize, second!.contentType]).toEqual([sha256(png), png.length, 'image/png']);
    expect(readFileSync(fileOf(sha256(big))).equals(big)).toBe(true);
    expect(existsSync(fileOf(sha256(png)))).toBe(true);
    expect((await app.em().execute(`select to_regclass('attachment_blobs_to_move') is not null as present`))[0]?.present).toBe(false);
    // nothing left to do the next time
    expect(await moveAttachmentBlobs(app.em(), app.config)).toBe(0);
    const download = await manager.client.get(`/api/v1/attachments/${second!.id}`);
    expect([download.status, download.headers.get('content-type')]).toEqual([200, 'image/png']);
  });
});
