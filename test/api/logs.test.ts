import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor;

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  ({ manager, member, outsider } = await makeScenario(app, { team: 'diary', usernames: { manager: 'lena', member: 'luis', outsider: 'lars', reader: 'lola' } }));
});
afterAll(async () => app?.close());

const summaries = (body: { type: string; action: string; title: string }[]) => body.map((entry) => `${entry.type}:${entry.action}:${entry.title}`);

describe('listLogs', () => {
  it('records every change in the same transaction and lists it newest first with its object, action and title', async () => {
    const created = await member.client.post('/api/v1/notes', { json: { note: { title: 'Journal', team: 'diary', slug: 'journal' } } });
    const note = await app.em().findOneOrFail(Note, created.body.id);
    const root = await makePage(app, note, member, { title: 'Root' });
    const child = await makePage(app, note, member, { title: 'Child' });
    expect((await member.client.patch(`/api/v1/diary/journal/${child.id}`, { json: { page: { parent: root.id } } })).status).toBe(200);
    const comment = await outsider.client.post('/api/v1/diary/journal/comments', { json: { comment: { comment: 'nice' } } });
    expect(comment.status).toBe(200);
    expect((await manager.client.delete(`/api/v1/diary/journal/${child.id}`)).status).toBe(204);

    const list = await member.client.get('/api/v1/logs', { query: { note_id: String(note.id) } });
    expect(list.status, list.text).toBe(200);
    expect(summaries(list.body)).toEqual([
      'page:delete:lena Name deleted the page "Child"',
      'comment:create:lars Name created a comment on "Journal"',
      'page:move:luis Name moved the page "Child"',
      'page:create:luis Name created the page "Child"',
      'page:create:luis Name created the page "Root"',
      'note:create:luis Name created the note "Journal"',
    ]);
    const [deleted, commented, moved] = list.body;
    expect(deleted).not.toHaveProperty('page');
    expect(deleted.note.id).toBe(note.id);
    expect(commented.comment).toMatchObject({ id: comment.body.id, type: 'note', note: { id: note.id } });
    expect(moved.page).toBeUndefined();
    const rootEntry = list.body[4];
    expect(rootEntry.page).toMatchObject({ id: root.id, title: 'Root', path: 'Root' });
    expect(rootEntry).toMatchObject({ user_id: member.user.id, user: { username: 'luis' }, time_ago: 'less than a minute ago', model: 'log' });
    expect(await app.em().count(Log, { note: note.id })).toBe(6);
  });

  it('lists only what the caller may read now: a note that became private disappears for outsiders', async () => {
    const note = await makeNote(app, 'diary', manager.user, { slug: 'open', title: 'Open' });
    await makePage(app, note, manager, { title: 'Visible' });
    const before = await outsider.client.get('/api/v1/logs', { query: { note_id: String(note.id) } });
    expect(summaries(before.body)).toEqual(['page:create:lena Name created the page "Visible"']);
    await app.em().nativeUpdate(Note, { id: note.id }, { isPrivate: true });
    expect((await outsider.client.get('/api/v1/logs', { query: { note_id: String(note.id) } })).body).toEqual([]);
    expect((await member.client.get('/api/v1/logs', { query: { note_id: String(note.id) } })).body).toHaveLength(1);
  });

  it('keeps a deleted note\'s entry readable to those who could read it, with what it was', async () => {
    const created = await manager.client.post('/api/v1/notes', { json: { note: { title: 'Doomed', team: 'diary', slug: 'doomed', is_private: true } } });
    expect((await manager.client.delete('/api/v1/diary/doomed')).status).toBe(204);
    const seen = await member.client.get('/api/v1/logs', { query: { note_id: String(created.body.id) } });
    expect(summaries(seen.body)).toEqual(['note:delete:lena Name deleted the note "Doomed"', 'note:create:lena Name created the note "Doomed"']);
    expect(seen.body[0]).not.toHaveProperty('note');
    expect(seen.body[1]).not.toHaveProperty('note');
    expect((await outsider.client.get('/api/v1/logs', { query: { note_id: String(created.body.id) } })).body).toEqual([]);
  });

  it('keeps the entries of what was inside a deleted note: for its team, and for everyone when it was public', async () => {
    const shown = await manager.client.post('/api/v1/notes', { json: { note: { title: 'Shown', team: 'diary', slug: 'shown' } } });
    const hidden = await manager.client.post('/api/v1/notes', { json: { note: { title: 'Hidden', team: 'diary', slug: 'hidden', is_private: true } } });
    for (const created of [shown, hidden]) {
      const note = await app.em().findOneOrFail(Note, created.body.id);
      await makePage(app, note, member, { title: `${note.title} page` });
      expect((await outsider.client.post(`/api/v1/diary/${note.slug}/comments`, { json: { comment: { comment: 'hi' } } })).status).toBe(note.isPrivate ? 404 : 200);
      expect((await manager.client.delete(`/api/v1/diary/${note.slug}`)).status).toBe(204);
    }
    const expected = (title: string, commented: boolean) => [
      `note:delete:lena Name deleted the note "${title}"`,
      ...(commented ? [`comment:create:lars Name created a comment on "${title}"`] : []),
      `page:create:luis Name created the page "${title} page"`,
      `note:create:lena Name created the note "${title}"`,
    ];
    const logsOf = (actor: Actor, id: number) => actor.client.get('/api/v1/logs', { query: { note_id: String(id) } });
    expect(summaries((await logsOf(member, shown.body.id)).body)).toEqual(expected('Shown', true));
    expect(summaries((await logsOf(outsider, shown.body.id)).body)).toEqual(expected('Shown', true));
    expect(summaries((await logsOf(member, hidden.body.id)).body)).toEqual(expected('Hidden', false));
    expect((await logsOf(outsider, hidden.body.id)).body).toEqual([]);
    const kept = await app.em().find(Log, { summary: { $contains: { note_id: hidden.body.id } } } as never);
    expect(kept.map((log) => [log.note, log.team?.id, log.summary?.is_private])).toEqual(Array(3).fill([null, expect.any(Number), true]));
  });

  it('filters by team (empty means every team), paginates, and records memberships', async () => {
    const other = await makeUser(app, 'lina');
    const team = await makeTeam(app, 'other-diary', [{ user: other.user, role: 'manager' }]);
    const added = await other.client.post('/api/v1/teams/other-diary/users', { form: 'username=lars&role=member' });
    expect(added.status, added.text).toBe(200);
    const theirs = await outsider.client.get('/api/v1/logs', { query: { team: 'other-diary' } });
    expect(theirs.body.map((entry: { type: string; action: string; team?: { id: number } }) => [entry.type, entry.action, entry.team?.id])).toEqual([['team', 'add_user', team.id]]);
    expect((await member.client.get('/api/v1/logs', { query: { team: 'other-diary' } })).body).toEqual([]);
    const all = await member.client.get('/api/v1/logs?team=&note_id=&per_page=2&page=2');
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(2);
    expect(Number(all.headers.get('x-total-count'))).toBeGreaterThan(4);
    expect((await member.client.get('/api/v1/logs', { query: { note_id: 'x' } })).status).toBe(400);
    expect((await anonymous(app).get('/api/v1/logs')).status).toBe(401);
  });

  it('costs the same number of queries for a few or many entries of mixed types', async () => {
    const user = await makeUser(app, 'logger');
    await makeTeam(app, 'logged', [{ user: user.user, role: 'manager' }]);
    const make = async (i: number) => {
      const created = await user.client.post('/api/v1/notes', { json: { note: { title: `L${i}`, team: 'logged', slug: `l${i}` } } });
      const note = await app.em().findOneOrFail(Note, created.body.id);
      await makePage(app, note, user, { title: `P${i}` });
      await user.client.post(`/api/v1/logged/l${i}/comments`, { json: { comment: { comment: 'x' } } });
    };
    await make(0);
    await user.client.get('/api/v1/logs', { query: { team: 'logged' } });
    const small = await app.countQueries(() => user.client.get('/api/v1/logs', { query: { team: 'logged' } }));
    for (let i = 1; i < 8; i += 1) await make(i);
    let body: unknown[] = [];
    const large = await app.countQueries(async () => (body = (await user.client.get('/api/v1/logs', { query: { team: 'logged' } })).body));
    expect(body).toHaveLength(24);
    expect(large).toBe(small);
  });
});
