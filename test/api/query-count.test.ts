// Lists cost a fixed number of queries however long they are: presenters embed teams with all their users, forks
// with their originals, but everything is loaded in batches.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Token } from '../../src/modules/auth/token.entity.ts';
import { createClient } from '../../src/modules/oauth/clients.ts';
import { recordGrant } from '../../src/modules/oauth/model.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeIssue, makeNote, makePage, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { MULTIPART, multipartBody } from '../support/multipart.ts';

let app: TestApp;
let reader: Actor;

async function grow(count: number) {
  for (let i = 0; i < count; i += 1) {
    const others = await Promise.all([makeUser(app), makeUser(app)]);
    const team = await makeTeam(app, `grown-${app.baseUrl.length}-${Date.now() % 100000}-${i}-${Math.random().toString(36).slice(2, 6)}`, [
      { user: reader.user, role: i % 2 === 0 ? 'manager' : 'member' },
      { user: others[0]!.user, role: 'manager' },
      { user: others[1]!.user, role: 'member' },
    ]);
    const original = await makeNote(app, team, reader.user, { title: `note ${i}`, isPrivate: i % 3 === 0 });
    await makeNote(app, reader.user.username, reader.user, { title: `fork ${i}`, forkedFrom: original });
  }
}

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  reader = await makeUser(app, 'counter');
});
afterAll(async () => app?.close());

describe('lists load in a fixed number of queries', () => {
  it('whatever the number of notes, teams and users', async () => {
    const lists = ['/api/v1/notes', '/api/v1/teams', '/api/v1/users/counter/notes', '/api/v1/teams/counter/notes', '/api/v1/users'];
    const measure = async () => {
      // the token's last_used_at is written at most once a minute: let that happen outside the measurement
      await reader.client.get('/api/v1/me');
      const counts: Record<string, number> = {};
      for (const path of lists) {
        counts[path] = await app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
      }
      return counts;
    };
    await grow(2);
    const small = await measure();
    await grow(12);
    const large = await measure();
    expect((await reader.client.get('/api/v1/notes')).body.length).toBe(28);
    expect(large).toEqual(small);
    // token, count, page, roles or memberships of both sides, originals of forks, pull status: a handful, never per row
    expect(Math.max(...Object.values(large))).toBeLessThanOrEqual(10);
  });
});

describe('a page read costs a fixed number of queries', () => {
  it('whatever the depth of the page and the size of the note', async () => {
    const note = await makeNote(app, 'counter', reader.user, { slug: 'deep' });
    const base = '/api/v1/counter/deep';
    let parent: number | undefined;
    const chain: number[] = [];
    for (let depth = 1; depth <= 30; depth += 1) {
      parent = (await makePage(app, note, reader, { title: `level ${depth}`, content: 'x', parent })).id;
      chain.push(parent);
      // siblings make the note bigger without making the chain deeper
      await makePage(app, note, reader, { title: `side ${depth}`, content: 'y', parent: chain.at(-2) });
    }
    await reader.client.get('/api/v1/me');
    const shallow = await app.countQueries(async () => expect((await reader.client.get(`${base}/${chain[1]}`)).status).toBe(200));
    const deep = await app.countQueries(async () => {
      const answer = await reader.client.get(`${base}/${chain[29]}`);
      expect(answer.body.path.split(' / ')).toHaveLength(30);
    });
    expect(deep).toBe(shallow);
    // the tree order and the team's members are kept in memory after the first list: count with both kept
    await reader.client.get(`${base}/pages`);
    const firstPage = await app.countQueries(() => reader.client.get(`${base}/pages`));
    const thirdPage = await app.countQueries(() => reader.client.get(`${base}/pages`, { query: { page: '3' } }));
    expect(thirdPage).toBe(firstPage);
    expect(note.id).toBeGreaterThan(0);
  });
});

describe('a read of the past costs a fixed number of statements', () => {
  it('whatever the size of the note and the depth of the page: the tree then once per moment, the contents of what is shown', async () => {
    const note = await makeNote(app, 'counter', reader.user, { slug: 'then' });
    const base = '/api/v1/counter/then';
    const small = await makePage(app, note, reader, { title: 'only', content: 'x' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const before = new Date().toISOString();
    await reader.client.get('/api/v1/me');
    const measure = async (at: string) => {
      // the team's members are kept in memory after a first read: count with them kept
      await reader.client.get(`${base}/pages`);
      return {
        // a new moment reads the tree then; another read of the same moment finds it kept
        first: await app.countQueries(async () => expect((await reader.client.get(`${base}/pages`, { query: { at } })).body.pages.length).toBeGreaterThan(0)),
        again: await app.countQueries(async () => expect((await reader.client.get(`${base}/pages`, { query: { at } })).body.pages.length).toBeGreaterThan(0)),
        page: await app.countQueries(async () => expect((await reader.client.get(`${base}/${small.id}`, { query: { at } })).status).toBe(200)),
      };
    };
    const few = await measure(before);
    let parent: number | undefined = small.id;
    for (let depth = 1; depth <= 25; depth += 1) parent = (await makePage(app, note, reader, { title: `level ${depth}`, content: 'y', parent })).id;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const many = await measure(new Date().toISOString());
    expect(many).toEqual(few);
    // scope, the tree then (once per moment), the note's view, the contents shown
    expect(few.again).toBe(few.first - 1);
    expect(few.first).toBeLessThanOrEqual(5);
  });
});

describe('a page write costs a fixed number of statements', () => {
  it('4 for a new title or content (scope, the write, the view, the members), with its version, change and entry', async () => {
    const note = await makeNote(app, 'counter', reader.user, { slug: 'written' });
    const page = await makePage(app, note, reader, { title: 'First', content: 'one' });
    const url = `/api/v1/counter/written/${page.id}`;
    await reader.client.get('/api/v1/me');
    const statements = await app.countQueries(async () => {
      const answer = await reader.client.put(url, { json: { page: { title: 'Second', content: 'two' } } });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ title: 'Second', content: 'two' });
    });
    expect(statements).toBe(4);
    const em = app.em();
    const [stored] = await em.execute<{ title: string; content: string; version_sequence: number; lock_version: number }[]>(
      'select title, content, version_sequence, lock_version from pages where id = ?', [page.id]);
    expect(stored).toMatchObject({ title: 'Second', content: 'two', version_sequence: 2 });
    const versions = await em.execute<{ index: number; title: string; content: string; diff: string | null }[]>(
      'select index, title, content, diff from page_versions where page_id = ? order by index', [page.id]);
    expect(versions.map((version) => [version.index, version.title, version.content])).toEqual([[1, 'First', 'one'], [2, 'Second', 'two']]);
    // the diff is made on first read, not by the write
    expect(versions[1]!.diff).toBeNull();
    const [change] = await em.execute<{ type: string; actor_id: number; note_id: number; subject_id: number; payload: Record<string, unknown> }[]>(
      'select type, actor_id, note_id, subject_id, payload from changes where subject_id = ? and type = ? order by id desc limit 1', [page.id, 'page.updated']);
    expect(change).toEqual({
      type: 'page.updated', actor_id: reader.user.id, note_id: note.id, subject_id: page.id,
      payload: { note_id: note.id, page_id: page.id, changed: ['title', 'content'], version: 2, actor: { id: reader.user.id, username: 'counter' } },
    });
    const [entry] = await em.execute<{ action: string; type: string; page_id: number; summary: Record<string, unknown> }[]>(
      'select action, type, page_id, summary from logs where page_id = ? order by id desc limit 1', [page.id]);
    expect(entry).toEqual({ action: 'update', type: 'page', page_id: page.id, summary: { page_id: page.id, title: 'Second', changed: ['title', 'content'] } });

    // the same text again: no version, no change, the same ETag; a stale If-Match: 412, nothing written
    const etag = (await reader.client.get(url)).headers.get('etag')!;
    const same = await reader.client.put(url, { json: { page: { content: 'two' } } });
    expect(same.status).toBe(200);
    expect(same.headers.get('etag')).toBe(etag);
    const stale = await reader.client.put(url, { json: { page: { content: 'three' } }, headers: { 'If-Match': '"page-' + page.id + '-1"' } });
    expect(stale.status).toBe(412);
    const gone = await reader.client.put(`/api/v1/counter/written/${page.id + 100000}`, { json: { page: { content: 'x' } } });
    expect(gone.status).toBe(404);
    const [after] = await em.execute<{ versions: string }[]>('select count(*)::text as versions from page_versions where page_id = ?', [page.id]);
    expect(after!.versions).toBe('2');

    // the general path (a move with the new content: a transaction and recordEvent) stores rows of the same shape
    const parent = await makePage(app, note, reader, { title: 'Parent', content: 'p' });
    expect((await reader.client.put(url, { json: { page: { content: 'four', parent: parent.id } } })).status).toBe(200);
    const [general] = await em.execute<{ payload: Record<string, unknown> }[]>(
      'select payload from changes where subject_id = ? and type = ? order by id desc limit 1', [page.id, 'page.updated']);
    expect(general!.payload).toEqual({ note_id: note.id, page_id: page.id, changed: ['parent', 'content'], version: 3, actor: { id: reader.user.id, username: 'counter' } });
    const [generalEntry] = await em.execute<{ action: string; type: string; page_id: number; summary: Record<string, unknown> }[]>(
      'select action, type, page_id, summary from logs where page_id = ? order by id desc limit 1', [page.id]);
    expect(generalEntry).toEqual({ action: 'update', type: 'page', page_id: page.id, summary: { page_id: page.id, title: 'Second', changed: ['parent', 'content'] } });

    // If-Match as a list, with the current ETag weak, or `*`: the one-statement write takes it
    const current = (await reader.client.get(url)).headers.get('etag')!;
    const listed = await reader.client.put(url, { json: { page: { content: 'five' } }, headers: { 'If-Match': `"page-0-1", W/${current}` } });
    expect([listed.status, listed.body.content]).toEqual([200, 'five']);
    const any = await reader.client.put(url, { json: { page: { content: 'six' } }, headers: { 'If-Match': '*' } });
    expect([any.status, any.body.content]).toEqual([200, 'six']);
  });
});

describe('issue lists cost a fixed number of queries', () => {
  it('whatever the number of issues, assignees, tags and notes', async () => {
    const note = await makeNote(app, 'counter', reader.user, { slug: 'tasks' });
    const others = [await makeUser(app), await makeUser(app)];
    const lists = ['/api/v1/counter/tasks/issues?state=all', '/api/v1/my_issues?state=all'];
    const measure = async () => {
      const counts: Record<string, number> = {};
      for (const path of lists) {
        await reader.client.get(path);
        counts[path] = await app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
      }
      return counts;
    };
    const grow = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        const issue = await makeIssue(app, note, reader, { title: `issue ${i}`, to_user: i % 3 === 0 ? others[i % 2]!.user.username : 'counter' });
        await reader.client.post(`/api/v1/counter/tasks/issues/${issue.index}/tags`, { json: { tags: [`t${i}`, 'shared'] } });
        const elsewhere = await makeNote(app, 'counter', reader.user, { title: `elsewhere ${i}` });
        await makeIssue(app, elsewhere, reader, { title: `there ${i}`, to_user: 'counter' });
      }
    };
    await grow(2);
    const small = await measure();
    await grow(10);
    const large = await measure();
    expect((await reader.client.get(lists[1]!)).body.length).toBeGreaterThan(15);
    expect(large).toEqual(small);
    expect(Math.max(...Object.values(large))).toBeLessThanOrEqual(7);
  });
});

describe('note comments, notifications and the activity log cost a fixed number of queries', () => {
  it('whatever the number of comments, notifications and log entries', async () => {
    const author = await makeUser(app, 'feedwriter');
    const team = await makeTeam(app, 'feeds-counted', [{ user: reader.user, role: 'member' }, { user: author.user, role: 'manager' }]);
    const note = await makeNote(app, team, author.user, { slug: 'feed', title: 'Feed' });
    const grow = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        await author.client.post('/api/v1/feeds-counted/feed/comments', { json: { comment: { comment: `c${i}` }, mentions: ['counter'] } });
        await makePage(app, note, author, { title: `p${i}` });
      }
    };
    const lists = ['/api/v1/feeds-counted/feed/comments', '/api/v1/notifications', '/api/v1/logs?team=feeds-counted'];
    const measure = async () => {
      for (const path of lists) await reader.client.get(path);
      const counts: Record<string, number> = {};
      for (const path of lists) counts[path] = await app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
      return counts;
    };
    await grow(1);
    const small = await measure();
    await grow(10);
    const large = await measure();
    expect(large).toEqual(small);
    expect((await reader.client.get('/api/v1/notifications')).body).toHaveLength(11);
  });
});

describe('the caller’s apps, authorizations and tokens cost a fixed number of queries', () => {
  it('however many there are', async () => {
    const em = app.em();
    const grow = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        const { client } = await createClient(em, { name: `app ${i}`, redirectUris: ['https://app.example/cb'], confidential: false, owner: reader.user });
        await recordGrant(em, reader.user.id, client.id, 'read');
        em.create(Token, { user: reader.user.id, tokenHash: randomBytes(32).toString('hex'), prefix: 'nt_x', scope: 'read', label: null, expiresAt: null, lastUsedAt: null, clientId: client.id, family: null });
        await em.flush();
      }
    };
    const lists = ['/api/v1/me/apps', '/api/v1/me/authorizations', '/api/v1/me/tokens'];
    const measure = async () => {
      await reader.client.get('/api/v1/me');
      const counts: Record<string, number> = {};
      for (const path of lists) counts[path] = await app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
      return counts;
    };
    await grow(2);
    const small = await measure();
    await grow(10);
    const large = await measure();
    expect(large).toEqual(small);
    expect(Math.max(...Object.values(large))).toBeLessThanOrEqual(5);
  });
});

describe('search costs a fixed number of queries', () => {
  it('whatever the number of matching notes, pages and teams', async () => {
    const grow = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        const owner = await makeUser(app);
        const team = await makeTeam(app, `searched-${Date.now() % 100000}-${i}-${Math.random().toString(36).slice(2, 6)}`, [{ user: owner.user, role: 'manager' }]);
        // half the notes are forks, a third private (of a team the reader is not in: never listed)
        const original = await makeNote(app, team, owner.user, { title: `original ${i}`, isPrivate: i % 3 === 0 });
        const note = await makeNote(app, team, owner.user, { title: `searched ${i}`, forkedFrom: i % 2 === 0 ? original : undefined });
        await makePage(app, note, owner, { title: `ocelot ${i}`, content: '<p>the ocelot page</p>' });
        await makePage(app, note, owner, { title: `second ${i}`, content: '<p>another ocelot</p>' });
        await makePage(app, original, owner, { title: `original page ${i}`, content: '<p>ocelot in the original</p>' });
      }
    };
    const path = '/api/v1/search?q=ocelot';
    const measure = async () => {
      await app.settle();
      await reader.client.get(path);
      return app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
    };
    await grow(2);
    const small = await measure();
    await grow(10);
    const large = await measure();
    expect((await reader.client.get(path)).body.length).toBeGreaterThan(15);
    expect(large).toBe(small);
    // token, the search, the notes with their teams, originals of forks, memberships, pull status
    expect(large).toBeLessThanOrEqual(7);
  });
});

describe('attachment lists cost a fixed number of queries', () => {
  it('whatever the number of attachments (and of log entries about them)', async () => {
    const note = await makeNote(app, 'counter', reader.user, { slug: 'files' });
    const grow = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        const body = multipartBody([{ name: 'file', filename: `f${i}.txt`, data: `file ${i} ${Math.random()}` }]);
        expect((await reader.client.post('/api/v1/counter/files/attachments', { raw: { body, contentType: MULTIPART } })).status).toBe(200);
      }
    };
    const lists = ['/api/v1/counter/files/attachments', '/api/v1/logs?team=counter'];
    const measure = async () => {
      const counts: Record<string, number> = {};
      for (const path of lists) {
        await reader.client.get(path);
        counts[path] = await app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
      }
      return counts;
    };
    await grow(1);
    const small = await measure();
    await grow(8);
    const large = await measure();
    expect((await reader.client.get(lists[0]!)).body).toHaveLength(9);
    expect(large).toEqual(small);
    expect(large[lists[0]!]).toBeLessThanOrEqual(4);
  });
});

describe('request lists and requests cost a fixed number of queries', () => {
  it('whatever the number of requests and of pages they carry', async () => {
    const original = await makeNote(app, 'counter', reader.user, { slug: 'proposals' });
    const pages = [];
    for (let i = 0; i < 6; i += 1) pages.push(await makePage(app, original, reader, { title: `p${i}`, content: `<p>page ${i}</p>` }));
    const fork = (await reader.client.post('/api/v1/counter/proposals/forks', { json: {} })).body;
    const copies = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? order by origin_page_id', [fork.id]);
    const propose = async (pageCount: number, n: number) => {
      const versions = [];
      for (const copy of copies.slice(0, pageCount)) {
        await reader.client.put(`/api/v1/counter/${fork.id}/${copy.id}`, { json: { page: { content: `<p>edit ${n}</p>` } } });
        versions.push((await app.em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [copy.id]))[0]!.id);
      }
      const answer = await reader.client.post(`/api/v1/counter/${fork.id}/requests`, { json: { page_versions: versions } });
      expect(answer.status, answer.text).toBe(200);
      return answer.body.index as number;
    };
    const count = async (path: string) => {
      await reader.client.get(path);
      return app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
    };
    const onePage = await propose(1, 0);
    const manyPages = await propose(6, 1);
    expect(await count(`/api/v1/counter/proposals/requests/${manyPages}`)).toBe(await count(`/api/v1/counter/proposals/requests/${onePage}`));
    const small = await count('/api/v1/counter/proposals/requests?state=all');
    for (let n = 2; n < 8; n += 1) await propose(1 + (n % 6), n);
    const large = await count('/api/v1/counter/proposals/requests?state=all');
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(8);
  });
});

describe('webhook lists cost a fixed number of queries', () => {
  it('whatever the number of webhooks and delivery attempts', async () => {
    const team = await makeTeam(app, 'hooks-counted', [{ user: reader.user, role: 'manager' }]);
    const hook = async (n: number) => {
      const answer = await reader.client.post('/api/v1/teams/hooks-counted/webhooks', { json: { webhook: { url: `https://203.0.113.20/${n}` } } });
      expect(answer.status).toBe(200);
      return answer.body.id as number;
    };
    const first = await hook(0);
    const attempts = (n: number) =>
      app.em().execute(
        `insert into webhook_deliveries (webhook_id, message_id, event_type, attempt, succeeded, status_code, error, duration_ms, next_attempt_at, created_at)
         select ?, 'msg_' || i, 'page.updated', 1, true, 200, null, 5, null, now() from generate_series(1, ?) as i`,
        [first, n],
      );
    const lists = ['/api/v1/teams/hooks-counted/webhooks', `/api/v1/teams/hooks-counted/webhooks/${first}/deliveries`];
    const measure = async () => {
      await reader.client.get('/api/v1/me');
      const counts: Record<string, number> = {};
      for (const path of lists) counts[path] = await app.countQueries(async () => expect((await reader.client.get(path)).status).toBe(200));
      return counts;
    };
    await attempts(1);
    const small = await measure();
    for (let n = 1; n < 12; n += 1) await hook(n);
    await attempts(40);
    const large = await measure();
    expect((await reader.client.get(lists[0]!)).body).toHaveLength(12);
    expect(large).toEqual(small);
    // token, scope (team and role), count, page; the deliveries also read the webhook
    expect(Math.max(...Object.values(large))).toBeLessThanOrEqual(6);
    expect(team.id).toBeGreaterThan(0);
  });
});
