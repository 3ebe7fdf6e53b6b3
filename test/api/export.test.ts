import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeIssue, makeNote, makePage, makePageComment, makeUser, type Actor } from '../support/factories.ts';
import { forkedRunbook } from '../support/forks.ts';
import { MULTIPART, multipartBody } from '../support/multipart.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario;

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'shelf' });
});
afterAll(async () => app?.close());

type Zip = { names: string[]; files: Map<string, Buffer> };

/** Every entry of a zip, in the order they are stored. */
function unzip(bytes: Buffer): Promise<Zip> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const names: string[] = [];
      const files = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        zip.openReadStream(entry, (openError, stream) => {
          if (openError || !stream) return reject(openError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve({ names, files }));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** GET the export with `actor`'s token (the raw bytes: the test client reads answers as text). */
async function download(actor: Actor | undefined, path: string) {
  const response = await fetch(`${app.baseUrl}${path}`, { headers: actor ? { Authorization: `Bearer ${actor.token}`, 'Accept-Encoding': 'gzip, br' } : {} });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

const schema = JSON.parse(readFileSync(new URL('../../docs/note-export.schema.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
const validateNoteJson = ajv.compile(schema);

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A note with history: a tree, edits, a move, a deleted page, comments, an issue, an attachment and a request. */
async function noteWithHistory() {
  const runbook = await forkedRunbook(app, cast);
  const { upstreamPath } = runbook;
  const { member, manager } = cast;
  const guide = await makePage(app, runbook.note, member, { title: 'Guide', content: '<p>guide v1</p>' });
  const setup = await makePage(app, runbook.note, member, { title: 'Setup', parent: guide.id, content: '<p>setup v1</p>' });
  for (const content of ['<p>setup v2</p>', '<p>setup v3</p>']) {
    expect((await member.client.put(`${upstreamPath}/${setup.id}`, { json: { page: { content } } })).status).toBe(200);
  }
  const table = await makePage(app, runbook.note, member, {
    title: 'Ports: a/b',
    parent: guide.id,
    content: '<table><thead><tr><th>port</th><th>use</th></tr></thead><tbody><tr><td>80</td><td>web</td></tr></tbody></table>',
  });
  const doomed = await makePage(app, runbook.note, member, { title: 'Doomed', content: '<p>doomed v1</p>' });
  expect((await member.client.put(`${upstreamPath}/${doomed.id}`, { json: { page: { content: '<p>doomed v2</p>' } } })).status).toBe(200);
  // moved under the guide, then deleted: its places say so, its versions stay
  expect((await member.client.put(`${upstreamPath}/${doomed.id}`, { json: { page: { parent: guide.id } } })).status).toBe(200);
  expect((await member.client.delete(`${upstreamPath}/${doomed.id}`)).status).toBe(204);
  await makePageComment(setup, manager, { comment: 'nice setup' });
  const issue = await makeIssue(app, runbook.note, member, { title: 'Check ports', description: 'all of them' });
  expect((await member.client.post(`${upstreamPath}/issues/${issue.index}/tags`, { json: { tags: ['ops', 'net'] } })).status).toBe(200);
  expect((await member.client.post(`${upstreamPath}/issues/${issue.index}/comments`, { json: { comment: { comment: 'on it' } } })).status).toBe(200);
  expect((await member.client.post(`${upstreamPath}/comments`, { json: { comment: { comment: 'on the note' } } })).status).toBe(200);
  const data = Buffer.from('attached bytes \u0000\u0001 of the runbook');
  const uploaded = await member.client.post(`${upstreamPath}/attachments`, { raw: { body: multipartBody([{ name: 'file', filename: 'notes.bin', data }]), contentType: MULTIPART } });
  expect(uploaded.status, uploaded.text).toBe(200);
  const proposed = await runbook.editFork(runbook.forkDeploy, '<h1>Deploy</h1><p>proposed</p>');
  const request = await runbook.request([proposed], { request: { description: 'please' } });
  expect((await manager.client.post(`${upstreamPath}/requests/${request.index}/comments`, { json: { comment: { comment: 'looks right' } } })).status).toBe(200);
  return { ...runbook, guide, setup, table, doomed, data };
}

let world: Awaited<ReturnType<typeof noteWithHistory>>;
let first: { status: number; headers: Headers; bytes: Buffer };
let zip: Zip;
let noteJson: any;

/** How the admin command line, a process of its own, reaches the test server's database. */
function cliDatabase(): { DATABASE_URL: string; DATA_DIR: string } {
  if (app.database.kind === 'postgres') return { DATABASE_URL: String(app.database.orm.config.get('clientUrl')), DATA_DIR: app.config.dataDir };
  // the in-memory database's socket has a directory of its own; the attachments' bytes are under the app's DATA_DIR,
  // where a server's and its command line's are one directory
  const socketDir = app.database.socketDir!;
  const attachments = path.join(socketDir, 'attachments');
  if (!existsSync(attachments)) symlinkSync(path.join(app.config.dataDir, 'attachments'), attachments);
  return { DATABASE_URL: '', DATA_DIR: socketDir };
}

describe('exportNote', () => {
  beforeAll(async () => {
    world = await noteWithHistory();
    first = await download(cast.reader, `${world.upstreamPath}/export`);
    zip = await unzip(first.bytes);
    noteJson = JSON.parse(zip.files.get('note.json')!.toString('utf8'));
  });

  it('answers a zip, not compressed again, with a file name of the team and note', () => {
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/zip');
    expect(first.headers.get('content-encoding')).toBeNull();
    expect(first.headers.get('content-disposition')).toBe(`attachment; filename="shelf-${world.note.slug}.zip"`);
    expect(zip.names[0]).toBe('note.json');
  });

  it('holds a note.json valid against docs/note-export.schema.json', () => {
    const valid = validateNoteJson(noteJson);
    expect(validateNoteJson.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    expect(noteJson).toMatchObject({ format: 'notes-service/note-export', format_version: 1 });
    expect(noteJson.note).toMatchObject({ name: world.note.slug, title: world.note.title, is_private: false, format: 'html', share: 'none' });
    expect(noteJson.pages.map((page: any) => page.id)).toEqual([...noteJson.pages.map((page: any) => page.id)].sort((a, b) => a - b));
  });

  it('has a file for every version of every page, holding that version\'s content', async () => {
    const versions = await app.em().execute<{ page_id: number; index: number; content: string }[]>(
      'select page_id, index, content from page_versions where note_id = ? union all select page_id, index, content from deleted_page_versions where note_id = ?',
      [world.note.id, world.note.id],
    );
    expect(versions.length).toBeGreaterThan(6);
    for (const version of versions) {
      expect(zip.files.get(`pages/${version.page_id}/${version.index}.html`)?.toString('utf8')).toBe(version.content);
    }
    const pageFiles = zip.names.filter((name) => name.startsWith('pages/'));
    expect(pageFiles).toHaveLength(versions.length);
    const setup = noteJson.pages.find((page: any) => page.id === world.setup.id);
    expect(setup.versions.map((version: any) => [version.version, version.content_file])).toEqual([1, 2, 3].map((n) => [n, `pages/${world.setup.id}/${n}.html`]));
    expect(setup.versions[0].author).toEqual({ username: cast.member.user.username, name: cast.member.user.name });
    expect(setup.comments.map((comment: any) => comment.body)).toEqual(['nice setup']);
  });

  it('keeps a deleted page with its versions, and its move and deletion in its places', () => {
    const doomed = noteJson.pages.find((page: any) => page.id === world.doomed.id);
    expect(doomed.versions.map((version: any) => version.version)).toEqual([1, 2]);
    expect(zip.files.get(`pages/${world.doomed.id}/2.html`)?.toString('utf8')).toBe('<p>doomed v2</p>');
    expect(doomed.places.map((place: any) => [place.parent, place.present])).toEqual([[null, true], [world.guide.id, true], [world.guide.id, false]]);
  });

  it('has the issues, the note\'s comments, the request with its proposed content, and the attachments\' bytes', async () => {
    expect(noteJson.issues).toHaveLength(1);
    // the issue's tags in the order the API shows them (the order they were added)
    const shown = (await cast.member.client.get(`${world.upstreamPath}/issues/1`)).body.tags.map((tag: any) => tag.name ?? tag);
    expect(shown.toSorted()).toEqual(['net', 'ops']);
    expect(noteJson.issues[0]).toMatchObject({ index: 1, title: 'Check ports', description: 'all of them', tags: shown });
    expect(noteJson.issues[0].comments.map((comment: any) => comment.body)).toEqual(['on it']);
    expect(noteJson.tags.map((tag: any) => tag.name).toSorted()).toEqual(['net', 'ops']);
    expect(noteJson.comments.map((comment: any) => comment.body)).toEqual(['on the note']);
    expect(noteJson.requests).toHaveLength(1);
    const [request] = noteJson.requests;
    expect(request).toMatchObject({ index: 1, status: 'opened', from: { team: world.fork.team.name, note: String(world.fork.id) } });
    expect(request.comments.map((comment: any) => [comment.body, comment.author.username])).toEqual([['looks right', cast.manager.user.username]]);
    expect(request.pages).toHaveLength(1);
    expect(request.pages[0]).toMatchObject({ type: 'update', page: world.deploy.id, title: 'Deploy', content_file: 'requests/1/1.html' });
    expect(zip.files.get('requests/1/1.html')?.toString('utf8')).toBe('<h1>Deploy</h1><p>proposed</p>');
    const [attachment] = noteJson.attachments;
    expect(attachment).toMatchObject({ filename: 'notes.bin', byte_size: world.data.length, sha256: sha256(world.data), file: `attachments/${sha256(world.data)}` });
    const bytes = zip.files.get(attachment.file)!;
    expect(sha256(bytes)).toBe(attachment.sha256);
    expect(bytes.equals(world.data)).toBe(true);
  });

  it('exports a fork\'s pages that have no version of their own from their copy', async () => {
    const answer = await download(cast.outsider, `${world.forkPath}/export`);
    expect(answer.status).toBe(200);
    const forkZip = await unzip(answer.bytes);
    const forkJson = JSON.parse(forkZip.files.get('note.json')!.toString('utf8'));
    expect(validateNoteJson(forkJson), JSON.stringify(validateNoteJson.errors)).toBe(true);
    expect(forkJson.note.forked_from).toEqual({ team: 'shelf', note: world.note.slug });
    const other = forkJson.pages.find((page: any) => page.id === world.forkOther);
    expect(other).toMatchObject({ versions: [], unversioned_content_file: `pages/${world.forkOther}/copy.html` });
    expect(forkZip.files.get(`pages/${world.forkOther}/copy.html`)?.toString('utf8')).toBe('<p>other</p>');
  });

  it('is reproducible: a second export has the same bytes in every entry, and note.json differs only in exported_at', async () => {
    const second = await download(cast.manager, `${world.upstreamPath}/export`);
    const again = await unzip(second.bytes);
    expect(again.names).toEqual(zip.names);
    for (const name of zip.names.filter((entry) => entry !== 'note.json')) expect(again.files.get(name)!.equals(zip.files.get(name)!), name).toBe(true);
    const withoutTime = (text: string) => text.replace(/"exported_at":"[^"]*"/, '"exported_at":""');
    expect(withoutTime(again.files.get('note.json')!.toString('utf8'))).toBe(withoutTime(zip.files.get('note.json')!.toString('utf8')));
    // with the time the same, the whole zip is the same bytes
    const exportedAt = /"exported_at":"([^"]*)"/;
    const firstTime = exportedAt.exec(zip.files.get('note.json')!.toString('utf8'))![1]!;
    const secondTime = exportedAt.exec(again.files.get('note.json')!.toString('utf8'))![1]!;
    if (firstTime === secondTime) expect(second.bytes.equals(first.bytes)).toBe(true);
  });

  it('gives the current pages as Markdown in folders of the tree, with front matter and tables converted', async () => {
    const answer = await download(cast.member, `${world.upstreamPath}/export?format=markdown`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="shelf-${world.note.slug}-markdown.zip"`);
    const markdown = await unzip(answer.bytes);
    expect(markdown.names).toEqual(['Deploy.md', 'Other.md', 'Guide/Guide.md', 'Guide/Setup.md', 'Guide/Ports_ a_b.md']);
    const setup = markdown.files.get('Guide/Setup.md')!.toString('utf8');
    expect(setup).toMatch(/^---\ntitle: "Setup"\nauthor: "[^"]+"\nupdated: "\d{4}-\d\d-\d\dT[\d:.]+Z"\n---\n/);
    expect(setup).toContain(`author: "${cast.member.user.username}"`);
    expect(setup).toContain('setup v3');
    const table = markdown.files.get('Guide/Ports_ a_b.md')!.toString('utf8');
    expect(table).toContain('| port | use |');
    expect(table).toContain('| 80 | web |');
    expect(table).not.toContain('<table');
  });

  // the admin command line writes the very same zip (a second process, which reaches the database by URL on
  // PostgreSQL, and on the embedded database through the socket of the server that holds it)
  it('is what `npm run admin -- export <team>/<note>` writes to standard output', async () => {
    const root = new URL('../..', import.meta.url).pathname;
    const child = spawn(`${root}node_modules/.bin/node`, ['src/cli/admin.ts', 'export', `shelf/${world.note.slug}`], {
      cwd: root,
      env: { ...process.env, ...cliDatabase(), NODE_ENV: 'test', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(status, stderr).toBe(0);
    const written = await unzip(Buffer.concat(chunks));
    expect(written.names).toEqual(zip.names);
    for (const name of zip.names.filter((entry) => entry !== 'note.json')) expect(written.files.get(name)!.equals(zip.files.get(name)!), name).toBe(true);
    const withoutTime = (text: string) => text.replace(/"exported_at":"[^"]*"/, '');
    expect(withoutTime(written.files.get('note.json')!.toString('utf8'))).toBe(withoutTime(zip.files.get('note.json')!.toString('utf8')));
  }, 60_000);

  // and `npm run admin -- import <team>` takes that zip back from standard input as a new note (reaching it as above)
  it('is taken back by `npm run admin -- import <team> --name`', async () => {
    const root = new URL('../..', import.meta.url).pathname;
    const child = spawn(`${root}node_modules/.bin/node`, ['src/cli/admin.ts', 'import', 'shelf', '--name', 'from-the-shell'], {
      cwd: root,
      env: { ...process.env, ...cliDatabase(), NODE_ENV: 'test', LOG_LEVEL: 'silent' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdin.end(first.bytes);
    const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(status, output).toBe(0);
    expect(output).toContain('imported shelf/from-the-shell');
    const [stored] = await app.em().execute<{ versions: string }[]>(
      `select count(*) as versions from page_versions v join notes n on n.id = v.note_id where n.slug = 'from-the-shell'`, []);
    const [original] = await app.em().execute<{ versions: string }[]>(
      'select count(*) as versions from page_versions where note_id = ?', [world.note.id]);
    expect(Number(stored!.versions)).toBe(Number(original!.versions));
    expect(Number(stored!.versions)).toBeGreaterThan(0);
  }, 60_000);

  it('stops an export whose client goes away, and frees its turn for the next', async () => {
    const big = await makeNote(app, cast.team, cast.manager.user, { slug: 'big-export' });
    // text that deflate cannot shrink much: the zip is several MiB, more than the sockets hold
    for (let i = 0; i < 12; i += 1) {
      await makePage(app, big, cast.member, { title: `Big ${i}`, content: `<p>${randomBytes(300_000).toString('base64')}</p>` });
    }
    // more clients than exports run at once each read a little and hang up
    for (let i = 0; i < 3; i += 1) {
      const controller = new AbortController();
      const response = await fetch(`${app.baseUrl}/api/v1/shelf/big-export/export`, { headers: { Authorization: `Bearer ${cast.member.token}` }, signal: controller.signal });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      await reader.closed.catch(() => undefined);
    }
    const whole = await download(cast.member, '/api/v1/shelf/big-export/export');
    expect(whole.status).toBe(200);
    const entries = await unzip(whole.bytes);
    expect(entries.names.filter((name) => name.startsWith('pages/'))).toHaveLength(12);
  }, 120_000);

  it('answers 401 without a token', async () => {
    const answer = await anonymous(app).get(`${world.upstreamPath}/export`);
    expect(answer.status).toBe(401);
  });

  it('answers 404 for another team\'s private note', async () => {
    const stranger = await makeUser(app);
    const secret = await makeNote(app, cast.team, cast.manager.user, { slug: 'secret-export', isPrivate: true });
    await makePage(app, secret, cast.member, { title: 'Hidden' });
    expect((await download(stranger, `/api/v1/shelf/${secret.slug}/export`)).status).toBe(404);
    expect((await download(cast.reader, `/api/v1/shelf/${secret.slug}/export`)).status).toBe(200);
  });

  it('answers 400 for a format it does not know', async () => {
    const answer = await cast.member.client.get(`${world.upstreamPath}/export`, { query: { format: 'pdf' } });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('validation_failed');
  });
});
