// createIssue, getIssue, listIssues, listMyIssues. Updates, deletes and tags: issue-changes.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { createIssue, getIssue, listIssues, listMyIssues } from '../../generated/client/index.ts';
import { Issue } from '../../src/modules/issues/issue.entity.ts';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import type { Team } from '../../src/modules/teams/team.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addMember, anonymous, makeIssue, makeNote, makeUser, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, colleague: Actor, outsider: Actor, reader: Actor;
let crew: Team;

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  const cast = await makeScenario(app, { team: 'crew', usernames: { manager: 'mia', member: 'max', outsider: 'oli', reader: 'ray' } });
  ({ manager, member, outsider, reader } = cast);
  crew = cast.team;
  colleague = await makeUser(app, 'cora');
  await addMember(app, cast.team, colleague.user, 'member');
});
afterAll(async () => app?.close());

let counter = 0;
async function freshNote(options: { isPrivate?: boolean } = {}) {
  counter += 1;
  const note = await makeNote(app, 'crew', manager.user, { slug: `tasks-${counter}`, isPrivate: options.isPrivate ?? false, description: 'the note' });
  return { note, url: `/api/v1/crew/${note.slug}/issues` };
}
const issuesOf = (noteId: number) => app.em().find(Issue, { note: noteId }, { orderBy: { index: 'asc' } });

describe('createIssue', () => {
  it('stores the issue with the next index, notifies the assignee, logs it, and answers it in full', async () => {
    const { note, url } = await freshNote();
    const answer = await member.client.post(url, {
      json: { issue: { title: 'Fix the build', description: 'Line one\n<script>alert(1)</script><a href="javascript:x()">x</a>', to_user: 'CORA' } },
    });
    expect(answer.status, answer.text).toBe(200);
    const body = answer.body;
    expect(body).toMatchObject({
      title: 'Fix the build',
      is_done: false,
      index: 1,
      position: 1,
      rate: 0,
      label: 'Issue #1 Fix the build',
      html_url: `${app.baseUrl}/crew/${note.slug}/issues/1`,
      can_manage: true,
      tags: [],
      from_user: { id: member.user.id, username: 'max', model: 'user' },
      to_user: { id: colleague.user.id, username: 'cora', model: 'user' },
      model: 'issue',
    });
    expect(body.description_html).toBe('Line one<br />\n<a rel="nofollow noopener">x</a>');
    expect(body.created_at).toMatch(/\.000Z$/);
    // the note as getNote shows it to the caller
    expect(body.note).toEqual((await member.client.get(`/api/v1/crew/${note.slug}`)).body);
    // a later read shows exactly what create answered
    expect((await member.client.get(`${url}/1`)).body).toEqual(body);

    const [stored] = await issuesOf(note.id);
    expect([stored!.index, stored!.title, stored!.fromUser.id, stored!.toUser?.id, stored!.isDone]).toEqual([1, 'Fix the build', member.user.id, colleague.user.id, false]);
    const notifications = await app.em().find(Notification, { issue: body.id });
    expect(notifications.map((item) => [item.user.id, item.fromUser.id, item.event, item.type, item.note.id])).toEqual([
      [colleague.user.id, member.user.id, 'assign', 'issue', note.id],
    ]);
    const logs = await app.em().find(Log, { issue: body.id });
    expect(logs.map((log) => [log.type, log.action, log.user.id, log.note?.id, log.summary])).toEqual([
      ['issue', 'create', member.user.id, note.id, { issue_id: body.id, index: 1, title: 'Fix the build' }],
    ]);
  });

  it('takes a legacy form (brackets encoded, .json path), ignores computed fields, and a bare to_user is unassigned', async () => {
    const { note, url } = await freshNote();
    await makeIssue(app, note, member, { title: 'first' });
    const form = 'issue%5Btitle%5D=From+a+form&issue%5Bto_user%5D&issue%5Blabel%5D=Issue+%2399+x&issue%5Bindex%5D=99&issue%5Bid%5D=5'
      + '&issue%5Bis_done%5D=1&issue%5Bcan_manage%5D=false&issue%5Bhtml_url%5D=http%3A%2F%2Fx&utf8=%E2%9C%93';
    const answer = await member.client.post(`${url}.json`, { form });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ title: 'From a form', index: 2, label: 'Issue #2 From a form', to_user: null, is_done: false });
    const raw = await member.client.post(url, { form: 'issue[title]=Raw+brackets&issue[to_user]=&issue[rate]=2.5&issue[position]=-3' });
    expect(raw.body).toMatchObject({ index: 3, to_user: null, rate: 2.5, position: -3 });
    expect((await issuesOf(note.id)).map((issue) => issue.index)).toEqual([1, 2, 3]);
  });

  it('never notifies the caller of an issue assigned to themselves', async () => {
    const { note } = await freshNote();
    const own = await makeIssue(app, note, member, { title: 'mine', to_user: 'max' });
    expect(own.to_user?.username).toBe('max');
    expect(await app.em().count(Notification, { issue: own.id })).toBe(0);
  });

  it('answers 400 for a missing, empty or too long title and for names the issue does not have, storing nothing', async () => {
    const { note, url } = await freshNote();
    const bad = [
      { json: {} },
      { json: { issue: {} } },
      { json: { issue: { title: '' } } },
      { json: { issue: { title: 'x'.repeat(256) } } },
      { json: { issue: { title: 'x', bogus: 1 } } },
      { json: { issue: { title: 'x', rate: 1e12 } } },
      { json: { issue: { title: 'x', position: 1.5 } } },
      { form: 'issue%5Btitle%5D=' },
      { form: 'issue%5Btitle%5D=x&issue%5Bassignee%5D=cora' },
      { form: 'issue%5Btitle%5D=x&issue%5Bposition%5D=0x2' },
    ];
    for (const options of bad) {
      const answer = await member.client.post(url, options);
      expect(answer.status, JSON.stringify(options)).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
    }
    expect(await issuesOf(note.id)).toEqual([]);
    const longest = await member.client.post(url, { json: { issue: { title: 'é'.repeat(255) } } });
    expect(longest.status).toBe(200);
  });

  it('answers 422 for an unknown assignee or one who may not read the note, and the index is not used up', async () => {
    const open = await freshNote();
    const unknown = await member.client.post(open.url, { json: { issue: { title: 'x', to_user: 'nobody-here' } } });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ code: 'unknown_user', errors: [{ pointer: '/issue/to_user' }] });
    const closed = await freshNote({ isPrivate: true });
    const hidden = await member.client.post(closed.url, { form: { 'issue[title]': 'x', 'issue[to_user]': 'oli' } });
    expect(hidden.status).toBe(422);
    expect(hidden.body.code).toBe('cannot_read_note');
    // an outsider may be assigned an issue of a note they may read
    expect((await member.client.post(open.url, { json: { issue: { title: 'x', to_user: 'oli' } } })).body.index).toBe(1);
    expect((await makeIssue(app, closed.note, member, { title: 'y' })).index).toBe(1);
    expect(await app.em().count(Notification, { note: { $in: [open.note.id, closed.note.id] } })).toBe(1);
  });

  it('answers 401 without a token, 403 to outsiders and read tokens, 404 for a private note of another team', async () => {
    const open = await freshNote();
    const closed = await freshNote({ isPrivate: true });
    const body = { json: { issue: { title: 'hello' } } };
    expect((await anonymous(app).post(open.url, body)).status).toBe(401);
    const outside = await outsider.client.post(open.url, body);
    expect(outside.status).toBe(403);
    expect(outside.body.code).toBe('forbidden');
    expect((await reader.client.post(open.url, body)).body.code).toBe('insufficient_scope');
    expect((await outsider.client.post(closed.url, body)).status).toBe(404);
    expect((await member.client.post('/api/v1/crew/no-such-note/issues', body)).status).toBe(404);
    expect(await app.em().count(Issue, { note: { $in: [open.note.id, closed.note.id] } })).toBe(0);
  });

  it('answers 409 when the unique (note, index) backstop catches an index taken behind the counter', async () => {
    const { note, url } = await freshNote();
    await makeIssue(app, note, member, { title: 'one' });
    await app.em().execute(`insert into issues (note_id, index, title, from_user_id, created_at, updated_at) values (?, 2, 'sneaked in', ?, now(), now())`, [note.id, member.user.id]);
    const answer = await member.client.post(url, { json: { issue: { title: 'two' } } });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('concurrent_change');
    expect((await issuesOf(note.id)).map((issue) => issue.title)).toEqual(['one', 'sneaked in']);
  });

  it('gives 100 concurrent creations the indexes 1..100, and never reuses an index after a delete', async () => {
    const { note, url } = await freshNote();
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => member.client.post(url, { json: { issue: { title: `parallel ${i}` } } })));
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200)).toEqual([]);
    const indexes = answers.map((answer) => answer.body.index as number).sort((a, b) => a - b);
    expect(indexes).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect((await member.client.delete(`${url}/100`)).status).toBe(204);
    expect((await makeIssue(app, note, member, { title: 'after the delete' })).index).toBe(101);
  }, 60_000);

  it('works through the generated client', async () => {
    const { note } = await freshNote();
    const client = createClient({ baseUrl: app.baseUrl, auth: () => member.token });
    const path = { team: 'crew', note: note.slug! };
    const created = await createIssue({ client, path, body: { issue: { title: 'via SDK', to_user: 'cora' } }, throwOnError: true });
    expect(created.data.label).toBe('Issue #1 via SDK');
    const shown = await getIssue({ client, path: { ...path, index: 1 }, throwOnError: true });
    expect(shown.data).toEqual(created.data);
    const listed = await listIssues({ client, path, query: { state: 'all', per_page: 10 }, throwOnError: true });
    expect(listed.data.map((issue) => issue.title)).toEqual(['via SDK']);
    const mine = await listMyIssues({ client: createClient({ baseUrl: app.baseUrl, auth: () => colleague.token }), throwOnError: true });
    expect(mine.data.map((issue) => issue.id)).toContain(created.data.id);
  });
});

describe('getIssue', () => {
  it('shows an issue of a readable note, with can_manage for the creator and managers only', async () => {
    const { note, url } = await freshNote();
    const made = await makeIssue(app, note, member, { title: 'look' });
    const canManage = async (actor: Actor) => (await actor.client.get(`${url}/1`)).body.can_manage;
    expect(await canManage(member)).toBe(true);
    expect(await canManage(manager)).toBe(true);
    expect(await canManage(colleague)).toBe(false);
    expect(await canManage(outsider)).toBe(false);
    const outside = await outsider.client.get(`${url}/1`);
    expect(outside.status).toBe(200);
    expect(outside.body).toMatchObject({ id: made.id, note: { can_manage: false } });
    expect(outside.body.note.team).not.toHaveProperty('role');
  });

  it('answers 401 without a token, 404 for a private note of another team, an unknown or malformed index', async () => {
    const open = await freshNote();
    const closed = await freshNote({ isPrivate: true });
    await makeIssue(app, open.note, member, { title: 'a' });
    await makeIssue(app, closed.note, member, { title: 'b' });
    expect((await anonymous(app).get(`${open.url}/1`)).status).toBe(401);
    expect((await outsider.client.get(`${closed.url}/1`)).status).toBe(404);
    expect((await reader.client.get(`${closed.url}/1`)).status).toBe(200);
    for (const index of ['2', '0x1', '999999999999']) {
      const answer = await member.client.get(`${open.url}/${index}`);
      expect([400, 404], index).toContain(answer.status);
      if (index === '2' || index === '0x1') expect(answer.status).toBe(404);
    }
  });
});

describe('listIssues', () => {
  it('lists open issues by position by default, closed or all on request, with paging headers', async () => {
    const { note, url } = await freshNote();
    for (const title of ['one', 'two', 'three', 'four']) await makeIssue(app, note, member, { title });
    await member.client.patch(`${url}/2`, { form: 'issue%5Bis_done%5D=true' });
    await member.client.patch(`${url}/4`, { json: { issue: { position: 0 } } });
    const titles = (answer: { body: { title: string }[] }) => answer.body.map((issue) => issue.title);
    const open = await outsider.client.get(url);
    expect(open.status).toBe(200);
    expect(titles(open)).toEqual(['four', 'one', 'three']);
    expect(open.headers.get('x-total-count')).toBe('3');
    expect(titles(await outsider.client.get(url, { query: { state: 'closed' } }))).toEqual(['two']);
    expect(titles(await outsider.client.get(`${url}.json`, { query: { state: 'all' } }))).toEqual(['four', 'one', 'two', 'three']);
    const second = await outsider.client.get(url, { query: { state: 'all', page: '2', per_page: '3' } });
    expect(titles(second)).toEqual(['three']);
    expect(second.headers.get('link')).toContain(`<${app.baseUrl}${url}?state=all&page=1&per_page=3>; rel="prev"`);
    // the list shows each issue exactly as getIssue does
    expect(open.body[0]).toEqual((await outsider.client.get(`${url}/4`)).body);
  });

  it('reads an empty state (?state=) as absent', async () => {
    const { note, url } = await freshNote();
    await makeIssue(app, note, member, { title: 'one' });
    const answer = await member.client.get(`${url}?state=`);
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(1);
  });

  it('loads in a fixed number of statements however many issues, users and tags', async () => {
    const { note, url } = await freshNote();
    const measure = async () => {
      // warm: the token's last use and the team's members (kept in memory) are read outside the measurement
      await manager.client.get(url);
      return app.countQueries(async () => expect((await manager.client.get(url)).status).toBe(200));
    };
    const authors = [member, colleague, manager];
    for (let i = 0; i < 2; i += 1) await makeIssue(app, note, authors[i]!, { title: `i${i}`, to_user: 'cora' });
    const few = await measure();
    for (let i = 2; i < 15; i += 1) {
      const issue = await makeIssue(app, note, authors[i % 3]!, { title: `i${i}`, ...(i % 2 ? { to_user: 'oli' } : {}) });
      await member.client.post(`${url}/${issue.index}/tags`, { json: { tags: [`t${i}`, 'common'] } });
    }
    const many = await measure();
    expect((await manager.client.get(url)).body).toHaveLength(15);
    expect(many).toBe(few);
    // token + scope, count, issues with their users, members of the team, tags
    expect(many).toBeLessThanOrEqual(6);
  });

  it('answers 401 without a token, 404 for a private note of another team, 400 for a bad state or paging', async () => {
    const open = await freshNote();
    const closed = await freshNote({ isPrivate: true });
    expect((await anonymous(app).get(open.url)).status).toBe(401);
    expect((await outsider.client.get(closed.url)).status).toBe(404);
    expect((await reader.client.get(closed.url)).status).toBe(200);
    for (const query of [{ state: 'done' }, { state: 'OPEN' }, { page: '0' }, { per_page: '101' }] as Record<string, string>[]) {
      const answer = await member.client.get(open.url, { query });
      expect(answer.status, JSON.stringify(query)).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
    }
  });
});

describe('listMyIssues', () => {
  it('lists the open issues assigned to the caller in notes they may read, newest first', async () => {
    const assignee = await makeUser(app);
    const name = assignee.user.username;
    const a = await freshNote();
    const b = await freshNote();
    const hidden = await freshNote({ isPrivate: true });
    const first = await makeIssue(app, a.note, member, { title: 'first', to_user: name });
    await makeIssue(app, a.note, member, { title: 'not theirs', to_user: 'cora' });
    const second = await makeIssue(app, b.note, manager, { title: 'second', to_user: name });
    const closedOne = await makeIssue(app, b.note, member, { title: 'closed', to_user: name });
    await member.client.put(`${b.url}/${closedOne.index}`, { form: 'issue%5Bis_done%5D=1&issue%5Bto_user%5D=' + name });
    // assigned while in the team, then the team let them go: the private note's issue is no longer theirs to see
    await app.em().execute('insert into memberships (team_id, user_id, role, created_at, updated_at) values (?, ?, ?, now(), now())', [a.note.team.id, assignee.user.id, 'member']);
    await makeIssue(app, hidden.note, member, { title: 'private', to_user: name });
    await app.em().execute('delete from memberships where user_id = ? and team_id = ?', [assignee.user.id, a.note.team.id]);

    const ids = (answer: { body: { id: number }[] }) => answer.body.map((issue) => issue.id);
    const open = await assignee.client.get('/api/v1/my_issues');
    expect(open.status).toBe(200);
    expect(ids(open)).toEqual([second.id, first.id]);
    expect(open.headers.get('x-total-count')).toBe('2');
    expect(open.body[0]).toEqual((await assignee.client.get(`${b.url}/${second.index}`)).body);
    expect(ids(await assignee.client.get('/api/v1/my_issues.json', { query: { state: 'closed' } }))).toEqual([closedOne.id]);
    expect(ids(await assignee.client.get('/api/v1/my_issues', { query: { state: 'all' } }))).toEqual([closedOne.id, second.id, first.id]);
    const paged = await assignee.client.get('/api/v1/my_issues', { query: { state: 'all', per_page: '2', page: '2' } });
    expect(ids(paged)).toEqual([first.id]);
    expect(paged.headers.get('link')).toContain('rel="first"');
  });

  it('loads in a fixed number of statements however many issues and notes', async () => {
    const assignee = await makeUser(app);
    await addMember(app, crew, assignee.user, 'member');
    const measure = async () => {
      await assignee.client.get('/api/v1/my_issues');
      return app.countQueries(async () => expect((await assignee.client.get('/api/v1/my_issues')).status).toBe(200));
    };
    const { note } = await freshNote();
    await makeIssue(app, note, member, { title: 'one', to_user: assignee.user.username });
    const few = await measure();
    for (let i = 0; i < 6; i += 1) {
      const other = await freshNote({ isPrivate: i % 2 === 0 });
      await makeIssue(app, other.note, member, { title: `n${i}`, to_user: assignee.user.username });
      await makeIssue(app, other.note, manager, { title: `m${i}`, to_user: assignee.user.username });
    }
    const many = await measure();
    expect((await assignee.client.get('/api/v1/my_issues')).body).toHaveLength(13);
    expect(many).toBe(few);
    // token, memberships, count, issues with notes, teams and users, members of the teams, tags
    expect(many).toBeLessThanOrEqual(7);
  });

  it('answers 401 without a token and 400 for a bad state', async () => {
    expect((await anonymous(app).get('/api/v1/my_issues')).status).toBe(401);
    expect((await member.client.get('/api/v1/my_issues', { query: { state: 'unread' } })).status).toBe(400);
  });
});
