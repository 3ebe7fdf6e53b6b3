// Keeping the storage in step with the database: the bytes earlier versions kept in the database (migration 0007
// leaves them in `attachment_blobs_to_move`; the start-up step, also run by `npm run migrate`, moves them into the
// storage and drops the table), and the sweep of bytes no attachment refers to (a deleted note's) and of stale
// temporary files.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attachment } from '../../src/modules/attachments/attachment.entity.ts';
import { moveAttachmentBlobs } from '../../src/modules/attachments/blob-move.ts';
import { sweepAttachmentBytes } from '../../src/modules/attachments/sweep.ts';
import { MULTIPART, multipartBody } from '../support/multipart.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase } from '../../src/db/database.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createScratchDatabaseUrl } from '../support/database.ts';
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

describe('the sweep of unreferenced bytes', () => {
  it('deletes what a deleted note left in the storage, keeps what a row still names, and clears stale temporary files', async () => {
    const { manager, notes, team } = await makeScenario(app, { notes: { doomed: {}, kept: {} } });
    const upload = async (slug: string | null | undefined, data: string) => {
      const answer = await manager.client.post(`/api/v1/${team.name}/${slug}/attachments`, { raw: { body: multipartBody([{ name: 'file', filename: 'f.txt', data }]), contentType: MULTIPART } });
      expect(answer.status, answer.text).toBe(200);
    };
    await upload(notes.doomed.slug, 'only in the doomed note');
    await upload(notes.doomed.slug, 'in both notes');
    await upload(notes.kept.slug, 'in both notes');
    const root = path.join(app.config.dataDir, 'attachments');
    const fileOf = (data: string) => {
      const checksum = sha256(Buffer.from(data));
      return path.join(root, checksum.slice(0, 2), checksum.slice(2, 4), checksum);
    };
    expect((await manager.client.delete(`/api/v1/${team.name}/${notes.doomed.slug}`)).status).toBe(204);
    // the cascade took the rows, not the bytes
    expect(existsSync(fileOf('only in the doomed note'))).toBe(true);
    mkdirSync(path.join(root, 'tmp'), { recursive: true });
    const stale = path.join(root, 'tmp', 'upload-stale');
    const fresh = path.join(root, 'tmp', 'upload-fresh');
    writeFileSync(stale, 'left by a crash');
    writeFileSync(fresh, 'an upload in flight');
    utimesSync(stale, new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));

    expect(await sweepAttachmentBytes(app.em(), app.config)).toBe(1);
    expect(existsSync(fileOf('only in the doomed note'))).toBe(false);
    expect(existsSync(fileOf('in both notes'))).toBe(true);
    expect([existsSync(stale), existsSync(fresh)]).toEqual([false, true]);
    expect(await sweepAttachmentBytes(app.em(), app.config)).toBe(0);
  });
});

describe('migrating a database that kept bytes in attachment_blobs', () => {
  it('keeps them through migration 0007 and the step after it moves them into the storage', async () => {
    const scratch = await createScratchDatabaseUrl();
    const database = await openDatabase(scratch ? { databaseUrl: scratch.url } : {});
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notes-test-old-'));
    try {
      // the schema as it was before this issue, with a file in the database
      await database.orm.migrator.up({ to: '0005-log-entries-outlive-notes' });
      const em = database.orm.em.fork();
      const data = Buffer.from('bytes that lived in the database');
      const [row] = await em.execute<{ id: number }[]>(
        `with u as (insert into users (username, created_at, updated_at) values ('old', now(), now()) returning id),
              t as (insert into teams (name, created_at, updated_at) values ('old', now(), now()) returning id),
              n as (insert into notes (team_id, user_id, title, created_at, updated_at) select t.id, u.id, 'Old', now(), now() from t, u returning id, user_id)
         insert into attachments (note_id, user_id, filename, content_type, byte_size, checksum, created_at, updated_at)
         select n.id, n.user_id, 'old.txt', 'text/html', ?, 'not a sha-256', now(), now() from n returning id`,
        [data.length],
      );
      await em.execute('insert into attachment_blobs (attachment_id, data) values (?, ?)', [row!.id, data]);

      expect(await migrate(database.orm)).toContain('0007-attachments-out-of-database');
      const config = loadConfig({ DATA_DIR: dataDir });
      expect(await moveAttachmentBlobs(database.orm.em.fork(), config)).toBe(1);
      const [moved] = await database.orm.em.fork().execute<{ checksum: string; content_type: string }[]>('select checksum, content_type from attachments where id = ?', [row!.id]);
      expect(moved).toEqual({ checksum: sha256(data), content_type: 'text/plain' });
      const file = path.join(dataDir, 'attachments', moved!.checksum.slice(0, 2), moved!.checksum.slice(2, 4), moved!.checksum);
      expect(readFileSync(file)).toEqual(data);
      const tables = await database.orm.em.fork().execute<{ name: string | null }[]>(`select to_regclass('attachment_blobs') as name union all select to_regclass('attachment_blobs_to_move')`);
      expect(tables.map((table) => table.name)).toEqual([null, null]);
    } finally {
      await database.close();
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
