// The S3-compatible storage, against a local S3 server the test starts (s3rver, from the npm registry): the same
// operations as on the local directory, with the bytes as objects named by their SHA-256.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { S3Storage } from '../../src/modules/attachments/s3-storage.ts';
import { storageFor } from '../../src/modules/attachments/storage.ts';
import { sweepAttachmentBytes } from '../../src/modules/attachments/sweep.ts';
import type { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Actor } from '../support/factories.ts';
import { MULTIPART, multipartBody, streamUpload } from '../support/multipart.ts';
import { makeScenario } from '../support/scenario.ts';

const BUCKET = 'notes-attachments';
let s3: S3rver;
let s3Directory: string;
let app: TestApp;
let member: Actor, manager: Actor;
let note: Note;
let teamName: string;

beforeAll(async () => {
  s3Directory = mkdtempSync(path.join(tmpdir(), 'notes-s3rver-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Directory, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const { port } = await s3.run();
  app = await startTestApp({
    S3_BUCKET: BUCKET,
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_PREFIX: 'files/',
    LIMIT_ATTACHMENT_BYTES: String(64 * 1024),
  });
  const cast = await makeScenario(app, { notes: { shared: {} } });
  ({ member, manager } = cast);
  note = cast.notes.shared;
  teamName = cast.team.name;
});
afterAll(async () => {
  await app?.close();
  await s3?.close();
  rmSync(s3Directory, { recursive: true, force: true });
});

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const storage = () => storageFor(app.config) as S3Storage;
async function objectKeys(): Promise<string[]> {
  const listed = await (await storage().client()).send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (listed.Contents ?? []).map((object) => object.Key!).sort();
}
const url = () => `/api/v1/${teamName}/${note.slug}/attachments`;
async function upload(actor: Actor, data: Buffer | string, filename: string) {
  const answer = await actor.client.post(url(), { raw: { body: multipartBody([{ name: 'file', filename, data }]), contentType: MULTIPART } });
  expect(answer.status, answer.text).toBe(200);
  return Number(answer.body.filelink.split('/').pop());
}
const localTemp = () => {
  const directory = path.join(app.config.dataDir, 'attachments', 'tmp');
  return existsSync(directory) ? readdirSync(directory) : [];
};

describe('attachments in an S3-compatible store', () => {
  it('is chosen by S3_BUCKET, configured by the S3_* variables, checked at start', () => {
    expect(app.config.storage).toMatchObject({ kind: 's3', bucket: BUCKET, prefix: 'files/', forcePathStyle: true });
    expect(storage()).toBeInstanceOf(S3Storage);
    expect(loadConfig({}).storage).toEqual({ kind: 'local' });
    expect(loadConfig({ S3_BUCKET: 'b' }).storage).toEqual({
      kind: 's3', bucket: 'b', region: 'us-east-1', endpoint: undefined, prefix: 'attachments/', forcePathStyle: false, accessKeyId: undefined, secretAccessKey: undefined,
    });
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_ENDPOINT: 'minio:9000' })).toThrow(ConfigError);
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'only-the-id' })).toThrow(ConfigError);
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'yes' })).toThrow(ConfigError);
  });

  it('stores each distinct file once as an object named by its SHA-256, and streams it back with ranges', async () => {
    const data = Buffer.from('stored in the object store, 0123456789');
    const first = await upload(member, data, 'a.txt');
    await upload(manager, data, 'again.txt');
    expect(await objectKeys()).toEqual([`files/${sha256(data)}`]);
    expect(localTemp()).toEqual([]);
    const whole = await member.client.get(`/api/v1/attachments/${first}`);
    expect([whole.status, whole.text, whole.headers.get('content-type')]).toEqual([200, data.toString(), 'text/plain; charset=utf-8']);
    const part = await member.client.get(`/api/v1/attachments/${first}`, { headers: { Range: 'bytes=-10' } });
    expect([part.status, part.text, part.headers.get('content-range')]).toEqual([206, '0123456789', `bytes ${data.length - 10}-${data.length - 1}/${data.length}`]);
  });

  it('deletes the object with the last attachment that refers to it', async () => {
    const data = `to be deleted ${Date.now()}`;
    const one = await upload(member, data, 'one.txt');
    const two = await upload(member, data, 'two.txt');
    expect(await objectKeys()).toContain(`files/${sha256(data)}`);
    expect((await member.client.delete(`${url()}/${one}`)).status).toBe(204);
    expect(await storage().has(sha256(data))).toBe(true);
    expect((await member.client.delete(`${url()}/${two}`)).status).toBe(204);
    expect(await storage().has(sha256(data))).toBe(false);
    expect(await objectKeys()).not.toContain(`files/${sha256(data)}`);
  });

  it('lists the stored objects for the sweep, which deletes those no attachment refers to', async () => {
    const referenced = `kept ${Date.now()}`;
    await upload(member, referenced, 'kept.txt');
    const orphan = Buffer.from(`orphan ${Date.now()}`);
    const { writeFileSync } = await import('node:fs');
    const temp = path.join(s3Directory, 'orphan.bin');
    writeFileSync(temp, orphan);
    await storage().put(sha256(orphan), temp, orphan.length);
    const listed: string[] = [];
    for await (const checksum of storage().list()) listed.push(checksum);
    expect(listed).toEqual(expect.arrayContaining([sha256(referenced), sha256(orphan)]));
    expect(await sweepAttachmentBytes(app.em(), app.config)).toBe(1);
    expect(await storage().has(sha256(orphan))).toBe(false);
    expect(await storage().has(sha256(referenced))).toBe(true);
  });

  it('sends nothing to the store for an upload past the limit or cut off', async () => {
    const before = await objectKeys();
    const tooLarge = await streamUpload(`${app.baseUrl}${url()}`, member.token, { size: 1024 * 1024, seed: 3 });
    expect(tooLarge.status).toBe(413);
    await streamUpload(`${app.baseUrl}${url()}`, member.token, { size: 60 * 1024, seed: 4, abortAfter: 8 * 1024 });
    for (let attempt = 0; attempt < 50 && localTemp().length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(localTemp()).toEqual([]);
    expect(await objectKeys()).toEqual(before);
  });
});
