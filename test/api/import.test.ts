// importNote and getJob (issue 23): an export zip in, a new note out, all or nothing; the archives are made here from
// the documented format (test/support/export-archive.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleJobs } from '../../src/modules/imports/jobs.ts';
import { failAbandonedJobs } from '../../src/modules/imports/jobs.repository.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeIssue, makePage, makePageComment, makeUser, type Actor } from '../support/factories.ts';
import { forkedRunbook } from '../support/forks.ts';
import type { Team } from '../../src/modules/teams/team.entity.ts';
import { makeScenario } from '../support/scenario.ts';
import { MULTIPART, multipartBody, streamUpload, type Part } from '../support/multipart.ts';
import { PNG, sampleExport, sha256, zipExport } from '../support/export-archive.ts';

const LIMIT = 4 * 1024 * 1024;
let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor;
let team: Team;
let teamName: string;

beforeAll(async () => {
  app = await startTestApp({ LIMIT_IMPORT_BYTES: String(LIMIT), LIMIT_IMPORT_ENTRIES: '1000' });
  const cast = await makeScenario(app, { usernames: { manager: 'imp-manager', member: 'imp-member' } });
  ({ manager, member, outsider, team } = cast);
  teamName = cast.team.name;
});
afterAll(async () => {
  await settleJobs();
  await app?.close();
});

const url = (team = teamName) => `/api/v1/teams/${team}/imports`;
const sample = (attachment = PNG) => sampleExport({ manager: manager.user.username, member: member.user.username }, attachment);

function upload(actor: Actor, zip: Buffer | string, extra: Part[] = [], team = teamName) {
  return actor.client.post(url(team), { raw: { body: multipartBody([...extra, { name: 'file', filename: 'note.zip', data: zip }]), contentType: MULTIPART } });
}

/** Polls the job until it ends. */
async function finished(actor: Actor, id: number): Promise<any> {
  await settleJobs();
  const answer = await actor.client.get(`/api/v1/jobs/${id}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

async function importArchive(actor: Actor, zip: Buffer, extra: Part[] = []) {
  const answer = await upload(actor, zip, extra);
  expect(answer.status, answer.text).toBe(202);
  expect(answer.body).toMatchObject({ state: 'queued', progress: 0, note: null, error: null, model: 'job' });
  return finished(actor, answer.body.id);
}

const TABLES = ['notes', 'pages', 'page_versions', 'deleted_page_versions', 'page_places', 'tags', 'issues', 'issue_tags', 'comments',
  'comment_mentions', 'requests', 'request_pages', 'request_attachments', 'attachments', 'note_counters', 'changes', 'logs', 'notifications'];

async function counts(): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const table of TABLES) {
    const [row] = await app.em().execute<{ n: number }[]>(`select count(*)::int as n from ${table}`);
    result[table] = row!.n;
  }
  return result;
}

const root = () => path.join(app.config.dataDir, 'attachments');
const storedFile = (checksum: string) => path.join(root(), checksum.slice(0, 2), checksum.slice(2, 4), checksum);
const tempFiles = () => (existsSync(path.join(root(), 'tmp')) ? readdirSync(path.join(root(), 'tmp')) : []);
const rows = <T = any>(sql: string, parameters: unknown[] = []) => app.em().execute<T[]>(sql, parameters);

describe('importNote', () => {
  it('makes the note with every version (authors, times, order), the tree history, a deleted page, issues, comments, requests and attachments', async () => {
    const { json, files } = sample();
    const job = await importArchive(manager, await zipExport(json, files));
    expect(job, JSON.stringify(job.error)).toMatchObject({ state: 'done', progress: 100, error: null });
    expect(job.note).toMatchObject({ title: 'The handbook', name: 'handbook', is_private: true, model: 'note' });
    const noteId: number = job.note.id;
    const [note] = await rows('select * from notes where id = ?', [noteId]);
    expect(note).toMatchObject({ slug: 'handbook', user_id: manager.user.id, issue_sequence: 5, request_sequence: 4 });
    expect(new Date(note.created_at).toISOString()).toBe('2024-03-04T09:00:00.000Z');

    const pages = await rows('select id, parent_id, position, title, content, version_sequence from pages where note_id = ? order by id', [noteId]);
    expect(pages.map((page) => [page.title, page.content, page.version_sequence])).toEqual([
      ['Home', '<p>Home, version 3</p>', 3],
      ['Child', '<p>Child, version 1</p>', 1],
    ]);
    const [home, child] = pages;
    expect(child.parent_id).toBe(home.id);
    expect(note.cover_page_id).toBe(home.id);

    const versions = await rows('select page_id, index, title, user_id, imported_author, created_at, request_id from page_versions where note_id = ? order by page_id, index', [noteId]);
    expect(versions.map((version) => [version.page_id, version.index, version.user_id, version.imported_author, new Date(version.created_at).toISOString()])).toEqual([
      [home.id, 1, manager.user.id, null, '2024-03-04T09:01:00.000Z'],
      [home.id, 2, manager.user.id, { username: 'ghost-writer', name: 'Ghost Writer' }, '2024-03-04T09:02:00.000Z'],
      [home.id, 3, member.user.id, null, '2024-03-04T09:20:00.000Z'],
      [child.id, 1, member.user.id, null, '2024-03-04T09:03:00.000Z'],
    ]);
    const [merged] = await rows("select id from requests where to_note_id = ? and index = 2", [noteId]);
    expect(versions[2].request_id).toBe(merged.id);

    // the deleted page: its versions kept apart, its places ending in a deletion
    const deleted = await rows('select page_id, index, title, imported_author from deleted_page_versions where note_id = ? order by index', [noteId]);
    expect(deleted.map((version) => [version.index, version.title, version.imported_author?.username ?? null])).toEqual([[1, 'Gone', 'ghost-writer'], [2, 'Gone soon', null]]);
    const goneId = deleted[0].page_id;
    expect(pages.some((page) => page.id === goneId)).toBe(false);

    const places = await rows('select page_id, parent_id, position, title, present, since from page_places where note_id = ? order by page_id, since, id', [noteId]);
    expect(places.map((place) => [place.page_id, place.parent_id, place.title, place.present, new Date(place.since).toISOString().slice(11, 16)])).toEqual([
      [home.id, null, 'Home v1', true, '09:01'],
      [home.id, null, 'Home', true, '09:02'],
      [child.id, null, 'Child', true, '09:03'],
      [child.id, home.id, 'Child', true, '09:04'],
      [goneId, home.id, 'Gone', true, '09:06'],
      [goneId, home.id, 'Gone soon', true, '09:07'],
      [goneId, home.id, 'Gone soon', false, '09:08'],
    ]);

    const issues = await rows('select id, index, from_user_id, to_user_id, imported_author, is_done, via_app from issues where note_id = ? order by index', [noteId]);
    expect(issues.map((issue) => [issue.index, issue.from_user_id, issue.to_user_id, issue.imported_author?.username ?? null, issue.is_done, issue.via_app])).toEqual([
      [3, manager.user.id, member.user.id, 'ghost-writer', false, null],
      [5, manager.user.id, null, null, true, 'Some app'],
    ]);
    const tags = await rows('select t.name from issue_tags it join tags t on t.id = it.tag_id where it.issue_id = ? order by it.added_order', [issues[0].id]);
    expect(tags.map((tag) => tag.name)).toEqual(['docs', 'bug']);

    const comments = await rows('select id, type, page_id, issue_id, request_id, user_id, imported_author, body from comments where note_id = ? order by created_at, id', [noteId]);
    const [requestTwo] = await rows('select id from requests where to_note_id = ? and index = 2', [noteId]);
    expect(comments.map((comment) => [comment.type, comment.page_id, comment.issue_id, comment.request_id, comment.body])).toEqual([
      ['page', home.id, null, null, '<p>Nice, @someone</p>'],
      ['issue', null, issues[0].id, null, '<p>on it</p>'],
      ['note', null, null, null, '<p>a note comment</p>'],
      ['request', null, null, requestTwo.id, '<p>why this home?</p>'],
    ]);
    expect(comments[2].imported_author).toEqual({ username: 'ghost-writer', name: 'Ghost Writer' });
    const mentions = await rows('select user_id from comment_mentions where comment_id = ?', [comments[0].id]);
    expect(mentions.map((mention) => mention.user_id)).toEqual([member.user.id]);

    const requests = await rows('select id, index, status, from_note_id, user_id, merged_by_id, imported_author, imported_from from requests where to_note_id = ? order by index', [noteId]);
    expect(requests.map((request) => [request.index, request.status, request.from_note_id, request.user_id, request.merged_by_id, request.imported_from])).toEqual([
      [2, 'merged', null, member.user.id, manager.user.id, { team: 'elsewhere', note: 'handbook-fork' }],
      [4, 'opened', null, manager.user.id, null, null],
    ]);
    const entries = await rows('select request_id, to_page_id, base_version_id, type, imported_title, imported_content, merged from request_pages where note_id = ? order by request_id', [noteId]);
    const [homeV2] = await rows('select id from page_versions where page_id = ? and index = 2', [home.id]);
    expect(entries.map((entry) => [entry.request_id, entry.to_page_id, entry.base_version_id, entry.type, entry.imported_content, entry.merged])).toEqual([
      [requests[0].id, home.id, homeV2.id, 'update', '<p>Home, as proposed</p>', true],
      [requests[1].id, null, null, 'create', '<p>A new page, proposed</p>', false],
    ]);

    const attachments = await rows('select id, filename, checksum, byte_size, content_type, user_id, imported_author from attachments where note_id = ?', [noteId]);
    expect(attachments).toEqual([{ id: expect.any(Number), filename: 'pixel.png', checksum: sha256(PNG), byte_size: PNG.length, content_type: 'image/png', user_id: manager.user.id, imported_author: { username: 'ghost-writer', name: 'Ghost Writer' } }]);
    expect(readFileSync(storedFile(sha256(PNG)))).toEqual(PNG);
    const carried = await rows('select attachment_id from request_attachments where request_id = ?', [requests[0].id]);
    expect(carried).toEqual([{ attachment_id: attachments[0].id }]);
    expect(tempFiles()).toEqual([]);

    // numbering goes on after the imported indexes
    const issue = await manager.client.post(`/api/v1/${teamName}/handbook/issues`, { json: { issue: { title: 'next' } } });
    expect(issue.status, issue.text).toBe(200);
    expect(issue.body.index).toBe(6);
  });

  it('shows the recorded author of a version whose user is not here, and answers the imported request without its fork', async () => {
    const history = await manager.client.get(`/api/v1/${teamName}/handbook/${(await rows("select p.id from pages p join notes n on n.id = p.note_id where n.slug = 'handbook' and p.title = 'Home'"))[0].id}/histories`);
    expect(history.status, history.text).toBe(200);
    const byIndex = new Map(history.body.map((version: any) => [version.index, version]));
    expect(byIndex.get(2)).toMatchObject({ imported_author: { username: 'ghost-writer', name: 'Ghost Writer' }, user: { username: manager.user.username } });
    expect(byIndex.get(1)).toMatchObject({ imported_author: null });
    // the web view of the history names the recorded author too
    const pageId = (byIndex.get(2) as any).page.id;
    const view = await manager.client.get(`/${teamName}/handbook/${pageId}/histories`, { headers: { Accept: 'text/html' } });
    expect(view.status).toBe(200);
    expect(view.text).toContain('Ghost Writer (ghost-writer)');
    const request = await manager.client.get(`/api/v1/${teamName}/handbook/requests/4`);
    expect(request.status, request.text).toBe(200);
    expect(request.body).toMatchObject({ index: 4, from_note: null, mergeable: false, status: 'opened' });
    const merge = await manager.client.put(`/api/v1/${teamName}/handbook/requests/4/merge`);
    expect(merge.status, merge.text).toBe(422);
    expect(merge.body.code).toBe('fork_missing');
    // closed and opened again as any request; the change stream and the activity log tell of it without a fork
    const close = await manager.client.put(`/api/v1/${teamName}/handbook/requests/4/close`);
    expect(close.status, close.text).toBe(200);
    expect(close.body).toMatchObject({ status: 'closed', from_note: null, mergeable: false, mergeable_state: 'closed' });
    expect((await manager.client.put(`/api/v1/${teamName}/handbook/requests/4/open`)).status).toBe(200);
    const events = await manager.client.get('/api/v1/events', { query: { format: 'json', since: '0', types: 'request.closed,request.opened' } });
    expect(events.status, events.text).toBe(200);
    expect(events.body.map((event: any) => [event.type, event.request.index, event.from_note])).toEqual([['request.closed', 4, undefined], ['request.opened', 4, undefined]]);
    expect((await manager.client.get('/api/v1/logs')).status).toBe(200);
  });

  it('makes the imported pages, issues and comments searchable', async () => {
    await app.settle();
    const [imported] = await rows("select id from notes where slug = 'handbook'");
    for (const [words, type] of [['version 3', 'page'], ['Write the intro', 'issue'], ['a note comment', 'comment'], ['on it', 'comment']]) {
      const answer = await manager.client.get('/api/v1/search', { query: { q: words!, type: type! } });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.map((note: any) => note.id), `${words} in ${type}`).toEqual([imported.id]);
    }
  });

  it('fails the job with name_taken when the team has a note of that name, and takes `name` to rename', async () => {
    const { json, files } = sample();
    const zip = await zipExport(json, files);
    const before = await counts();
    const taken = await importArchive(manager, zip);
    expect(taken).toMatchObject({ state: 'failed', note: null, error: { code: 'name_taken' } });
    const after = await counts();
    expect(after).toEqual(before);
    const renamed = await importArchive(manager, zip, [{ name: 'name', data: 'handbook-2' }]);
    expect(renamed).toMatchObject({ state: 'done', note: { name: 'handbook-2' } });
    const conflict = await upload(manager, zip, [{ name: 'name', data: 'handbook' }]);
    expect([conflict.status, conflict.body.code]).toEqual([409, 'name_taken']);
    const invalid = await upload(manager, zip, [{ name: 'name', data: '1234' }]);
    expect([invalid.status, invalid.body.code]).toEqual([400, 'validation_failed']);
    expect(tempFiles()).toEqual([]);
  });

  it('answers 401 without a token, 403 to a member who is not a manager, 404 for a team that does not exist', async () => {
    const { json, files } = sample();
    const zip = await zipExport(json, files);
    const body = { raw: { body: multipartBody([{ name: 'file', filename: 'note.zip', data: zip }]), contentType: MULTIPART } };
    expect((await anonymous(app).post(url(), body)).status).toBe(401);
    const forbidden = await member.client.post(url(), body);
    expect([forbidden.status, forbidden.body.code]).toEqual([403, 'forbidden']);
    expect((await outsider.client.post(url(), body)).status).toBe(403);
    expect((await manager.client.post(url('no-such-team'), body)).status).toBe(404);
  });

  it('answers 400 without a part `file`, and 415 for a body that is not multipart', async () => {
    const missing = await manager.client.post(url(), { raw: { body: multipartBody([{ name: 'name', data: 'x' }]), contentType: MULTIPART } });
    expect([missing.status, missing.body.code]).toEqual([400, 'validation_failed']);
    const json = await manager.client.post(url(), { json: { file: 'x' } });
    expect(json.status).toBe(415);
  });

  it('answers 413 past LIMIT_IMPORT_BYTES while the upload streams, naming the limit, and keeps nothing', async () => {
    const before = await counts();
    const size = LIMIT * 4;
    const answer = await streamUpload(`${app.baseUrl}${url()}`, manager.token, { size, seed: 3 });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'payload_too_large', detail: expect.stringContaining(String(LIMIT)) });
    expect(answer.sentWhenAnswered).toBeLessThan(size);
    expect(await counts()).toEqual(before);
    expect(tempFiles()).toEqual([]);
  });
});

/** Rewrites every occurrence of a name in the zip's headers (same length), to make names yazl refuses to write. */
function patchName(zip: Buffer, from: string, to: string): Buffer {
  expect(from.length).toBe(to.length);
  const patched = Buffer.from(zip);
  for (let at = patched.indexOf(from); at !== -1; at = patched.indexOf(from, at + 1)) patched.write(to, at, 'latin1');
  return patched;
}

/** Sets the uncompressed size the central directory declares for an entry (a zip bomb's lie). */
function declareSize(zip: Buffer, name: string, size: number): Buffer {
  const patched = Buffer.from(zip);
  for (let at = patched.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); at !== -1; at = patched.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 1)) {
    const nameLength = patched.readUInt16LE(at + 28);
    if (patched.toString('latin1', at + 46, at + 46 + nameLength) === name) patched.writeUInt32LE(size, at + 24);
  }
  return patched;
}

/** The central directory's header of an entry, by name: its offset in the zip. */
function centralHeader(zip: Buffer, name: string): number {
  const signature = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
  for (let at = zip.indexOf(signature); at !== -1; at = zip.indexOf(signature, at + 1)) {
    if (zip.toString('latin1', at + 46, at + 46 + zip.readUInt16LE(at + 28)) === name) return at;
  }
  throw new Error(`no entry ${name}`);
}

/** Changes the CRC-32 the central directory declares for an entry (bytes changed since they were zipped). */
function declareCrc(zip: Buffer, name: string): Buffer {
  const patched = Buffer.from(zip);
  const at = centralHeader(patched, name);
  patched.writeUInt32LE((patched.readUInt32LE(at + 16) ^ 0xffffffff) >>> 0, at + 16);
  return patched;
}

/** Overwrites an entry's compressed bytes with ones that are not deflate data. */
function breakData(zip: Buffer, name: string): Buffer {
  const patched = Buffer.from(zip);
  const local = patched.readUInt32LE(centralHeader(patched, name) + 42);
  const start = local + 30 + patched.readUInt16LE(local + 26) + patched.readUInt16LE(local + 28);
  patched.fill(0xff, start, start + patched.readUInt32LE(centralHeader(patched, name) + 20));
  return patched;
}

describe('importNote: bad archives fail the job and leave nothing behind', () => {
  // each case's attachment has bytes of its own, not stored before: a failure must not leave them
  let attachment = PNG;
  const sample = () => sampleExport({ manager: manager.user.username, member: member.user.username }, attachment);
  const cases: Array<[string, string, () => Promise<Buffer>]> = [
    ['not a zip', 'not_a_zip', async () => Buffer.from('this is not a zip file at all')],
    ['note.json that is not JSON', 'invalid_note_json', async () => zipExport('{ not json', sample().files)],
    ['note.json failing the schema', 'invalid_note_json', async () => {
      const { json, files } = sample();
      (json.pages[0] as any).versions[0].author = { login: 'x' };
      return zipExport(json, files);
    }],
    ['an unknown format version', 'unsupported_format_version', async () => zipExport({ ...sample().json, format_version: 2 }, sample().files)],
    ['a missing content file', 'missing_file', async () => {
      const { json, files } = sample();
      files.delete('pages/102/1.html');
      return zipExport(json, files);
    }],
    ['a page under a page not in the file', 'invalid_archive', async () => {
      const { json, files } = sample();
      json.pages[1]!.places[1]!.parent = 999;
      return zipExport(json, files);
    }],
    ['an attachment whose bytes do not match its checksum', 'invalid_archive', async () => {
      const { json, files } = sample();
      files.set(`attachments/${sha256(attachment)}`, Buffer.concat([attachment, Buffer.from('x')]));
      return zipExport(json, files);
    }],
    ['a content file that fails to be read late (after the attachment bytes were stored)', 'too_large', async () => {
      const { json, files } = sample();
      // a request's proposed content, read after the attachments were stored, is over the page content limit
      files.set('requests/4/1.html', 'x'.repeat(app.config.limits.pageContentBytes + 1));
      return zipExport(json, files);
    }],
    ['a path that escapes', 'unsafe_path', async () => {
      const { json, files } = sample();
      files.set('xx/escape.txt', 'out');
      return patchName(await zipExport(json, files), 'xx/escape.txt', '../escape.txt');
    }],
    ['too many entries', 'too_many_entries', async () => {
      const { json, files } = sample();
      for (let at = 0; at < 1000; at += 1) files.set(`pages/extra/${at}.html`, '');
      return zipExport(json, files);
    }],
    ['a zip bomb that says what it is', 'too_large', async () => {
      const { json, files } = sample();
      files.set('pages/bomb.html', Buffer.alloc(8 * 1024 * 1024));
      return zipExport(json, files);
    }],
    ['a zip bomb that lies about its size', 'too_large', async () => {
      const { json, files } = sample();
      files.set('pages/102/1.html', Buffer.alloc(8 * 1024 * 1024, 0x20));
      return declareSize(await zipExport(json, files), 'pages/102/1.html', 20);
    }],
    ['a content file whose CRC-32 is not the one declared', 'not_a_zip', async () => {
      const { json, files } = sample();
      return declareCrc(await zipExport(json, files), 'pages/102/1.html');
    }],
    ['a content file whose compressed bytes are not deflate data', 'not_a_zip', async () => {
      const { json, files } = sample();
      return breakData(await zipExport(json, files), 'pages/102/1.html');
    }],
  ];

  for (const [what, code, make] of cases) {
    it(`${what}: ${code}`, async () => {
      attachment = Buffer.from(`the attachment of the case ${what}`);
      const before = await counts();
      const zip = await make();
      const answer = await upload(manager, zip, [{ name: 'name', data: 'bad-one' }]);
      expect(answer.status, answer.text).toBe(202);
      const job = await finished(manager, answer.body.id);
      expect(job).toMatchObject({ state: 'failed', note: null, error: { code } });
      expect(job.error.detail).toEqual(expect.any(String));
      expect(await counts()).toEqual(before);
      expect(tempFiles()).toEqual([]);
      expect(existsSync(storedFile(sha256(attachment)))).toBe(false);
    });
  }
});

describe('getJob', () => {
  it("answers 404 for another user's job and for none, 401 without a token", async () => {
    const { json, files } = sample();
    const answer = await upload(manager, await zipExport(json, files), [{ name: 'name', data: 'for-get-job' }]);
    expect(answer.status).toBe(202);
    await settleJobs();
    const own = await manager.client.get(`/api/v1/jobs/${answer.body.id}`);
    expect(own.body).toMatchObject({ id: answer.body.id, kind: 'import', state: 'done' });
    expect((await member.client.get(`/api/v1/jobs/${answer.body.id}`)).status).toBe(404);
    expect((await (await makeUser(app)).client.get(`/api/v1/jobs/${answer.body.id}`)).status).toBe(404);
    expect((await manager.client.get('/api/v1/jobs/2147483647')).status).toBe(404);
    expect((await manager.client.get('/api/v1/jobs/0')).status).toBe(404);
    expect((await anonymous(app).get(`/api/v1/jobs/${answer.body.id}`)).status).toBe(401);
  });
});

describe('jobs a stopped process left unfinished', () => {
  it('are failed as interrupted when the server starts: every one on the embedded database, those no process touches on PostgreSQL', async () => {
    const job = async (heartbeat: string) => (await rows<{ id: number }>(
      `insert into jobs (kind, user_id, state, heartbeat_at) values ('import', ?, 'running', now() - interval '${heartbeat}') returning id`, [manager.user.id]))[0]!.id;
    const stale = await job('5 minutes');
    const live = await job('1 second');
    expect(await failAbandonedJobs(app.em(), { all: false, staleSeconds: 60 })).toBe(1);
    const answer = await manager.client.get(`/api/v1/jobs/${stale}`);
    expect(answer.body).toMatchObject({ state: 'failed', note: null, error: { code: 'interrupted' } });
    expect((await manager.client.get(`/api/v1/jobs/${live}`)).body).toMatchObject({ state: 'running', error: null });
    expect(await failAbandonedJobs(app.em(), { all: true, staleSeconds: 60 })).toBe(1);
    expect((await manager.client.get(`/api/v1/jobs/${live}`)).body).toMatchObject({ state: 'failed', error: { code: 'interrupted' } });
  });
});

/** The export's note.json with what may differ between a note and its import taken out: ids (pages by their place in the file), the export's time. */
function comparable(noteJson: any): any {
  const order = new Map<number, number>(noteJson.pages.map((page: any, at: number) => [page.id, at + 1]));
  const page = (id: number | null) => (id === null ? null : `page#${order.get(id)}`);
  const file = (name: string | null) => name?.replace(/^pages\/(\d+)\//, (_, id: string) => `pages/${page(Number(id))}/`) ?? null;
  return {
    ...noteJson,
    exported_at: undefined,
    note: { ...noteJson.note, name: undefined, cover_page: page(noteJson.note.cover_page) },
    pages: noteJson.pages.map((entry: any) => ({
      ...entry,
      id: page(entry.id),
      unversioned_content_file: file(entry.unversioned_content_file),
      versions: entry.versions.map((version: any) => ({ ...version, content_file: file(version.content_file) })),
      places: entry.places.map((place: any) => ({ ...place, parent: page(place.parent) })),
    })),
    requests: noteJson.requests.map((request: any) => ({ ...request, pages: request.pages.map((entry: any) => ({ ...entry, page: page(entry.page) })) })),
  };
}

async function exportOf(actor: Actor, path: string): Promise<{ zip: Buffer; noteJson: any }> {
  const response = await fetch(`${app.baseUrl}${path}/export`, { headers: { Authorization: `Bearer ${actor.token}` } });
  expect(response.status).toBe(200);
  const zip = Buffer.from(await response.arrayBuffer());
  const yauzl = (await import('yauzl')).default;
  const zipFile = await yauzl.fromBufferPromise(zip, { lazyEntries: true });
  let text = '';
  await new Promise<void>((resolve, reject) => {
    zipFile.on('entry', (entry: any) => {
      if (entry.fileName !== 'note.json') return zipFile.readEntry();
      zipFile.openReadStream(entry, (error, stream) => {
        if (error || !stream) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          text = Buffer.concat(chunks).toString('utf8');
          resolve();
        });
      });
    });
    zipFile.on('end', () => resolve());
    zipFile.readEntry();
  });
  return { zip, noteJson: JSON.parse(text) };
}

describe('round trip: export -> import -> export', () => {
  let first: { zip: Buffer; noteJson: any };
  let second: { zip: Buffer; noteJson: any };

  beforeAll(async () => {
    const runbook = await forkedRunbook(app, { team, manager, member, outsider });
    const { upstreamPath } = runbook;
    const guide = await makePage(app, runbook.note, member, { title: 'Guide', content: '<p>guide v1</p>' });
    const setup = await makePage(app, runbook.note, member, { title: 'Setup', parent: guide.id, content: '<p>setup v1</p>' });
    expect((await member.client.put(`${upstreamPath}/${setup.id}`, { json: { page: { content: '<p>setup v2</p>' } } })).status).toBe(200);
    const doomed = await makePage(app, runbook.note, member, { title: 'Doomed', content: '<p>doomed</p>' });
    expect((await member.client.put(`${upstreamPath}/${doomed.id}`, { json: { page: { parent: guide.id } } })).status).toBe(200);
    expect((await member.client.delete(`${upstreamPath}/${doomed.id}`)).status).toBe(204);
    await makePageComment(setup, manager, { comment: 'nice setup', mentions: [member.user.username] });
    const issue = await makeIssue(app, runbook.note, member, { title: 'Check ports' });
    expect((await member.client.post(`${upstreamPath}/issues/${issue.index}/tags`, { json: { tags: ['ops', 'net'] } })).status).toBe(200);
    expect((await member.client.post(`${upstreamPath}/issues/${issue.index}/comments`, { json: { comment: { comment: 'on it' } } })).status).toBe(200);
    expect((await member.client.post(`${upstreamPath}/comments`, { json: { comment: { comment: 'on the note' } } })).status).toBe(200);
    const uploaded = await member.client.post(`${upstreamPath}/attachments`, { raw: { body: multipartBody([{ name: 'file', filename: 'notes.bin', data: 'round trip bytes' }]), contentType: MULTIPART } });
    expect(uploaded.status, uploaded.text).toBe(200);
    const request = await runbook.request([await runbook.editFork(runbook.forkDeploy, '<h1>Deploy</h1><p>proposed</p>')]);
    const reviewed = await manager.client.post(`${upstreamPath}/requests/${request.index}/comments`, { json: { comment: { comment: 'why?' }, mentions: [member.user.username] } });
    expect(reviewed.status, reviewed.text).toBe(200);

    first = await exportOf(manager, upstreamPath);
    const job = await importArchive(manager, first.zip, [{ name: 'name', data: 'round-trip' }]);
    expect(job, JSON.stringify(job.error)).toMatchObject({ state: 'done' });
    second = await exportOf(manager, `/api/v1/${teamName}/round-trip`);
  });

  it('gives the same note.json, except ids, the export time and the team', () => {
    expect(second.noteJson.requests).toHaveLength(1);
    expect(second.noteJson.requests[0].comments).toMatchObject([{ body: 'why?', mentions: [member.user.username] }]);
    expect(comparable(second.noteJson)).toEqual(comparable(first.noteJson));
  });

  it("gives back an imported request's fork name and proposed page titles and files (kept without the fork)", () => {
    expect(comparable(second.noteJson).requests).toEqual(comparable(first.noteJson).requests);
    expect(second.noteJson.requests[0].from).toEqual(first.noteJson.requests[0].from);
    expect(second.noteJson.requests[0].from).not.toBeNull();
  });
});
