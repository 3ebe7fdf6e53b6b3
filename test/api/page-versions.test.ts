import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Page, PageVersion } from '../../src/modules/pages/page.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor;

beforeAll(async () => {
  app = await startTestApp();
  // listContributors expects these usernames
  ({ manager, member, outsider } = await makeScenario(app, { team: 'history', usernames: { manager: 'hana', member: 'hugo' } }));
});
afterAll(async () => app?.close());

let counter = 0;
async function pageWithVersions(contents: string[], options: { isPrivate?: boolean } = {}) {
  counter += 1;
  const note = await makeNote(app, 'history', manager.user, { slug: `log-${counter}`, isPrivate: options.isPrivate ?? false });
  const base = `/api/v1/history/${note.slug}`;
  const page = await makePage(app, note, manager, { title: 'Page', content: contents[0] });
  for (const content of contents.slice(1)) await member.client.put(`${base}/${page.id}`, { json: { page: { content } } });
  return { note, base, page, url: `${base}/${page.id}` };
}
const versionsOf = (pageId: number) => app.em().find(PageVersion, { page: pageId }, { orderBy: { index: 'asc' } });

describe('listPageVersions', () => {
  it('lists versions newest first, with label, author, diff and the page', async () => {
    const { url, page } = await pageWithVersions(['a', 'b', 'c']);
    const answer = await outsider.client.get(`${url}/histories`);
    expect(answer.status).toBe(200);
    expect(answer.body.map((version: { index: number }) => version.index)).toEqual([3, 2, 1]);
    expect(answer.body[0]).toMatchObject({ label: 'Version #3', content: 'c', title: 'Page', model: 'page_version', page: { id: page.id } });
    expect(answer.body[0].user.id).toBe(member.user.id);
    expect(answer.body[2].user.id).toBe(manager.user.id);
    expect(answer.body[0].diff).toBe('<div class="diff"><ul><li class="del"><del><strong>b</strong></del></li><li class="ins"><ins><strong>c</strong></ins></li></ul></div>');
    expect(answer.headers.get('x-total-count')).toBe('3');
    const second = await outsider.client.get(`${url}/histories`, { query: { per_page: '2', page: '2' } });
    expect(second.body.map((version: { index: number }) => version.index)).toEqual([1]);
    expect((await outsider.client.get(answer.body[0].html_url.replace(app.baseUrl, ''))).status).toBe(200);
  });

  it('answers 404 for another team\'s private note and 401 without a token', async () => {
    const { url } = await pageWithVersions(['x'], { isPrivate: true });
    expect((await outsider.client.get(`${url}/histories`)).status).toBe(404);
    expect((await anonymous(app).get(`${url}/histories`)).status).toBe(401);
  });
});

describe('getPageVersion', () => {
  it('shows one version by its index', async () => {
    const { url } = await pageWithVersions(['one', 'two']);
    const answer = await member.client.get(`${url}/histories/1`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ index: 1, content: 'one', label: 'Version #1' });
  });

  it('answers 404 for an unknown or malformed index or a private note, 401 without a token', async () => {
    const { url } = await pageWithVersions(['one']);
    const hidden = await pageWithVersions(['one'], { isPrivate: true });
    expect((await member.client.get(`${url}/histories/9`)).status).toBe(404);
    expect((await outsider.client.get(`${hidden.url}/histories/1`)).status).toBe(404);
    // a path parameter of the wrong shape names nothing that can exist
    expect((await member.client.get(`${url}/histories/0`)).status).toBe(404);
    expect((await anonymous(app).get(`${url}/histories/1`)).status).toBe(401);
  });
});

describe('diffPageVersions', () => {
  it('diffs the latest against the one before by default, or any two versions by id', async () => {
    const { url, page } = await pageWithVersions(['line one\nline two', 'line one\nline 2', 'line one\nline 2']);
    const versions = await versionsOf(page.id);
    expect(versions).toHaveLength(2);
    const latest = await member.client.get(`${url}/histories/diff`);
    expect(latest.status).toBe(200);
    expect(latest.body.html).toBe((await member.client.get(`${url}/histories/${versions[1]!.index}`)).body.diff);
    const explicit = await member.client.get(`${url}/histories/diff`, { query: { a: String(versions[1]!.id), b: String(versions[0]!.id) } });
    expect(explicit.body.html).toContain('<li class="ins"><ins>line <strong>two</strong></ins></li>');
    const same = await member.client.get(`${url}/histories/diff`, { query: { a: String(versions[0]!.id), b: String(versions[0]!.id) } });
    expect(same.body.html).toBe('<div class="diff"></div>');
    const first = await member.client.get(`${url}/histories/diff`, { query: { b: String(versions[0]!.id) } });
    expect(first.body.html).toContain('<li class="ins"><ins>line one</ins></li>');
  });

  it('answers 404 for a version of another page, naming the parameter; 400 for a non-number', async () => {
    const one = await pageWithVersions(['a']);
    const two = await pageWithVersions(['b']);
    const foreign = (await versionsOf(two.page.id))[0]!;
    const answer = await member.client.get(`${one.url}/histories/diff`, { query: { a: String(foreign.id) } });
    expect(answer.status).toBe(404);
    expect(answer.body.errors[0].parameter).toBe('a');
    expect((await member.client.get(`${one.url}/histories/diff`, { query: { b: 'latest' } })).status).toBe(400);
    expect((await anonymous(app).get(`${one.url}/histories/diff`)).status).toBe(401);
  });
});

describe('restorePageVersion', () => {
  it('makes an old version current as a new version, keeping the history', async () => {
    const { url, page } = await pageWithVersions(['first', 'second']);
    const answer = await member.client.post(`${url}/histories/1/restore`);
    expect(answer.status).toBe(200);
    expect(answer.body.content).toBe('first');
    expect((await versionsOf(page.id)).map((version) => [version.index, version.content])).toEqual([[1, 'first'], [2, 'second'], [3, 'first']]);
    expect((await member.client.post(`${url}/histories/3/restore`)).status).toBe(200);
    expect(await versionsOf(page.id)).toHaveLength(3);
  });

  it('answers 403 outside the team, 404 for an unknown version, 401 without a token', async () => {
    const { url, page } = await pageWithVersions(['first', 'second']);
    expect((await outsider.client.post(`${url}/histories/1/restore`)).status).toBe(403);
    expect((await member.client.post(`${url}/histories/7/restore`)).status).toBe(404);
    expect((await anonymous(app).post(`${url}/histories/1/restore`)).status).toBe(401);
    expect((await app.em().findOneOrFail(Page, page.id)).content).toBe('second');
  });
});

describe('listContributors', () => {
  it('lists the creator, then version authors in the order of their first contribution', async () => {
    const { base } = await pageWithVersions(['a', 'b']);
    const answer = await outsider.client.get(`${base}/contributors`);
    expect(answer.status).toBe(200);
    expect(answer.body.map((user: { username: string }) => user.username)).toEqual(['hana', 'hugo']);
    expect(answer.headers.get('x-total-count')).toBe('2');
  });

  it('answers 404 for another team\'s private note and 401 without a token', async () => {
    const { base } = await pageWithVersions(['a'], { isPrivate: true });
    expect((await outsider.client.get(`${base}/contributors`)).status).toBe(404);
    expect((await anonymous(app).get(`${base}/contributors`)).status).toBe(401);
  });
});

describe('concurrent edits', () => {
  it('keeps every one of 100 parallel writes as its own version', async () => {
    const { url, page } = await pageWithVersions(['start']);
    const contents = Array.from({ length: 100 }, (_, i) => `writer ${i}\n${'x'.repeat(i)}`);
    const answers = await Promise.all(contents.map((content, i) => (i % 2 ? member : manager).client.put(url, { json: { page: { content } } })));
    expect(answers.map((answer) => answer.status)).toEqual(contents.map(() => 200));
    const versions = await versionsOf(page.id);
    expect(versions.map((version) => version.index)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
    expect(new Set(versions.slice(1).map((version) => version.content))).toEqual(new Set(contents));
    const stored = await app.em().findOneOrFail(Page, page.id);
    expect(stored.content).toBe(versions.at(-1)!.content);
  });

  it('lets exactly one of several writers with the same If-Match through', async () => {
    const { url, page } = await pageWithVersions(['start']);
    const etag = (await member.client.get(url)).headers.get('etag')!;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => member.client.put(url, { json: { page: { content: `try ${i}` } }, headers: { 'If-Match': etag } })));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 412)).toHaveLength(9);
    expect(await versionsOf(page.id)).toHaveLength(2);
  });
});
