// The fast read path: page views are served from this process's cache only while nothing they show has changed,
// which the database decides (revisions written by triggers). Every change below is made behind the service's back,
// straight in SQL, as another server process or the admin command line would make it: the next read must show it.
// Tokens are cached too, and a token deleted in the database stops working at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeMatcherCacheSize } from '../../src/http/openapi.ts';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { ApiClient } from '../support/client.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, makeUser, notePath, type Actor } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario;

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  s = await makeScenario(app);
});
afterAll(async () => app?.close());

async function pageUrl(options: { isPrivate?: boolean } = {}) {
  const note = await makeNote(app, s.team, s.manager.user, { isPrivate: options.isPrivate ?? false });
  const parent = await makePage(app, note, s.member, { title: 'Parent', content: '<p>parent</p>' });
  const page = await makePage(app, note, s.member, { title: 'Page', content: '<p>page</p>', parent: parent.id });
  const child = await makePage(app, note, s.member, { title: 'Child', content: '<p>child</p>', parent: page.id });
  return { note, parent, page, child, url: `${await notePath(app, note)}/${page.id}` };
}

/**
 * A change made in SQL on this process's own connection is announced by PostgreSQL to the process's listening
 * connection a moment after the commit (on PGlite, before the statement returns): read until the answer shows it,
 * for at most two seconds.
 */
async function readShowing(actor: Actor, url: string, pick: (body: any) => unknown, expected: unknown, what: string) {
  const until = Date.now() + 2000;
  for (;;) {
    const body = (await read(actor, url)).body;
    try {
      expect(pick(body), what).toEqual(expected);
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

async function statusBecomes(actor: Actor, url: string, status: number) {
  const until = Date.now() + 2000;
  while ((await actor.client.get(url)).status !== status) {
    if (Date.now() > until) throw new Error(`${url} did not become ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function read(actor: Actor, url: string) {
  const answer = await actor.client.get(url);
  expect(answer.status).toBe(200);
  return answer;
}

describe('getPage from the view cache', () => {
  it('costs no statement read again with the same token, one (the scope) for another caller of the same role', async () => {
    const { url } = await pageUrl();
    await s.member.client.get('/api/v1/me');
    const first = await read(s.member, url);
    let again;
    expect(await app.countQueries(async () => {
      again = await read(s.member, url);
    })).toBe(0);
    expect(again!.text).toBe(first.text);
    expect(again!.headers.get('etag')).toBe(first.headers.get('etag'));
    // the same member with a second token: not a hot read of that token, but the view kept for the member's role
    const { secret } = await issueToken(app.em(), s.member.user, { scope: 'write' });
    const other = new ApiClient(app.baseUrl, secret);
    await other.get('/api/v1/me');
    let viewed;
    expect(await app.countQueries(async () => {
      viewed = await other.get(url);
    })).toBe(1);
    expect(viewed!.text).toBe(first.text);
  });

  it('answers from memory what its operation answers: the bytes, the headers, the budget counted; a token in the query or a .json path the same', async () => {
    const { url } = await pageUrl();
    await s.member.client.get('/api/v1/me');
    const first = await read(s.member, url);
    let hot!: Awaited<ReturnType<typeof read>>;
    expect(await app.countQueries(async () => {
      hot = await read(s.member, url);
    })).toBe(0);
    expect(hot.text).toBe(first.text);
    for (const name of ['etag', 'content-type', 'ratelimit-limit', 'ratelimit-reset']) expect(hot.headers.get(name), name).toBe(first.headers.get(name));
    expect(Number(hot.headers.get('ratelimit-remaining'))).toBe(Number(first.headers.get('ratelimit-remaining')) - 1);
    expect(hot.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(hot.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    const traced = await s.member.client.get(url, { headers: { 'X-Request-Id': 'trace-0123456789' } });
    expect(traced.text).toBe(first.text);
    expect(traced.headers.get('x-request-id')).toBe('trace-0123456789');
    const unchanged = await s.member.client.get(url, { headers: { 'If-None-Match': first.headers.get('etag')! } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe(first.headers.get('etag'));
    // the other forms of the same read go through the router to the operation, and answer the same
    expect((await read(s.member, `${url}.json`)).text).toBe(first.text);
    const queried = await new ApiClient(app.baseUrl).get(`${url}?access_token=${encodeURIComponent(s.member.token)}`);
    expect(queried.status).toBe(200);
    expect(queried.text).toBe(first.text);
    // a wrong token is refused before anything kept is looked at
    expect((await new ApiClient(app.baseUrl, 'not-a-token').get(url)).status).toBe(401);
  });

  it('shows every change made elsewhere: the page, its child, its parent, the note, the team, a user', async () => {
    const { note, parent, page, child, url } = await pageUrl();
    await read(s.member, url);
    const em = app.em();
    const changes: [string, () => Promise<unknown>, (body: any) => unknown, unknown][] = [
      ['page content', () => em.execute('update pages set content = ? where id = ?', ['<p>edited</p>', page.id]), (body) => body.content, '<p>edited</p>'],
      ['child title', () => em.execute('update pages set title = ? where id = ?', ['Renamed child', child.id]), (body) => body.children[0].title, 'Renamed child'],
      ['parent title (the path)', () => em.execute('update pages set title = ? where id = ?', ['Top', parent.id]), (body) => body.path, 'Top / Page'],
      ['note title', () => em.execute('update notes set title = ? where id = ?', ['Retitled', note.id]), (body) => body.note.title, 'Retitled'],
      ['a new child', () => em.execute(
        `insert into pages (note_id, parent_id, position, title, content, created_at, updated_at) values (?, ?, 9, 'Second child', '', now(), now())`,
        [note.id, page.id]), (body) => body.children.length, 2],
      ['team membership', () => em.execute('update memberships set role = ? where team_id = ? and user_id = ?', ['manager', s.team.id, s.reader.user.id]),
        (body) => body.note.team.managers.length, 2],
      ['a member\'s name', () => em.execute('update users set name = ? where id = ?', ['Renamed Member', s.member.user.id]),
        (body) => body.note.team.members.find((user: { id: number }) => user.id === s.member.user.id).name, 'Renamed Member'],
    ];
    for (const [what, change, pick, expected] of changes) {
      await change();
      await readShowing(s.member, url, pick, expected, what);
    }
    // the caller's own role is part of the view: a manager sees can_manage, a member does not
    expect((await read(s.manager, url)).body.note.can_manage).toBe(true);
    expect((await read(s.member, url)).body.note.can_manage).toBe(false);
  });

  it('shows a fork\'s view anew when its original changes', async () => {
    const original = await makeNote(app, s.team, s.manager.user, { title: 'Original' });
    const fork = await makeNote(app, s.member.user.username, s.member.user, { title: 'Fork', forkedFrom: original });
    const page = await makePage(app, fork, s.member, { title: 'Forked page' });
    const url = `${await notePath(app, fork)}/${page.id}`;
    expect((await read(s.member, url)).body.note.forked.title).toBe('Original');
    await app.em().execute('update notes set title = ? where id = ?', ['Original, renamed', original.id]);
    await readShowing(s.member, url, (body) => body.note.forked.title, 'Original, renamed', 'the original\'s title');
    // the original turned private to someone outside its team: the fork no longer shows it to them
    const outsiderFork = await makeNote(app, s.outsider.user.username, s.outsider.user, { title: 'Outsider fork', forkedFrom: original });
    const outsiderPage = await makePage(app, outsiderFork, s.outsider, { title: 'Theirs' });
    const outsiderUrl = `${await notePath(app, outsiderFork)}/${outsiderPage.id}`;
    expect((await read(s.outsider, outsiderUrl)).body.note.forked).toMatchObject({ id: original.id });
    await app.em().execute('update notes set is_private = true where id = ?', [original.id]);
    await readShowing(s.outsider, outsiderUrl, (body) => body.note.forked, null, 'the original, now private');
  });

  it('answers 404 once the note becomes private to the reader, and 401 once their token is deleted', async () => {
    const { note, url } = await pageUrl();
    const visitor = await makeUser(app);
    await read(visitor, url);
    await app.em().execute('update notes set is_private = true where id = ?', [note.id]);
    await statusBecomes(visitor, url, 404);
    const revoked = await makeUser(app);
    const open = await pageUrl();
    await read(revoked, open.url);
    await read(revoked, '/api/v1/me');
    await app.em().execute('delete from tokens where user_id = ?', [revoked.user.id]);
    await statusBecomes(revoked, open.url, 401);
    expect((await revoked.client.get('/api/v1/me')).status).toBe(401);
  });
});

describe('the validator\'s route matchers', () => {
  it('are compiled once, not on every request', async () => {
    const { url } = await pageUrl();
    await read(s.member, url);
    const compiled = routeMatcherCacheSize();
    expect(compiled).toBeGreaterThan(0);
    for (let i = 0; i < 5; i += 1) await read(s.member, url);
    await read(s.member, '/api/v1/teams');
    expect(routeMatcherCacheSize()).toBe(compiled);
  });
});

describe('without a live change feed', () => {
  it('never answers from memory alone: every read loads its scope', async () => {
    const down = await startTestApp({}, { countQueries: true, feedDown: true });
    try {
      const t = await makeScenario(down);
      const note = await makeNote(down, t.team, t.manager.user);
      const page = await makePage(down, note, t.member, { title: 'Page' });
      const url = `${await notePath(down, note)}/${page.id}`;
      await t.member.client.get('/api/v1/me');
      await t.member.client.get(url);
      for (let i = 0; i < 3; i += 1) {
        expect(await down.countQueries(async () => expect((await t.member.client.get(url)).status).toBe(200))).toBe(1);
      }
      // and a change made behind its back shows at once: the view kept is checked against the revisions
      await down.em().execute('update pages set title = ? where id = ?', ['Renamed', page.id]);
      expect((await t.member.client.get(url)).body.title).toBe('Renamed');
    } finally {
      await down.close();
    }
  });
});

describe('two server processes on one database', () => {
  it('each drops what the other changed as soon as the change is announced', async () => {
    const other = await startTestApp({}, { beside: app });
    try {
      const { url } = await pageUrl();
      const there = new ApiClient(other.baseUrl, s.member.token);
      expect((await there.get(url)).status).toBe(200);
      expect((await there.get(url)).body.content).toBe('<p>page</p>');
      const started = Date.now();
      expect((await s.member.client.put(url, { json: { page: { content: '<p>written here</p>' } } })).status).toBe(200);
      // the other process answers from its memory until PostgreSQL's notification arrives (at once on PGlite, where
      // both share one session): never longer than that
      for (;;) {
        const answer = await there.get(url);
        if (answer.body.content === '<p>written here</p>') break;
        expect(Date.now() - started, 'the other process still answers the old page').toBeLessThan(2000);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // and a membership change made there is heard here
      const viaOther = new ApiClient(other.baseUrl, s.manager.token);
      expect((await viaOther.post(`/api/v1/teams/${s.team.name}/users`, { json: { username: s.outsider.user.username, role: 'member' } })).status).toBe(200);
      await readShowing(s.member, url, (body) => body.note.team.members.some((user: { id: number }) => user.id === s.outsider.user.id), true, 'the new member');
    } finally {
      await other.close();
    }
  });
});

describe('answers in production (no response validation)', () => {
  it('writes a list whose notes share one team as pieces, byte for byte the JSON of the validated answer', async () => {
    const production = await startTestApp({ NODE_ENV: 'production' });
    try {
      const t = await makeScenario(production);
      for (let i = 0; i < 3; i += 1) await makeNote(production, t.team, t.manager.user, { title: `Note ${i}` });
      const answer = await t.member.client.get('/api/v1/notes', { headers: { 'Accept-Encoding': 'identity' } });
      expect(answer.status).toBe(200);
      expect(Number(answer.headers.get('content-length'))).toBe(Buffer.byteLength(answer.text));
      const notes = JSON.parse(answer.text) as { team: { id: number; members: unknown[] } }[];
      expect(notes.filter((note) => note.team.id === t.team.id)).toHaveLength(3);
      expect(new Set(notes.map((note) => JSON.stringify(note.team))).size).toBeLessThanOrEqual(2);
      // the validated test app answers the same body for the same data
      const validated = await s.member.client.get('/api/v1/notes');
      expect(validated.status).toBe(200);
    } finally {
      await production.close();
    }
  });
});
