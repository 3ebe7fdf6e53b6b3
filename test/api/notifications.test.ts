import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { listLogs, listNotifications, markNotificationsRead, toggleNotification, toggleNotificationViaPut } from '../../generated/client/index.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { timeAgo } from '../../src/modules/notifications/time-ago.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, makePageComment, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor, japanese: Actor;

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  ({ manager, member, outsider, reader } = await makeScenario(app, { team: 'bell', usernames: { manager: 'hana', member: 'hugo', outsider: 'ivan', reader: 'iris' } }));
  japanese = await makeUser(app, 'kenji', { lang: 'ja' });
  await makeTeam(app, 'bell-jp', [{ user: manager.user, role: 'manager' }, { user: japanese.user, role: 'member' }]);
});
afterAll(async () => app?.close());

const eventsOf = async (user: Actor) =>
  (await user.client.get('/api/v1/notifications', { query: { state: 'all' } })).body.map((item: { event: string; type: string }) => `${item.event}:${item.type}`);

describe('notifications of every kind reach the right users, never the actor', () => {
  it('new_note, mention and comment on a page, mention and comment on a note, assign, mention and comment on an issue', async () => {
    const created = await member.client.post('/api/v1/notes', { json: { note: { title: 'Plans', team: 'bell', slug: 'plans' } } });
    expect(created.status).toBe(200);
    const note = await app.em().findOneOrFail(Note, created.body.id);
    const page = await makePage(app, note, member, { title: 'Week 1' });
    await makePageComment(page, outsider, { comment: 'hi', mentions: ['hana'] });
    const onNote = await outsider.client.post('/api/v1/bell/plans/comments', { json: { comment: { comment: 'and here' }, mentions: ['iris'] } });
    expect(onNote.status).toBe(200);
    expect(await eventsOf(manager)).toEqual(['mention:page', 'new_note:note']);
    expect(await eventsOf(member)).toEqual(['comment:note', 'comment:page']);
    expect(await eventsOf(reader)).toEqual(['mention:note', 'new_note:note']);
    expect(await eventsOf(outsider)).toEqual([]);
    const [mention] = (await manager.client.get('/api/v1/notifications')).body;
    expect(mention).toMatchObject({
      event: 'mention', type: 'page', is_read: false, from_user: { username: 'ivan' }, note: { id: note.id, title: 'Plans' },
      page: { id: page.id, title: 'Week 1' }, title: 'ivan Name mentioned you in a comment on "Week 1"', time_ago: 'less than a minute ago', model: 'notification',
    });

    // an issue the member opens and assigns to the reader; the outsider comments on it mentioning the manager
    const issue = await member.client.post('/api/v1/bell/plans/issues', { json: { issue: { title: 'Book a room', to_user: 'iris' } } });
    expect(issue.status, issue.text).toBe(200);
    const self = await member.client.patch('/api/v1/bell/plans/issues/1', { json: { issue: { to_user: 'hugo' } } });
    expect(self.status).toBe(200);
    const onIssue = await outsider.client.post('/api/v1/bell/plans/issues/1/comments', { json: { comment: { comment: 'done?' }, mentions: ['hana'] } });
    expect(onIssue.status).toBe(200);
    expect(await eventsOf(manager)).toEqual(['mention:issue', 'mention:page', 'new_note:note']);
    expect(await eventsOf(member)).toEqual(['comment:issue', 'comment:note', 'comment:page']);
    expect(await eventsOf(reader)).toEqual(['assign:issue', 'mention:note', 'new_note:note']);
    expect(await eventsOf(outsider)).toEqual([]);
    const [assigned] = (await reader.client.get('/api/v1/notifications')).body;
    expect(assigned).toMatchObject({
      event: 'assign', type: 'issue', from_user: { username: 'hugo' }, issue: { id: issue.body.id, label: 'Issue #1 Book a room' },
      title: 'hugo Name assigned you "Issue #1 Book a room"',
    });
  });
});

describe('listNotifications', () => {
  it('filters by state and team, newest first, paginated; the title and time_ago in the reader\'s language', async () => {
    const other = await makeNote(app, 'bell-jp', manager.user, { slug: 'jp', title: '計画' });
    await manager.client.post('/api/v1/bell-jp/jp/comments', { json: { comment: { comment: 'よろしく' }, mentions: ['kenji'] } });
    const list = await japanese.client.get('/api/v1/notifications', { query: { team: 'bell-jp' } });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ event: 'mention', type: 'note', note: { id: other.id }, time_ago: '1分以内' });
    expect(list.body[0].title).toContain('メンション');
    expect((await japanese.client.get('/api/v1/notifications', { query: { team: 'bell' } })).body).toEqual([]);
    expect((await japanese.client.get('/api/v1/notifications?team=&state=')).body).toHaveLength(1);
    const paged = await reader.client.get('/api/v1/notifications', { query: { per_page: '1', page: '2' } });
    expect(paged.body).toHaveLength(1);
    expect(paged.headers.get('x-total-count')).toBe('3');
    expect(paged.headers.get('link')).toContain('rel="prev"');
    expect((await reader.client.get('/api/v1/notifications', { query: { state: 'read' } })).body).toEqual([]);
    expect((await reader.client.get('/api/v1/notifications', { query: { state: 'bogus' } })).status).toBe(400);
    expect((await anonymous(app).get('/api/v1/notifications')).status).toBe(401);
  });

  it('hides notifications about a note the recipient may no longer read', async () => {
    const secret = await makeNote(app, 'bell', manager.user, { slug: 'later-private', title: 'Later private' });
    await manager.client.post('/api/v1/bell/later-private/comments', { json: { comment: { comment: 'x' }, mentions: ['ivan'] } });
    expect(await eventsOf(outsider)).toEqual(['mention:note']);
    const em = app.em();
    await em.nativeUpdate(Note, { id: secret.id }, { isPrivate: true });
    expect(await eventsOf(outsider)).toEqual([]);
  });

  it('costs the same number of queries for 2 or 20 notifications of mixed types', async () => {
    const user = await makeUser(app, 'counted');
    await makeTeam(app, 'counting', [{ user: user.user, role: 'member' }, { user: manager.user, role: 'manager' }]);
    const make = async (i: number) => {
      const note = await makeNote(app, 'counting', manager.user, { slug: `n${i}`, title: `N${i}` });
      const page = await makePage(app, note, user, { title: `P${i}` });
      await makePageComment(page, manager, { comment: 'c' });
      await manager.client.post(`/api/v1/counting/n${i}/comments`, { json: { comment: { comment: 'd' }, mentions: ['counted'] } });
    };
    await make(0);
    // the token's last use and the team's members (kept in memory) are read outside the measurement
    await user.client.get('/api/v1/notifications');
    const small = await app.countQueries(() => user.client.get('/api/v1/notifications'));
    for (let i = 1; i < 10; i += 1) await make(i);
    let body: unknown[] = [];
    const large = await app.countQueries(async () => (body = (await user.client.get('/api/v1/notifications')).body));
    expect(body).toHaveLength(20);
    expect(large).toBe(small);
  });
});

describe('toggleNotification and toggleNotificationViaPut', () => {
  it('toggles read and unread with PATCH or PUT, stored; another user\'s notification is 404', async () => {
    const [first] = (await member.client.get('/api/v1/notifications')).body;
    const read = await member.client.patch(`/api/v1/notifications/${first.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ id: first.id, is_read: true, model: 'notification' });
    expect((await app.em().findOneOrFail(Notification, first.id)).isRead).toBe(true);
    const unread = await member.client.put(`/api/v1/notifications/${first.id}.json`, { form: '' });
    expect(unread.body.is_read).toBe(false);
    expect((await app.em().findOneOrFail(Notification, first.id)).isRead).toBe(false);
    expect((await outsider.client.patch(`/api/v1/notifications/${first.id}`)).status).toBe(404);
    expect((await member.client.patch('/api/v1/notifications/2147483647')).status).toBe(404);
    expect((await member.client.patch('/api/v1/notifications/abc')).status).toBe(404);
    expect((await anonymous(app).patch(`/api/v1/notifications/${first.id}`)).status).toBe(401);
    expect((await reader.client.patch(`/api/v1/notifications/${first.id}`)).status).toBe(403);
    expect((await app.em().findOneOrFail(Notification, first.id)).isRead).toBe(false);
  });
});

describe('markNotificationsRead', () => {
  it('marks every unread notification read, or those of one team, and says how many', async () => {
    const unread = (await manager.client.get('/api/v1/notifications')).body as { note: { team: { name: string } } }[];
    const inJp = unread.filter((item) => item.note.team.name === 'bell-jp').length;
    const team = await manager.client.post('/api/v1/notifications/read', { form: 'team=bell-jp' });
    expect(team.status, team.text).toBe(200);
    expect(team.body).toEqual({ marked: inJp, model: 'notifications_read' });
    const all = await manager.client.post('/api/v1/notifications/read');
    expect(all.body.marked).toBe(unread.length - inJp);
    expect(await app.em().count(Notification, { user: manager.user.id, isRead: false })).toBe(0);
    expect((await reader.client.post('/api/v1/notifications/read')).status).toBe(403);
    expect((await anonymous(app).post('/api/v1/notifications/read')).status).toBe(401);
  });
});

describe('time_ago', () => {
  it.each([
    [10, 'less than a minute ago', '1分以内'],
    [3 * 60, '3 minutes ago', '3 分前'],
    [60 * 60, 'about 1 hour ago', '約1 時間前'],
    [5 * 3600, 'about 5 hours ago', '約5 時間前'],
    [3 * 86400, '3 days ago', '3 日前'],
    [45 * 86400, 'about 1 month ago', '約1 か月前'],
    [800 * 86400, 'about 2 years ago', '約2 年前'],
    [1000 * 86400, 'over 2 years ago', '2 年以上前'],
  ])('%i seconds', (seconds, en, ja) => {
    const now = new Date('2024-06-01T00:00:00Z');
    const then = new Date(now.getTime() - seconds * 1000);
    expect(timeAgo(then, now, 'en')).toBe(en);
    expect(timeAgo(then, now, 'ja')).toBe(ja);
  });
});

describe('the notification and log operations through the generated client', () => {
  it('lists, toggles (PATCH and PUT), marks all read, and lists the log', async () => {
    const client = createClient({ baseUrl: app.baseUrl, auth: () => member.token });
    const note = await makeNote(app, 'bell', manager.user, { slug: 'sdk', title: 'SDK' });
    await outsider.client.post('/api/v1/bell/sdk/comments', { json: { comment: { comment: 'ping' }, mentions: ['hugo'] } });
    const listed = await listNotifications({ client, query: { state: 'unread' }, throwOnError: true });
    const mention = listed.data.find((item) => item.note.id === note.id && item.event === 'mention')!;
    expect(mention).toMatchObject({ type: 'note', is_read: false });
    const read = await toggleNotification({ client, path: { id: mention.id }, throwOnError: true });
    expect(read.data.is_read).toBe(true);
    const unread = await toggleNotificationViaPut({ client, path: { id: mention.id }, throwOnError: true });
    expect(unread.data.is_read).toBe(false);
    const marked = await markNotificationsRead({ client, throwOnError: true });
    expect(marked.data.marked).toBeGreaterThanOrEqual(1);
    expect(await app.em().count(Notification, { user: member.user.id, isRead: false })).toBe(0);
    const logs = await listLogs({ client, query: { note_id: note.id }, throwOnError: true });
    expect(logs.data.map((entry) => `${entry.type}:${entry.action}`)).toEqual(['comment:create']);
  });
});
