// The co-authors of a page version (migration 0027): a live save is written for the person who typed last and names
// the others whose changes it holds. The save is driven through saveLive (src/modules/live/live-write.ts), the live
// server's own way into the API's updatePage, with a caller made from a token as the live server makes it; what it
// wrote is read back over HTTP (listPageVersions, getPageVersion, listContributors, exportNote, importNote) and in
// the stored rows. Writes through the API name no one.
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppServices } from '../../src/http/handler.ts';
import { callerOfSecret } from '../../src/http/auth.ts';
import { AnswerGate } from '../../src/http/answer-gate.ts';
import { createLogger } from '../../src/http/logger.ts';
import { MemoryPressure } from '../../src/http/memory-pressure.ts';
import { createUrls } from '../../src/http/urls.ts';
import { createMemory } from '../../src/cache/memory.ts';
import { silentFeed } from '../../src/db/change-feed.ts';
import { settleJobs } from '../../src/modules/imports/jobs.ts';
import { saveLive, type LiveSave } from '../../src/modules/live/live-write.ts';
import type { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addMember, makeNote, makePage, makeUser, type Actor } from '../support/factories.ts';
import { sampleExport, zipExport } from '../support/export-archive.ts';
import { MULTIPART, multipartBody } from '../support/multipart.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario;
/** Two more typists of the team (members). */
let ana: Actor, ben: Actor;
let services: AppServices;

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  cast = await makeScenario(app, { team: 'coauthors' });
  ana = await makeUser(app, 'co-ana');
  ben = await makeUser(app, 'co-ben');
  await addMember(app, cast.team, ana.user, 'member');
  await addMember(app, cast.team, ben.user, 'member');
  // what the live server hands saveLive (src/app.ts makes the same for the live editor): this process's own memory and
  // gates; the app's memory hears the writes from the database, as it hears another process's
  services = {
    config: app.config,
    urls: createUrls(app.config.publicUrl),
    memory: createMemory(silentFeed(), app.config.cacheBytes),
    answers: new AnswerGate(app.config.limits.largeAnswers * app.config.limits.listTextBytes),
    events: undefined as never,
    pressure: new MemoryPressure(),
  };
});
afterAll(async () => {
  await settleJobs();
  await app?.close();
});

/** A live save of `save` for `writer` (the one who typed last), naming `coAuthorIds` as the live server does. */
async function liveSave(writer: Actor, save: Omit<LiveSave, 'team'>) {
  const caller = await callerOfSecret(app.em(), writer.token);
  return saveLive(services, app.database.orm, createLogger('silent'), caller!, { team: cast.team.name, ...save });
}

let counter = 0;
async function notePage(content = '<p>first</p>'): Promise<{ note: Note; base: string; pageId: number; url: string }> {
  counter += 1;
  const note = await makeNote(app, cast.team, cast.manager.user, { slug: `co-${counter}` });
  const base = `/api/v1/coauthors/${note.slug}`;
  const page = await makePage(app, note, cast.manager, { title: 'Page', content });
  return { note, base, pageId: page.id, url: `${base}/${page.id}` };
}

const usernames = (users: { username: string }[]) => users.map((user) => user.username);
const storedCoAuthors = async (table: 'page_versions' | 'deleted_page_versions', pageId: number) =>
  (await app.em().execute<{ index: number; co_author_ids: number[] }[]>(`select index, co_author_ids from ${table} where page_id = ? order by index`, [pageId]))
    .map((row) => [row.index, row.co_author_ids.map(Number)]);

describe('a live save names its co-authors', () => {
  it('holds the changes of both typists and names both: the author who typed last, the other as co-author (listPageVersions, getPageVersion)', async () => {
    const { note, url, pageId } = await notePage('<p>first</p>');
    // ana and ben typed into one live document from version 1; ben typed last
    const saved = await liveSave(ben, { note: note.slug!, pageId, baseVersion: 1, content: '<p>first</p><p>ana typed this</p><p>ben typed that</p>', coAuthorIds: [ana.user.id] });
    expect(saved.version).toBe(2);
    const list = await cast.reader.client.get(`${url}/histories`);
    expect(list.status, list.text).toBe(200);
    const [latest, first] = list.body;
    expect(latest).toMatchObject({ index: 2, content: '<p>first</p><p>ana typed this</p><p>ben typed that</p>', user: { id: ben.user.id, username: 'co-ben' } });
    expect(latest.co_authors).toHaveLength(1);
    // the same user summary the author has
    expect(latest.co_authors[0]).toEqual((await cast.reader.client.get('/api/v1/users/co-ana')).body);
    expect(first.co_authors).toEqual([]);
    const one = await cast.reader.client.get(`${url}/histories/2`);
    expect(one.status).toBe(200);
    expect(usernames(one.body.co_authors)).toEqual(['co-ana']);
    expect(one.body.user.username).toBe('co-ben');
    expect(await storedCoAuthors('page_versions', pageId)).toEqual([[1, []], [2, [ana.user.id]]]);
  });

  it('names each co-author once, in the order given, never the author, on the one-statement write and on a merge from an older base', async () => {
    const { note, url, base, pageId } = await notePage('<p>one</p>');
    const member = cast.member;
    // the one-statement write (pages.repository.ts writePageText): the base is the page's version
    await liveSave(ben, { note: note.slug!, pageId, baseVersion: 1, content: '<p>one</p><p>live</p>', coAuthorIds: [member.user.id, ben.user.id, ana.user.id, member.user.id] });
    // a write through the API meanwhile; the live document, still on version 2, is saved merged three ways with it
    expect((await cast.manager.client.put(`${url}`, { json: { page: { title: 'Renamed' } } })).status).toBe(200);
    const merged = await liveSave(ana, { note: note.slug!, pageId, baseVersion: 2, content: '<p>one</p><p>live</p><p>more</p>', coAuthorIds: [ben.user.id] });
    expect(merged.version).toBe(4);
    const list = (await cast.reader.client.get(`${url}/histories`)).body;
    expect(list.map((version: { index: number; user: { username: string }; co_authors: { username: string }[] }) => [version.index, version.user.username, usernames(version.co_authors)])).toEqual([
      [4, 'co-ana', ['co-ben']],
      [3, cast.manager.user.username, []],
      [2, 'co-ben', [member.user.username, 'co-ana']],
      [1, cast.manager.user.username, []],
    ]);
    expect(list[0]).toMatchObject({ title: 'Renamed', merged_from_base: 2 });
    expect(await storedCoAuthors('page_versions', pageId)).toEqual([[1, []], [2, [member.user.id, ana.user.id]], [3, []], [4, [ben.user.id]]]);
    // a save with no one else, or only the author, names no one
    await liveSave(ana, { note: note.slug!, pageId, baseVersion: 4, content: '<p>alone</p>', coAuthorIds: [ana.user.id] });
    await liveSave(ana, { note: note.slug!, pageId, baseVersion: 5, content: '<p>alone again</p>', coAuthorIds: [] });
    expect((await storedCoAuthors('page_versions', pageId)).slice(4)).toEqual([[5, []], [6, []]]);
    expect((await cast.reader.client.get(`${base}/${pageId}/histories/6`)).body.co_authors).toEqual([]);
  });

  it('shows them beside the author in the history and version views', async () => {
    const { note, pageId } = await notePage('<p>first</p>');
    await liveSave(ben, { note: note.slug!, pageId, baseVersion: 1, content: '<p>first</p><p>typed</p>', coAuthorIds: [ana.user.id, cast.member.user.id] });
    const view = `/coauthors/${note.slug}/${pageId}/histories`;
    const history = await cast.reader.client.get(view, { headers: { Accept: 'text/html' } });
    expect(history.status).toBe(200);
    const rows = [...history.text.matchAll(/<tr><td><a href="[^"]*\/histories\/(\d+)">.*?<\/tr>/g)].map((row) => row[0]);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain('@co-ben</span> <span class="co-authors">with <a href="http');
    expect(rows[0]).toMatch(/@co-ana<\/span>, <a [^>]*>[^<]*<\/a> <span class="muted">@[^<]+<\/span><\/span>/);
    expect(rows[1]).not.toContain('co-authors');
    const version = await cast.reader.client.get(`${view}/2`, { headers: { Accept: 'text/html' } });
    expect(version.text).toContain('<span class="co-authors">with <a href="');
    expect(version.text).toContain('@co-ana</span>');
  });

  it('counts its co-authors among the note\'s contributors (listContributors), in the order of their first contribution', async () => {
    const { note, base, pageId } = await notePage();
    await liveSave(cast.member, { note: note.slug!, pageId, baseVersion: 1, content: '<p>both</p>', coAuthorIds: [ben.user.id, ana.user.id] });
    const answer = await cast.reader.client.get(`${base}/contributors`);
    expect(answer.status).toBe(200);
    // one version's author first, then its co-authors in their order (ben's account is newer than ana's)
    expect(usernames(answer.body)).toEqual([cast.manager.user.username, cast.member.user.username, 'co-ben', 'co-ana']);
    expect(answer.headers.get('x-total-count')).toBe('4');
    const past = await cast.reader.client.get(`${base}/contributors`, { query: { page: '9' } });
    expect(past.body).toEqual([]);
    expect(past.headers.get('x-total-count')).toBe('4');
  });
});

describe('writes through the API name no co-author', () => {
  it('createPage, updatePage, updatePageViaPatch and restorePageVersion show co_authors: []', async () => {
    const { url, pageId } = await notePage('<p>a</p>');
    expect((await cast.member.client.put(url, { json: { page: { content: '<p>b</p>' } } })).status).toBe(200);
    expect((await cast.member.client.patch(url, { json: { page: { content: '<p>c</p>', base_version: 1 }, on_conflict: 'overwrite' } })).status).toBe(200);
    expect((await cast.manager.client.post(`${url}/histories/1/restore`)).status).toBe(200);
    const list = (await cast.reader.client.get(`${url}/histories`)).body;
    expect(list.map((version: { index: number; co_authors: unknown[] }) => [version.index, version.co_authors])).toEqual([[4, []], [3, []], [2, []], [1, []]]);
    expect(await storedCoAuthors('page_versions', pageId)).toEqual([[1, []], [2, []], [3, []], [4, []]]);
  });

  it('takes no co-authors from a client: a page field naming them is refused (400), a top-level one is ignored', async () => {
    const { url, pageId } = await notePage('<p>a</p>');
    const refused = await cast.member.client.put(url, { json: { page: { content: '<p>b</p>', co_authors: [ana.user.id] } } });
    expect(refused.status, refused.text).toBe(400);
    // other top-level fields of updatePage's body are ignored (PageUpdateInput)
    const ignored = await cast.member.client.put(url, { json: { page: { content: '<p>c</p>' }, co_authors: [ana.user.id], co_author_ids: [ana.user.id], coAuthorIds: [ana.user.id] } });
    expect(ignored.status, ignored.text).toBe(200);
    expect(await storedCoAuthors('page_versions', pageId)).toEqual([[1, []], [2, []]]);
  });
});

describe('the history list stays fixed-cost with co-authors', () => {
  it('takes the same statements for 3 versions as for 30, co-authored by many users, and one more than a history without any', async () => {
    const plain = await notePage('<p>v1</p>');
    const few = await notePage('<p>v1</p>');
    const many = await notePage('<p>v1</p>');
    for (let index = 2; index <= 3; index += 1) expect((await cast.member.client.put(plain.url, { json: { page: { content: `<p>v${index}</p>` } } })).status).toBe(200);
    const typists = [ana, ben, cast.member];
    for (let index = 2; index <= 3; index += 1) {
      await liveSave(cast.manager, { note: few.note.slug!, pageId: few.pageId, baseVersion: index - 1, content: `<p>v${index}</p>`, coAuthorIds: [ana.user.id] });
    }
    for (let index = 2; index <= 30; index += 1) {
      const extra = await makeUser(app);
      const coAuthors = [extra.user.id, typists[index % 3]!.user.id];
      await liveSave(cast.manager, { note: many.note.slug!, pageId: many.pageId, baseVersion: index - 1, content: `<p>v${index}</p>`, coAuthorIds: coAuthors });
    }
    const reader = cast.reader.client;
    const measure = async (url: string, length: number) => {
      await reader.get(`${url}/histories`, { query: { per_page: '30' } });
      return app.countQueries(async () => {
        const answer = await reader.get(`${url}/histories`, { query: { per_page: '30' } });
        expect(answer.status).toBe(200);
        expect(answer.body).toHaveLength(length);
      });
    };
    const plainCount = await measure(plain.url, 3);
    const fewCount = await measure(few.url, 3);
    const manyCount = await measure(many.url, 30);
    expect(manyCount).toBe(fewCount);
    // the co-authors of all versions at once: one statement, only when a version names any
    expect(fewCount).toBe(plainCount + 1);
    const listed = (await reader.get(`${many.url}/histories`, { query: { per_page: '30' } })).body;
    expect(listed.filter((version: { co_authors: unknown[] }) => version.co_authors.length === 2)).toHaveLength(29);
  });
});

describe('a deleted page keeps its versions\' co-authors', () => {
  it('moves them with its versions into deleted_page_versions', async () => {
    const { note, url, pageId } = await notePage('<p>doomed</p>');
    await liveSave(ben, { note: note.slug!, pageId, baseVersion: 1, content: '<p>doomed, typed</p>', coAuthorIds: [ana.user.id, cast.member.user.id] });
    expect((await cast.manager.client.delete(url)).status).toBe(204);
    expect(await storedCoAuthors('page_versions', pageId)).toEqual([]);
    expect(await storedCoAuthors('deleted_page_versions', pageId)).toEqual([[1, []], [2, [ana.user.id, cast.member.user.id]]]);
  });
});

/** Every entry of a zip by name. */
function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const files = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
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
      zip.on('end', () => resolve(files));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

async function exportZip(path: string): Promise<Buffer> {
  const response = await fetch(`${app.baseUrl}${path}/export`, { headers: { Authorization: `Bearer ${cast.manager.token}` } });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** Imports the zip into the team as `name`; the job's answer when it ended. */
async function importZip(zip: Buffer, name: string): Promise<{ state: string; note: { id: number; name: string } | null; error: unknown }> {
  const answer = await cast.manager.client.post(`/api/v1/teams/${cast.team.name}/imports`, {
    raw: { body: multipartBody([{ name: 'name', data: name }, { name: 'file', filename: 'note.zip', data: zip }]), contentType: MULTIPART },
  });
  expect(answer.status, answer.text).toBe(202);
  await settleJobs();
  return (await cast.manager.client.get(`/api/v1/jobs/${answer.body.id}`)).body;
}

describe('export and import carry the co-authors', () => {
  it('exports them as users in note.json, live and deleted pages alike, and an import names the same users', async () => {
    const { note, base, pageId } = await notePage('<p>kept</p>');
    await liveSave(ben, { note: note.slug!, pageId, baseVersion: 1, content: '<p>kept, typed</p>', coAuthorIds: [ana.user.id, cast.member.user.id] });
    const doomed = (await makePage(app, note, cast.manager, { title: 'Doomed', content: '<p>doomed</p>' })).id;
    await liveSave(ana, { note: note.slug!, pageId: doomed, baseVersion: 1, content: '<p>doomed, typed</p>', coAuthorIds: [ben.user.id] });
    expect((await cast.manager.client.delete(`${base}/${doomed}`)).status).toBe(204);

    const files = await unzip(await exportZip(base));
    const noteJson = JSON.parse(files.get('note.json')!.toString('utf8'));
    const versionsOf = (id: number) => noteJson.pages.find((page: { id: number }) => page.id === id).versions;
    expect(versionsOf(pageId).map((version: { co_authors: unknown }) => version.co_authors)).toEqual([
      [],
      [{ username: 'co-ana', name: 'co-ana Name' }, { username: cast.member.user.username, name: cast.member.user.name }],
    ]);
    expect(versionsOf(doomed)[1]).toMatchObject({ author: { username: 'co-ana' }, co_authors: [{ username: 'co-ben', name: 'co-ben Name' }] });

    const job = await importZip(Buffer.from(await exportZip(base)), `${note.slug}-again`);
    expect(job, JSON.stringify(job.error)).toMatchObject({ state: 'done' });
    const imported = job.note!;
    const [importedPage] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? order by id', [imported.id]);
    const history = (await cast.reader.client.get(`/api/v1/coauthors/${imported.name}/${importedPage!.id}/histories`)).body;
    expect(history.map((version: { user: { username: string }; co_authors: { username: string }[] }) => [version.user.username, usernames(version.co_authors)])).toEqual([
      ['co-ben', ['co-ana', cast.member.user.username]],
      [cast.manager.user.username, []],
    ]);
    const [deleted] = await app.em().execute<{ user_id: number; co_author_ids: number[] }[]>(
      'select user_id, co_author_ids from deleted_page_versions where note_id = ? and index = 2', [imported.id]);
    expect(deleted).toMatchObject({ user_id: ana.user.id });
    expect(deleted!.co_author_ids.map(Number)).toEqual([ben.user.id]);
    // and exported again: the same note.json for these versions
    const again = JSON.parse((await unzip(await exportZip(`/api/v1/coauthors/${imported.name}`))).get('note.json')!.toString('utf8'));
    expect(again.pages.map((page: { versions: unknown[] }) => page.versions.map((version: any) => version.co_authors)))
      .toEqual(noteJson.pages.map((page: { versions: unknown[] }) => page.versions.map((version: any) => version.co_authors)));
  });

  it('leaves out a co-author with no user here, names each once and never the author; an archive without co_authors imports with none', async () => {
    const { json, files } = sampleExport({ manager: cast.manager.user.username, member: cast.member.user.username });
    const [home] = json.pages;
    // version 1 is the manager's; version 2's author has no user here (recorded as the importer, the manager)
    home!.versions[0]!.co_authors = [
      { username: 'nobody-here', name: 'Nobody' }, { username: 'CO-ANA', name: 'Ana' }, { username: cast.manager.user.username, name: 'The Manager' },
      { username: 'co-ana', name: 'Ana' }, { username: 'co-ben', name: 'Ben' },
    ];
    home!.versions[1]!.co_authors = [{ username: cast.manager.user.username, name: 'The Manager' }];
    const job = await importZip(await zipExport(json, files), 'sample-co');
    expect(job, JSON.stringify(job.error)).toMatchObject({ state: 'done' });
    const [page] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? order by id', [job.note!.id]);
    const history = (await cast.reader.client.get(`/api/v1/coauthors/sample-co/${page!.id}/histories`)).body;
    expect(history.map((version: { index: number; user: { username: string }; imported_author: unknown; co_authors: { username: string }[] }) =>
      [version.index, version.user.username, version.imported_author !== null, usernames(version.co_authors)])).toEqual([
      [3, cast.member.user.username, false, []],
      // the importer stands in for an author not here, and is a co-author of their own
      [2, cast.manager.user.username, true, [cast.manager.user.username]],
      [1, cast.manager.user.username, false, ['co-ana', 'co-ben']],
    ]);
    // the sample as the documented format had it before co-authors: every version without them
    const old = sampleExport({ manager: cast.manager.user.username, member: cast.member.user.username });
    expect(old.json.pages.every((entry) => entry.versions.every((version) => !('co_authors' in version)))).toBe(true);
    const oldJob = await importZip(await zipExport(old.json, old.files), 'sample-old');
    expect(oldJob, JSON.stringify(oldJob.error)).toMatchObject({ state: 'done' });
    const [counted] = await app.em().execute<{ named: number; versions: number }[]>(
      `select count(*) filter (where co_author_ids <> '{}')::int as named, count(*)::int as versions
         from (select co_author_ids from page_versions where note_id = ? union all select co_author_ids from deleted_page_versions where note_id = ?) v`,
      [oldJob.note!.id, oldJob.note!.id]);
    expect(counted).toEqual({ named: 0, versions: old.json.pages.reduce((sum, entry) => sum + entry.versions.length, 0) });
  });
});
