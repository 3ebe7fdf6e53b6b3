// The browser views over plain HTTP (the real browser walk is test/browser/web-views.test.ts): the sign-in
// redirect and the way back, the session cookie's flags, a cookie never authorizing /api/v1, the 404 page, and what
// a view costs: the statements of the API reads it presents, plus the session's own lookup; what the history and
// version views say of a version merge-on-write saved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addMember, makeNote, makePage, makePageComment, makeUser, type Actor } from '../support/factories.ts';
import { CookieBrowser, givePassword, hiddenFields } from '../support/oauth.ts';
import { forkedRunbook } from '../support/forks.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'open' | 'secret'>;
let member: Actor;
let password: string;
const HTML = { Accept: 'text/html' };

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  cast = await makeScenario(app, { team: 'deck', notes: { open: { title: 'Open note', slug: 'open' }, secret: { isPrivate: true, slug: 'secret' } } });
  member = cast.member;
  password = await givePassword(app, member.user, 'a member password');
});
afterAll(async () => app?.close());

async function signedIn(): Promise<CookieBrowser> {
  const browser = new CookieBrowser(app.baseUrl);
  const view = await browser.get('/deck/open');
  expect(view.status).toBe(303);
  expect(view.location).toBe('/oauth/sign-in?return_to=%2Fdeck%2Fopen');
  const form = await browser.get(view.location!);
  expect(form.status).toBe(200);
  const fields = hiddenFields(form.text);
  expect(fields.return_to).toBe('/deck/open');
  const back = await browser.post('/oauth/sign-in', { ...fields, login: member.user.username, password });
  expect([back.status, back.location]).toEqual([303, '/deck/open']);
  return browser;
}

describe('signing in for the views', () => {
  it('sends an anonymous browser to the sign-in page and back; the cookie is HttpOnly and SameSite=Lax', async () => {
    const browser = new CookieBrowser(app.baseUrl);
    await browser.get('/oauth/sign-in');
    const answer = await fetch(`${app.baseUrl}/oauth/sign-in`, {
      method: 'POST', redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
      body: new URLSearchParams({ csrf_token: browser.cookies.get('notes_csrf')!, return_to: '/deck/open', login: member.user.username, password }).toString(),
    });
    const cookie = answer.headers.getSetCookie().find((text) => text.startsWith('notes_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/); // served over http here; Secure when PUBLIC_URL is https (sessions.ts)
    const view = await (await signedIn()).get('/deck/open');
    expect(view.status).toBe(200);
    expect(view.text).toContain('<h1><img class="avatar" src=');
    expect(view.text).toContain('Open note');
  });

  it('returns only to a local view or an authorization request, never elsewhere or to /api/', async () => {
    const browser = new CookieBrowser(app.baseUrl);
    for (const target of ['https://evil.example/', '//evil.example/x', '/api/v1/me', '/\\evil.example']) {
      const form = await browser.get(`/oauth/sign-in?return_to=${encodeURIComponent(target)}`);
      expect(hiddenFields(form.text).return_to, target).toBe('');
    }
  });

  it('a session cookie never authorizes /api/v1: 401 without a bearer token, and the token decides with one', async () => {
    const browser = await signedIn();
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    expect((await fetch(`${app.baseUrl}/api/v1/me`, { headers: { Cookie: cookie } })).status).toBe(401);
    const other = await fetch(`${app.baseUrl}/api/v1/me`, { headers: { Cookie: cookie, Authorization: `Bearer ${cast.outsider.token}` } });
    expect((await other.json()).username).toBe(cast.outsider.user.username);
  });
});

describe('the 404 page', () => {
  it('is the same for a private note of another team and for no note; API clients keep the problem document', async () => {
    const outsider = cast.outsider;
    const hidden = await outsider.client.get('/deck/secret', { headers: HTML });
    const none = await outsider.client.get('/deck/no-such-note', { headers: HTML });
    expect([hidden.status, none.status]).toEqual([404, 404]);
    expect(hidden.headers.get('content-type')).toContain('text/html');
    expect(hidden.text).toBe(none.text);
    expect(hidden.text).not.toContain('secret');
    const problem = await outsider.client.get('/deck/secret');
    expect([problem.status, problem.headers.get('content-type')]).toEqual([404, 'application/problem+json; charset=utf-8']);
  });
});

describe('what a view costs', () => {
  it('a page view: the statements of getPage, listPageComments and the tree\'s root pages, plus the session lookup', async () => {
    const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Costs', slug: 'costs' });
    const [a, b] = [await makePage(app, note, member, { title: 'A' }), await makePage(app, note, member, { title: 'B' })];
    for (const page of [a, b]) await makePageComment(page, member, { comment: `on ${page.title}` });
    const browser = await signedIn();
    await member.client.get('/api/v1/me'); // the token is in the cache, as for any API client after its first call
    const view = await app.countQueries(async () => expect((await browser.get(`/deck/costs/${a.id}`)).status).toBe(200));
    const api = await app.countQueries(async () => {
      expect((await member.client.get(`/api/v1/deck/costs/${b.id}`)).status).toBe(200);
      expect((await member.client.get(`/api/v1/deck/costs/${b.id}/comments`, { query: { per_page: '100' } })).status).toBe(200);
      // the tree beside it: the root pages (a root page's children come with it)
      expect((await member.client.get('/api/v1/deck/costs/pages', { query: { parent: 'root' } })).status).toBe(200);
    });
    expect(view).toBe(api + 1);
  });

  it('a note view: getNote, listPages, and the totals of listIssues and listRequests, plus the session lookup', async () => {
    for (const slug of ['shape-1', 'shape-2']) {
      const note = await makeNote(app, cast.team, cast.manager.user, { title: slug, slug });
      const top = await makePage(app, note, member, { title: 'Top' });
      await makePage(app, note, member, { title: 'Under', parent: top.id });
    }
    const browser = await signedIn();
    await member.client.get('/api/v1/me');
    const view = await app.countQueries(async () => expect((await browser.get('/deck/shape-1')).status).toBe(200));
    const api = await app.countQueries(async () => {
      for (const path of ['', '/pages', '/issues?per_page=1', '/requests?per_page=1']) expect((await member.client.get(`/api/v1/deck/shape-2${path}`)).status).toBe(200);
    });
    expect(view).toBe(api + 1);
  });
});

describe('where a page is: breadcrumbs and the tree beside it', () => {
  it('builds the crumbs from the page\'s ancestors, each linked, and a title with " / " stays one crumb', async () => {
    const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Tree', slug: 'tree' });
    const ops = await makePage(app, note, member, { title: 'Ops' });
    const cicd = await makePage(app, note, member, { title: 'CI / CD', parent: ops.id });
    const runners = await makePage(app, note, member, { title: 'Runners', parent: cicd.id, content: '<p>one</p>' });
    await makePage(app, note, member, { title: 'Caches', parent: cicd.id });
    await makePage(app, note, member, { title: 'Elsewhere' });
    await member.client.put(`/api/v1/deck/tree/${runners.id}`, { json: { page: { content: '<p>two</p>' } } });
    const crumbsOf = (text: string) => [...text.match(/<nav class="crumbs"[^]*?<\/nav>/)![0].matchAll(/<li>(?:<a href="([^"]*)">([^<]*)<\/a>|<span aria-current="page">([^<]*)<\/span>|([^<]*))<\/li>/g)]
      .map((match) => (match[1] ? [match[2], match[1].replace(app.baseUrl, '')] : [match[3] ?? match[4]]));
    const page = await member.client.get(`/deck/tree/${runners.id}`, { headers: HTML });
    expect(page.status).toBe(200);
    expect(crumbsOf(page.text)).toEqual([['deck', '/teams/deck'], ['Tree', '/deck/tree'], ['Ops', `/deck/tree/${ops.id}`], ['CI / CD', `/deck/tree/${cicd.id}`], ['Runners']]);
    // the history, a version and the changes share them
    const history = await member.client.get(`/deck/tree/${runners.id}/histories`, { headers: HTML });
    expect(crumbsOf(history.text).slice(2)).toEqual([['Ops', `/deck/tree/${ops.id}`], ['CI / CD', `/deck/tree/${cicd.id}`], ['Runners', `/deck/tree/${runners.id}`], ['History']]);
    const version = await member.client.get(`/deck/tree/${runners.id}/histories/1`, { headers: HTML });
    expect(crumbsOf(version.text).slice(2, 4)).toEqual([['Ops', `/deck/tree/${ops.id}`], ['CI / CD', `/deck/tree/${cicd.id}`]]);
    const diff = await member.client.get(`/deck/tree/${runners.id}/histories/diff`, { headers: HTML });
    expect(crumbsOf(diff.text).slice(2)).toEqual([['Ops', `/deck/tree/${ops.id}`], ['CI / CD', `/deck/tree/${cicd.id}`], ['Runners', `/deck/tree/${runners.id}`], ['History', `/deck/tree/${runners.id}/histories`], ['Changes']]);

    // the tree: the root pages, the ancestors open down to the page (marked), its siblings; no other branch opened
    for (const text of [page.text, history.text, version.text, diff.text]) {
      const tree = text.match(/<nav class="card tree side"[^]*?<\/nav>/)![0];
      const links = [...tree.matchAll(/<a href="[^"]*\/(\d+)"( aria-current="page")?>([^<]*)<\/a>/g)].map((match) => `${match[3]}${match[2] ? '*' : ''}`);
      expect(links).toEqual(['Ops', 'CI / CD', 'Runners*', 'Caches', 'Elsewhere']);
      expect(tree).toMatch(/<li><a [^>]*>Ops<\/a><ul><li><a [^>]*>CI \/ CD<\/a><ul><li>/);
    }
  });
});

describe('a note\'s issues and requests', () => {
  it('lists them by state, linked from the note\'s counts; a state it does not know is a 400', async () => {
    const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Work', slug: 'work' });
    const make = async (title: string) => (await member.client.post('/api/v1/deck/work/issues', { json: { issue: { title } } })).body;
    await make('Open one');
    const done = await make('Done one');
    expect((await member.client.put(`/api/v1/deck/work/issues/${done.index}`, { json: { issue: { is_done: true } } })).status).toBe(200);
    const view = await member.client.get('/deck/work', { headers: HTML });
    expect(view.text).toContain(`<a href="${app.baseUrl}/deck/work/issues">Open issues: <span data-count="issues">1</span></a>`);
    expect(view.text).toContain(`<a href="${app.baseUrl}/deck/work/requests">Open requests: <span data-count="requests">0</span></a>`);
    const titles = (text: string) => [...text.matchAll(/<td><a href="[^"]*\/issues\/\d+">([^<]*)<\/a>/g)].map((match) => match[1]);
    expect(titles((await member.client.get('/deck/work/issues', { headers: HTML })).text)).toEqual(['Open one']);
    expect(titles((await member.client.get('/deck/work/issues?state=closed', { headers: HTML })).text)).toEqual(['Done one']);
    expect(titles((await member.client.get('/deck/work/issues?state=all', { headers: HTML })).text).sort()).toEqual(['Done one', 'Open one']);
    const requests = await member.client.get('/deck/work/requests?state=merged', { headers: HTML });
    expect([requests.status, requests.text.includes('Nothing yet.')]).toEqual([200, true]);
    expect((await member.client.get('/deck/work/issues?state=sideways', { headers: HTML })).status).toBe(400);
    expect((await member.client.get('/deck/work/requests?state=sideways', { headers: HTML })).status).toBe(400);
    // a private note of another team: the same 404 as for none
    expect((await cast.outsider.client.get(`/deck/${cast.notes.secret.slug}/issues`, { headers: HTML })).status).toBe(404);
    expect(note.id).toBeGreaterThan(0);
  });
});

describe('an imported request (no fork to merge from)', () => {
  it('says so in the reader\'s words, never the API\'s English reason', async () => {
    const s = await forkedRunbook(app, cast);
    const request = await s.request([await s.editFork(s.forkDeploy, '<h1>Deploy</h1><p>changed</p>')]);
    // what an import writes (src/modules/imports/import-requests.ts): the request without its fork
    await app.em().execute('update requests set from_note_id = null where id = ?', [request.id]);
    expect((await member.client.get(`${s.upstreamPath}/requests/${request.index}`)).body).toMatchObject({ from_note: null, mergeable: false });
    const view = `/${cast.team.name}/${s.note.slug}/requests/${request.index}`;
    const english = await member.client.get(view, { headers: HTML });
    expect(english.status).toBe(200);
    expect(english.text).toContain('Imported without its fork: it cannot be merged');
    expect(english.text).not.toContain('imported without its fork: it cannot be merged'); // the API's mergeable_reason
    const jun = await makeUser(app, 'jun-fork', { lang: 'ja' });
    const japanese = await jun.client.get(view, { headers: HTML });
    expect(japanese.text).toContain('フォークなしでインポートされたため、マージできません');
    expect(japanese.text).not.toContain('cannot be merged');
  });
});

describe('a merged version in the history and version views', () => {
  it('says "merged with version N" beside the version merged from base N, and nothing beside the others', async () => {
    const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Merged', slug: 'merged' });
    const page = await makePage(app, note, member, { title: 'Two paragraphs', content: '<p>First paragraph.</p><p>Second paragraph.</p>' });
    const path = `/api/v1/deck/merged/${page.id}`;
    // both written from version 1: the first is a plain write (version 2), the second merges over it (version 3)
    const first = await member.client.put(path, { json: { page: { content: '<p>First paragraph, edited.</p><p>Second paragraph.</p>', base_version: 1 } } });
    expect([first.status, first.body.version, first.body.merge ?? null]).toEqual([200, 2, null]);
    const second = await member.client.put(path, { json: { page: { content: '<p>First paragraph.</p><p>Second paragraph, edited.</p>', base_version: 1 } } });
    expect([second.status, second.body.version, second.body.merge]).toEqual([200, 3, { base_version: 1, merged_over: [2], result: 'merged' }]);
    expect(second.body.content).toBe('<p>First paragraph, edited.</p><p>Second paragraph, edited.</p>');
    const stored = (await member.client.get(`${path}/histories`)).body as { index: number; merged_from_base: number | null }[];
    expect(stored.map((version) => [version.index, version.merged_from_base])).toEqual([[3, 1], [2, null], [1, null]]);

    const history = await member.client.get(`/deck/merged/${page.id}/histories`, { headers: HTML });
    expect(history.status).toBe(200);
    const rows = [...history.text.matchAll(/<tr><td><a href="[^"]*\/histories\/(\d+)">#\d+<\/a>(.*?)<\/tr>/g)].map((row) => [Number(row[1]), row[2]!.includes('merged with version 1')]);
    expect(rows).toEqual([[3, true], [2, false], [1, false]]);
    expect(history.text.match(/merged with version/g)).toHaveLength(1);
    for (const [index, merged] of [[1, false], [2, false], [3, true]] as const) {
      const view = await member.client.get(`/deck/merged/${page.id}/histories/${index}`, { headers: HTML });
      expect(view.status).toBe(200);
      expect(view.text.includes('merged with version'), `version ${index}`).toBe(merged);
      if (merged) expect(view.text).toContain('<span class="badge">merged with version 1</span>');
    }

    // in the reader's language
    const japanese = await makeUser(app, 'hanako', { lang: 'ja' });
    await addMember(app, cast.team, japanese.user, 'member');
    const ja = await japanese.client.get(`/deck/merged/${page.id}/histories`, { headers: HTML });
    expect(ja.text.match(/バージョン 1 とマージ/g)).toHaveLength(1);
    expect((await japanese.client.get(`/deck/merged/${page.id}/histories/3`, { headers: HTML })).text).toContain('バージョン 1 とマージ');
  });
});

describe('a <pre> in the views (issue 43)', () => {
  it('is a stop of the keyboard wherever a view shows stored HTML; what the API stores and answers is unchanged', async () => {
    const code = '<pre>make deploy ENVIRONMENT=production</pre>';
    const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Code', slug: 'code', description: `Run ${code}` });
    const page = await makePage(app, note, member, { title: 'Commands', content: `<p>Deploy:</p>${code}` });
    await member.client.put(`/api/v1/deck/code/${page.id}`, { json: { page: { content: `<p>Deploy with:</p>${code}` } } });
    await makePageComment(page, member, { comment: `Or ${code}` });
    const issue = (await member.client.post('/api/v1/deck/code/issues', { json: { issue: { title: 'Flags', description: code } } })).body;
    const views = {
      note: '/deck/code', page: `/deck/code/${page.id}`, version: `/deck/code/${page.id}/histories/1`,
      diff: `/deck/code/${page.id}/histories/diff`, issue: `/deck/code/issues/${issue.index}`,
    };
    for (const [name, path] of Object.entries(views)) {
      const view = await member.client.get(path, { headers: HTML });
      expect(view.status, name).toBe(200);
      expect(view.text.match(/<pre[\s>]/g)?.length, name).toBeGreaterThan(0);
      // every <pre>, and only <pre>: the page view shows the page's and the comment's
      expect(view.text.match(/<pre[\s>]/g), name).toEqual(view.text.match(/<pre tabindex="0"[\s>]/g)?.map(() => '<pre '));
    }
    expect((await member.client.get(views.page, { headers: HTML })).text.match(/<pre tabindex="0">/g)).toHaveLength(2);
    const stored = await member.client.get(`/api/v1/deck/code/${page.id}`);
    expect(stored.body.content).toBe(`<p>Deploy with:</p>${code}`);
    const [row] = await app.em().execute<{ content: string }[]>('select content from page_versions where page_id = ? and index = 1', [page.id]);
    expect(row!.content).toBe(`<p>Deploy:</p>${code}`);
  });
});
