import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { createAttachment, listAttachments } from '../../generated/client/index.ts';
import { Attachment } from '../../src/modules/attachments/attachment.entity.ts';
import { copyAttachmentsToFork } from '../../src/modules/attachments/attachments.service.ts';
import { Log } from '../../src/modules/logs/log.entity.ts';
import type { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';
import { MULTIPART, multipartBody, streamUpload, type Part } from '../support/multipart.ts';

const LIMIT = 64 * 1024;
let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor;
let open: Note, secret: Note, foreignSecret: Note;
let teamName: string, foreignTeam: string;

// a 1x1 PNG
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

beforeAll(async () => {
  app = await startTestApp({ LIMIT_ATTACHMENT_BYTES: String(LIMIT) }, { countQueries: true });
  const cast = await makeScenario(app, { notes: { open: {}, secret: { isPrivate: true } } });
  ({ manager, member, outsider, reader } = cast);
  ({ open, secret } = cast.notes);
  teamName = cast.team.name;
  const other = await makeScenario(app, { notes: { hidden: { isPrivate: true } } });
  foreignSecret = other.notes.hidden;
  foreignTeam = other.team.name;
});
afterAll(async () => app?.close());

const root = () => path.join(app.config.dataDir, 'attachments');
const storedFile = (checksum: string) => path.join(root(), checksum.slice(0, 2), checksum.slice(2, 4), checksum);
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const tempFiles = () => (existsSync(path.join(root(), 'tmp')) ? readdirSync(path.join(root(), 'tmp')) : []);
const urlOf = (note: Note, team = teamName) => `/api/v1/${team}/${note.slug}/attachments`;

function upload(actor: Actor, note: Note, parts: Part[], team = teamName) {
  return actor.client.post(urlOf(note, team), { raw: { body: multipartBody(parts), contentType: MULTIPART } });
}
const file = (data: Buffer | string, filename: string, extra: Partial<Part> = {}): Part => ({ name: 'file', filename, data, ...extra });

function expectProblem(answer: { status: number; body: any; text: string }, status: number, code: string) {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.body.code).toBe(code);
}

describe('createAttachment', () => {
  it('stores the bytes under their SHA-256 and the row, sniffs the type, and answers the upload result', async () => {
    // an old client: per-part Content-Length and Content-Transfer-Encoding, a type that lies, other parts around
    const answer = await upload(member, open, [
      { name: 'utf8', data: '✓' },
      file(PNG, '会議の資料.png', { type: 'text/html', legacyHeaders: true }),
      { name: 'other', filename: 'ignored.txt', data: 'not the file' },
    ]);
    expect(answer.status, answer.text).toBe(200);
    const stored = await app.em().findOneOrFail(Attachment, { note: open.id }, { orderBy: { id: 'desc' } });
    expect(answer.body).toEqual({
      fileurl: `${app.baseUrl}/api/v1/attachments/${stored.id}`,
      filelink: `/api/v1/attachments/${stored.id}`,
      filename: '会議の資料.png',
      is_image: true,
    });
    expect(stored).toMatchObject({ filename: '会議の資料.png', extname: '.png', contentType: 'image/png', byteSize: PNG.length, checksum: sha256(PNG), managed: true, forkedFrom: null });
    expect(stored.user.id).toBe(member.user.id);
    expect(readFileSync(storedFile(stored.checksum))).toEqual(PNG);
    expect(tempFiles()).toEqual([]);
    const log = await app.em().findOneOrFail(Log, { type: 'attachment', attachment: stored.id });
    expect([log.action, log.user.id, log.note?.id, log.summary]).toEqual(['create', member.user.id, open.id, { attachment_id: stored.id, filename: '会議の資料.png' }]);
  });

  it('stores the same bytes once however often they are uploaded', async () => {
    const data = `same bytes ${Date.now()}`;
    const first = await upload(member, open, [file(data, 'a.txt')]);
    const second = await upload(manager, secret, [file(data, 'b.txt', { extendedFilename: true })]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.filename).toBe('b.txt');
    expect(await app.em().count(Attachment, { checksum: sha256(data) })).toBe(2);
    const directory = path.dirname(storedFile(sha256(data)));
    expect(readdirSync(directory).filter((name) => name === sha256(data))).toHaveLength(1);
  });

  it('stores the same bytes once when they arrive at the same time, while another copy of them is deleted', async () => {
    const data = `concurrent ${Date.now()}`;
    const existing = idOfUpload(await upload(member, open, [file(data, 'first.txt')]));
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, (_, index) => upload(member, open, [file(data, `copy-${index}.txt`)])),
      member.client.delete(`${urlOf(open)}/${existing}`),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 204]);
    expect(await app.em().count(Attachment, { checksum: sha256(data) })).toBe(5);
    expect(readFileSync(storedFile(sha256(data))).toString()).toBe(data);
    expect(tempFiles()).toEqual([]);
  });

  it('keeps only the last segment of a file name with a path, and the content decides is_image', async () => {
    const answer = await upload(member, open, [file('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', '..\\..\\evil/x.svg', { type: 'image/svg+xml' })]);
    expect(answer.body).toMatchObject({ filename: 'x.svg', is_image: false });
  });

  it('answers 413 past the limit while the body still streams, naming the limit, and keeps nothing', async () => {
    const before = await app.em().count(Attachment, {});
    const size = 16 * 1024 * 1024;
    const answer = await streamUpload(`${app.baseUrl}${urlOf(open)}`, member.token, { size, seed: 1 });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'payload_too_large', detail: expect.stringContaining(String(LIMIT)) });
    // answered long before the client had sent the whole file
    expect(answer.sentWhenAnswered).toBeLessThan(size);
    expect(await app.em().count(Attachment, {})).toBe(before);
    expect(tempFiles()).toEqual([]);
  });

  it('accepts a file of exactly the limit', async () => {
    const answer = await upload(member, open, [file(Buffer.alloc(LIMIT, 7), 'exact.bin')]);
    expect(answer.status, answer.text).toBe(200);
  });

  it('leaves no file and no row when the client goes away mid-upload', async () => {
    const before = await app.em().count(Attachment, {});
    await streamUpload(`${app.baseUrl}${urlOf(open)}`, member.token, { size: LIMIT - 10, seed: 2, abortAfter: 16 * 1024 });
    for (let attempt = 0; attempt < 50 && tempFiles().length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(tempFiles()).toEqual([]);
    expect(await app.em().count(Attachment, {})).toBe(before);
  });

  it('answers 400 without a `file` part, with `file` as a field, and for a malformed body', async () => {
    expectProblem(await upload(member, open, [{ name: 'other', filename: 'x.txt', data: 'x' }]), 400, 'validation_failed');
    expectProblem(await upload(member, open, [{ name: 'file', data: 'just text' }]), 400, 'validation_failed');
    const cut = multipartBody([file('abc', 'a.txt')]).subarray(0, 90);
    expectProblem(await member.client.post(urlOf(open), { raw: { body: cut, contentType: MULTIPART } }), 400, 'malformed_body');
    expect(tempFiles()).toEqual([]);
  });

  it('answers 415 for a multipart body sent to an operation that takes none', async () => {
    expectProblem(await member.client.post('/api/v1/notes', { raw: { body: multipartBody([{ name: 'note[title]', data: 'x' }]), contentType: MULTIPART } }), 415, 'unsupported_media_type');
  });

  it('answers 415 for a body that is not multipart', async () => {
    expectProblem(await member.client.post(urlOf(open), { json: { file: 'x' } }), 415, 'unsupported_media_type');
    expectProblem(await member.client.post(urlOf(open), { raw: { body: 'x', contentType: 'application/octet-stream' } }), 415, 'unsupported_media_type');
  });

  it('answers 401, 403 to those outside the team and to read tokens, 404 for a private note of another team', async () => {
    const before = await app.em().count(Attachment, {});
    expect((await anonymous(app).post(urlOf(open), { raw: { body: multipartBody([file('x', 'x.txt')]), contentType: MULTIPART } })).status).toBe(401);
    expectProblem(await upload(outsider, open, [file('x', 'x.txt')]), 403, 'forbidden');
    expectProblem(await upload(reader, open, [file('x', 'x.txt')]), 403, 'insufficient_scope');
    expectProblem(await upload(outsider, secret, [file('x', 'x.txt')]), 404, 'not_found');
    expectProblem(await upload(member, foreignSecret, [file('x', 'x.txt')], foreignTeam), 404, 'not_found');
    expect(await app.em().count(Attachment, {})).toBe(before);
    expect(tempFiles()).toEqual([]);
  });
});

describe('listAttachments and getAttachment', () => {
  it('lists newest first in the list shape, with pagination headers, in a fixed number of statements', async () => {
    const note = await makeNote(app, teamName, manager.user, { slug: 'listed', title: 'Listed' });
    const one = await upload(member, note, [file('one', 'one.txt')]);
    const two = await upload(member, note, [file(PNG, 'two.png')]);
    const idOf = (answer: { body: { filelink: string } }) => Number(answer.body.filelink.split('/').pop());
    const answer = await member.client.get(urlOf(note));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-total-count')).toBe('2');
    expect(answer.body.map((item: { id: number }) => item.id)).toEqual([idOf(two), idOf(one)]);
    const noteBody = (await member.client.get(`/api/v1/${teamName}/listed`)).body;
    expect(answer.body[0]).toEqual({
      id: idOf(two),
      note_id: note.id,
      user_id: member.user.id,
      file: null,
      forked_id: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      managed: true,
      html_url: `${app.baseUrl}/api/v1/attachments/${idOf(two)}`,
      filename: 'two.png',
      note: noteBody,
      extname: '.png',
    });
    expect((await member.client.get(urlOf(note), { query: { per_page: '1', page: '2' } })).body.map((item: { id: number }) => item.id)).toEqual([idOf(one)]);
    const fewer = await app.countQueries(() => member.client.get(urlOf(note)));
    await upload(member, note, [file('three', 'three')]);
    const more = await app.countQueries(() => member.client.get(urlOf(note)));
    expect(more).toBe(fewer);
  });

  it('shows the metadata at `.json`, with model and the note; 404 to outsiders of a private note', async () => {
    const answer = await upload(member, secret, [file('# notes', 'メモ.md')]);
    const id = Number(answer.body.filelink.split('/').pop());
    const shown = await manager.client.get(`/api/v1/attachments/${id}.json`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ id, note_id: secret.id, user_id: member.user.id, filename: 'メモ.md', extname: '.md', managed: true, model: 'attachment' });
    expect(shown.body).not.toHaveProperty('file');
    expect(shown.body).not.toHaveProperty('forked_id');
    expect(shown.body.note).toEqual((await manager.client.get(`/api/v1/${teamName}/${secret.slug}`)).body);
    expectProblem(await outsider.client.get(`/api/v1/attachments/${id}.json`), 404, 'not_found');
    expectProblem(await outsider.client.get(`/api/v1/attachments/${id}`), 404, 'not_found');
    expectProblem(await outsider.client.get(urlOf(secret)), 404, 'not_found');
    expectProblem(await manager.client.get('/api/v1/attachments/999999.json'), 404, 'not_found');
    expect((await anonymous(app).get(`/api/v1/attachments/${id}.json`)).status).toBe(401);
    expect((await anonymous(app).get(urlOf(open))).status).toBe(401);
  });

  it('answers through the generated SDK', async () => {
    const client = createClient({ baseUrl: app.baseUrl, auth: () => member.token });
    const created = await createAttachment({ client, path: { team: teamName, note: String(open.slug) }, body: { file: new File([PNG], 'sdk.png', { type: 'image/png' }) }, throwOnError: true });
    expect(created.data).toMatchObject({ filename: 'sdk.png', is_image: true });
    const listed = await listAttachments({ client, path: { team: teamName, note: String(open.slug) }, throwOnError: true });
    expect(listed.data.length).toBeGreaterThan(0);
    expect(listed.data.every((item) => item.note_id === open.id && item.file === null)).toBe(true);
  });
});

describe('deleteAttachment', () => {
  const idOf = (answer: { body: { filelink: string } }) => Number(answer.body.filelink.split('/').pop());

  it('lets the uploader delete it; the bytes go with the last row that refers to them', async () => {
    const data = `shared ${Date.now()}`;
    const first = idOf(await upload(member, open, [file(data, 'a.txt')]));
    const second = idOf(await upload(manager, open, [file(data, 'b.txt')]));
    expect((await member.client.delete(`${urlOf(open)}/${first}`)).status).toBe(204);
    expect(await app.em().count(Attachment, { id: first })).toBe(0);
    expect(existsSync(storedFile(sha256(data)))).toBe(true);
    // a manager deletes anyone's
    expect((await manager.client.delete(`${urlOf(open)}/${second}`)).status).toBe(204);
    expect(existsSync(storedFile(sha256(data)))).toBe(false);
    const log = await app.em().findOneOrFail(Log, { type: 'attachment', action: 'delete', summary: { attachment_id: second } });
    expect([log.user.id, log.attachment, log.note?.id]).toEqual([manager.user.id, null, open.id]);
  });

  it('answers 403 to other members and outsiders, 404 elsewhere, 401 without a token, and keeps everything', async () => {
    const id = idOf(await upload(manager, open, [file('kept', 'kept.txt')]));
    const secretId = idOf(await upload(manager, secret, [file('kept too', 'kept.txt')]));
    expectProblem(await member.client.delete(`${urlOf(open)}/${id}`), 403, 'forbidden');
    expectProblem(await outsider.client.delete(`${urlOf(open)}/${id}`), 403, 'forbidden');
    expectProblem(await reader.client.delete(`${urlOf(open)}/${id}`), 403, 'insufficient_scope');
    expectProblem(await outsider.client.delete(`${urlOf(secret)}/${secretId}`), 404, 'not_found');
    expectProblem(await manager.client.delete(`${urlOf(secret)}/${id}`), 404, 'not_found');
    expectProblem(await manager.client.delete(`${urlOf(open)}/999999`), 404, 'not_found');
    expect((await anonymous(app).delete(`${urlOf(open)}/${id}`)).status).toBe(401);
    expect(await app.em().count(Attachment, { id: { $in: [id, secretId] } })).toBe(2);
    expect(existsSync(storedFile(sha256('kept')))).toBe(true);
  });
});

describe('the activity log', () => {
  it('embeds the attachment in its entries, and keeps the file name once it is gone', async () => {
    const id = idOfUpload(await upload(member, open, [file('logged', 'ログ.txt')]));
    const entryOf = async () => ((await manager.client.get('/api/v1/logs', { query: { per_page: '100' } })).body as any[])
      .filter((entry) => entry.type === 'attachment' && entry.title.includes('ログ.txt'));
    const [created] = await entryOf();
    expect(created).toMatchObject({ action: 'create', title: expect.stringContaining('"ログ.txt"') });
    expect(created.attachment).toEqual((await manager.client.get(`/api/v1/attachments/${id}.json`)).body);
    expect(created.note.id).toBe(open.id);
    await member.client.delete(`${urlOf(open)}/${id}`);
    const [deleted] = await entryOf();
    expect(deleted).toMatchObject({ action: 'delete', title: expect.stringContaining('"ログ.txt"') });
    expect(deleted).not.toHaveProperty('attachment');
  });
});

describe('copyAttachmentsToFork', () => {
  it('copies the rows in one statement, remembering the original and sharing the bytes', async () => {
    const original = await makeNote(app, teamName, manager.user, { slug: 'original', title: 'Original' });
    const scratch = await makeNote(app, teamName, manager.user, { slug: 'scratch', title: 'Scratch', forkedFrom: original });
    const ids = [idOfUpload(await upload(member, original, [file('forked bytes', 'f.txt')])), idOfUpload(await upload(member, original, [file(PNG, 'f.png')]))];
    const em = app.em();
    const statements = await app.countQueries(() => em.transactional((tx) => copyAttachmentsToFork(tx, original.id, scratch.id)));
    expect(statements).toBeLessThanOrEqual(3); // begin, the insert, commit
    // createFork carries them: the fork made through the API lists the same files, each naming its original
    const forked = await member.client.post(`/api/v1/${teamName}/original/forks`, { json: { team: teamName } });
    expect(forked.status, forked.text).toBe(200);
    const fork = { slug: String(forked.body.id) } as Note;
    expect((await member.client.get(urlOf(scratch))).body).toHaveLength(2);
    const listed = (await member.client.get(urlOf(fork))).body;
    expect(listed.map((item: { forked_id: number; filename: string }) => [item.forked_id, item.filename])).toEqual([[ids[1], 'f.png'], [ids[0], 'f.txt']]);
    const copies = await app.em().find(Attachment, { note: forked.body.id });
    expect(new Set(copies.map((copy) => copy.checksum))).toEqual(new Set([sha256('forked bytes'), sha256(PNG)]));
    // the original goes; the fork's copy keeps the bytes
    expect((await manager.client.delete(`${urlOf(original)}/${ids[0]}`)).status).toBe(204);
    expect(existsSync(storedFile(sha256('forked bytes')))).toBe(true);
    const copy = copies.find((item) => item.checksum === sha256('forked bytes'))!;
    expect((await app.em().findOneOrFail(Attachment, copy.id)).forkedFrom).toBeNull();
    expect((await member.client.get(`/api/v1/attachments/${copy.id}`)).text).toBe('forked bytes');
  });
});

const idOfUpload = (answer: { body: { filelink: string } }) => Number(answer.body.filelink.split('/').pop());
