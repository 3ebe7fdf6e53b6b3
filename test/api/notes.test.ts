import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  app = await startTestApp();
  // the tests name the team and the actors' own teams in paths
  ({ manager, member, outsider, reader } = await makeScenario(app, { team: 'writers', usernames: { manager: 'nora', member: 'ned', outsider: 'olga', reader: 'ray' } }));
});
afterAll(async () => app?.close());

const stored = (id: number) => app.em().findOne(Note, id, { populate: ['team'] });

describe('createNote', () => {
  it('creates a note with a slug; the answer has user_id and no slug', async () => {
    const answer = await member.client.post('/api/v1/notes', {
      json: { note: { title: 'Handbook', team: 'writers', slug: 'handbook', description: 'Line one\nLine <b>two</b>', is_private: true } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      title: 'Handbook', name: 'handbook', is_private: true, user_id: member.user.id, format: 'html', share: 'none',
      is_time_track: false, can_manage: false, can_pull: false, can_request: false, model: 'note',
      html_url: `${app.baseUrl}/writers/handbook`, description_html: 'Line one<br />\nLine <b>two</b>',
    });
    expect(answer.body).not.toHaveProperty('slug');
    expect(answer.body).not.toHaveProperty('forked');
    expect(answer.body.team).toMatchObject({ name: 'writers', role: 'member' });
    expect(answer.body.team.managers.map((user: { id: number }) => user.id)).toEqual([manager.user.id]);
    const note = await stored(answer.body.id);
    expect(note).toMatchObject({ slug: 'handbook', title: 'Handbook', isPrivate: true });
    expect(note!.user.id).toBe(member.user.id);
    // the rest of the team hears of it; the author does not
    const notified = await app.em().find(Notification, { note: note!.id }, { orderBy: { user: 'asc' } });
    expect(notified.map((row) => [row.user.id, row.fromUser.id, row.event, row.type])).toEqual(
      [manager.user.id, reader.user.id].sort((a, b) => a - b).map((id) => [id, member.user.id, 'new_note', 'note']),
    );
  });

  it('without a slug, uses the id as name and in URLs', async () => {
    const answer = await manager.client.post('/api/v1/notes', { form: { 'note[title]': 'No slug', 'note[team]': 'writers' } });
    expect(answer.status).toBe(200);
    expect(answer.body.name).toBe(String(answer.body.id));
    expect(answer.body.html_url).toBe(`${app.baseUrl}/writers/${answer.body.id}`);
    expect(answer.body.can_manage).toBe(true);
    expect((await manager.client.get(`/api/v1/writers/${answer.body.id}`)).status).toBe(200);
  });

  it('renders description_html safely', async () => {
    const answer = await manager.client.post('/api/v1/notes', {
      json: { note: { title: 'XSS', team: 'writers', description: '<script>alert(1)</script><a href="javascript:alert(1)" onclick="x()">a</a><img src=x onerror=alert(1)><a href="https://ok.example">ok</a>' } },
    });
    expect(answer.status).toBe(200);
    const html: string = answer.body.description_html;
    expect(html).not.toMatch(/<script|javascript:|onclick|onerror/i);
    expect(html).toContain('href="https://ok.example"');
  });

  it('answers 409 for a slug already used in the team, and 400 for a malformed slug', async () => {
    await makeNote(app, 'writers', manager.user, { slug: 'taken' });
    const clash = await member.client.post('/api/v1/notes', { json: { note: { title: 'Again', team: 'writers', slug: 'taken' } } });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe('name_taken');
    for (const slug of ['12345', 'Upper', 'has space', 'x'.repeat(65)]) {
      expect((await member.client.post('/api/v1/notes', { json: { note: { title: 'Bad slug', team: 'writers', slug } } })).status, slug).toBe(400);
    }
    expect(await app.em().count(Note, { title: { $in: ['Again', 'Bad slug'] } })).toBe(0);
  });

  it('answers 400 for a missing or too long title, 422 for an unknown team', async () => {
    expect((await member.client.post('/api/v1/notes', { json: { note: { team: 'writers' } } })).status).toBe(400);
    expect((await member.client.post('/api/v1/notes', { json: { note: { title: '', team: 'writers' } } })).status).toBe(400);
    expect((await member.client.post('/api/v1/notes', { json: { note: { title: 'x'.repeat(256), team: 'writers' } } })).status).toBe(400);
    const unknown = await member.client.post('/api/v1/notes', { json: { note: { title: 'Lost', team: 'no-such-team' } } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].pointer).toBe('/note/team');
  });

  it('answers 403 outside the team and to a read-only token, 401 without a token', async () => {
    expect((await outsider.client.post('/api/v1/notes', { json: { note: { title: 'Intruder', team: 'writers' } } })).status).toBe(403);
    expect((await reader.client.post('/api/v1/notes', { json: { note: { title: 'Reader', team: 'writers' } } })).status).toBe(403);
    expect((await anonymous(app).post('/api/v1/notes', { json: { note: { title: 'Nobody', team: 'writers' } } })).status).toBe(401);
    expect(await app.em().count(Note, { title: { $in: ['Intruder', 'Reader', 'Nobody'] } })).toBe(0);
  });
});

describe('getNote', () => {
  it('shows a note by slug and by id, with slug and the embedded team', async () => {
    const note = await makeNote(app, 'writers', manager.user, { slug: 'guide', title: 'Guide' });
    for (const path of ['/api/v1/writers/guide', `/api/v1/writers/${note.id}`, '/api/v1/WRITERS/guide.json']) {
      const answer = await member.client.get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.body).toMatchObject({ id: note.id, slug: 'guide', name: 'guide', can_manage: false });
      expect(answer.body).not.toHaveProperty('user_id');
      expect(answer.body).not.toHaveProperty('pulled_at');
    }
    const html = await member.client.get('/writers/guide');
    expect(html.status).toBe(200);
    expect(html.text).toContain('Guide');
  });

  it('shows a public note to anyone signed in, without role', async () => {
    await makeNote(app, 'writers', manager.user, { slug: 'public-one' });
    const answer = await outsider.client.get('/api/v1/writers/public-one');
    expect(answer.status).toBe(200);
    expect(answer.body.team).not.toHaveProperty('role');
    expect(answer.body.can_manage).toBe(false);
  });

  it('shows pulled_at and the original on a fork', async () => {
    const original = await makeNote(app, 'writers', manager.user, { slug: 'origin', title: 'Origin' });
    const fork = await makeNote(app, 'olga', outsider.user, { slug: 'copy', title: 'Copy of Origin (writers)', forkedFrom: original });
    const answer = await outsider.client.get('/api/v1/olga/copy');
    expect(answer.status).toBe(200);
    expect(answer.body.forked).toMatchObject({ id: original.id, title: 'Origin', slug: 'origin' });
    expect(answer.body.pulled_at).toBeNull();
    expect(answer.body.can_request).toBe(true);
    expect(answer.body.can_pull).toBe(false);
    expect(fork.id).toBe(answer.body.id);
  });

  it('answers 404 for another team\'s private note, an unknown note or team, and 401 without a token', async () => {
    await makeNote(app, 'writers', manager.user, { slug: 'secret', isPrivate: true });
    const hidden = await outsider.client.get('/api/v1/writers/secret');
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe('not_found');
    expect((await member.client.get('/api/v1/writers/secret')).status).toBe(200);
    expect((await member.client.get('/api/v1/writers/no-such-note')).status).toBe(404);
    expect((await member.client.get('/api/v1/writers/999999999')).status).toBe(404);
    expect((await member.client.get('/api/v1/nobody-team/secret')).status).toBe(404);
    expect((await outsider.client.get('/writers/secret')).status).toBe(404);
    expect((await anonymous(app).get('/api/v1/writers/secret')).status).toBe(401);
  });
});

describe('listNotes', () => {
  it('lists notes of the caller\'s teams, private ones too, filtered by type and team', async () => {
    const isolated = await makeUser(app, 'lister');
    const team = await makeTeam(app, 'listing', [{ user: isolated.user, role: 'member' }]);
    const open = await makeNote(app, team, isolated.user, { title: 'open' });
    const closed = await makeNote(app, team, isolated.user, { title: 'closed', isPrivate: true });
    const own = await makeNote(app, 'lister', isolated.user, { title: 'own' });
    const forked = await makeNote(app, 'lister', isolated.user, { title: 'forked', forkedFrom: open });
    await makeNote(app, 'writers', manager.user, { title: 'elsewhere' });
    const ids = async (query: Record<string, string> = {}) =>
      (await isolated.client.get('/api/v1/notes', { query })).body.map((note: { id: number }) => note.id);
    // most recently updated first
    expect(await ids()).toEqual([forked.id, own.id, closed.id, open.id]);
    expect(await ids({ type: 'private' })).toEqual([closed.id]);
    expect(await ids({ type: 'public' })).toEqual([forked.id, own.id, open.id]);
    expect(await ids({ type: 'fork' })).toEqual([forked.id]);
    expect(await ids({ team: 'listing' })).toEqual([closed.id, open.id]);
    expect(await ids({ team: 'writers' })).toEqual([]);
    expect(await ids({ team: 'no-such-team' })).toEqual([]);
    expect((await isolated.client.get('/api/v1/notes', { query: { type: 'weird' } })).status).toBe(400);
  });

  it('answers 401 without a token', async () => {
    expect((await anonymous(app).get('/api/v1/notes')).status).toBe(401);
  });
});

describe('updateNote', () => {
  it('updates title, description, privacy and slug; the answer has user_id, pulled_at and forked', async () => {
    const note = await makeNote(app, 'writers', manager.user, { slug: 'draft', title: 'Draft' });
    const answer = await member.client.put('/api/v1/writers/draft', {
      json: { note: { title: 'Final', team: 'writers', slug: 'final', description: 'Done', is_private: true } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: note.id, title: 'Final', name: 'final', is_private: true, user_id: manager.user.id, pulled_at: null, forked: null });
    expect(answer.body).not.toHaveProperty('slug');
    expect(await stored(note.id)).toMatchObject({ title: 'Final', slug: 'final', description: 'Done', isPrivate: true });
  });

  it('accepts PATCH and a legacy form with 1/0 booleans, and clears the slug with an empty value', async () => {
    const note = await makeNote(app, 'writers', manager.user, { slug: 'formy' });
    const answer = await member.client.patch('/api/v1/writers/formy.json', {
      form: 'note%5Btitle%5D=Formed&note%5Bteam%5D=writers&note%5Bis_private%5D=1&note%5Bslug%5D',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.name).toBe(String(note.id));
    expect(await stored(note.id)).toMatchObject({ title: 'Formed', isPrivate: true, slug: null });
    await member.client.patch(`/api/v1/writers/${note.id}`, { form: { 'note[title]': 'Formed', 'note[team]': 'writers', 'note[is_private]': '0' } });
    expect((await stored(note.id))!.isPrivate).toBe(false);
  });

  it('moves a note to another team when a manager asks', async () => {
    const note = await makeNote(app, 'writers', manager.user, { slug: 'mover' });
    const denied = await member.client.put('/api/v1/writers/mover', { json: { note: { title: 'Mover', team: 'ned' } } });
    expect(denied.status).toBe(403);
    const moved = await manager.client.put('/api/v1/writers/mover', { json: { note: { title: 'Mover', team: 'nora' } } });
    expect(moved.status).toBe(200);
    expect(moved.body.team.name).toBe('nora');
    expect((await stored(note.id))!.team.name).toBe('nora');
  });

  it('answers 403 outside the team, 404 for a private note, 400/409 for bad input, and changes nothing', async () => {
    const note = await makeNote(app, 'writers', manager.user, { slug: 'steady', title: 'Steady' });
    await makeNote(app, 'writers', manager.user, { slug: 'other' });
    await makeNote(app, 'writers', manager.user, { slug: 'hushed', isPrivate: true });
    expect((await outsider.client.put('/api/v1/writers/steady', { json: { note: { title: 'Hijack', team: 'writers' } } })).status).toBe(403);
    expect((await outsider.client.put('/api/v1/writers/hushed', { json: { note: { title: 'Hijack', team: 'writers' } } })).status).toBe(404);
    expect((await member.client.put('/api/v1/writers/steady', { json: { note: { team: 'writers' } } })).status).toBe(400);
    expect((await member.client.put('/api/v1/writers/steady', { json: { note: { title: 'X', team: 'writers', bogus: 1 } } })).status).toBe(400);
    expect((await member.client.put('/api/v1/writers/steady', { json: { note: { title: 'X', team: 'writers', slug: 'other' } } })).status).toBe(409);
    expect((await member.client.put('/api/v1/writers/steady', { json: { note: { title: 'X', team: 'ghost-team' } } })).status).toBe(422);
    expect((await anonymous(app).put('/api/v1/writers/steady', { json: { note: { title: 'X', team: 'writers' } } })).status).toBe(401);
    expect(await stored(note.id)).toMatchObject({ title: 'Steady', slug: 'steady' });
  });
});

describe('deleteNote', () => {
  it('lets a manager delete a note', async () => {
    const note = await makeNote(app, 'writers', manager.user, { slug: 'gone' });
    const answer = await manager.client.delete('/api/v1/writers/gone');
    expect(answer.status).toBe(204);
    expect(await stored(note.id)).toBeNull();
  });

  it('answers 403 to a member, 404 for another team\'s private note, 401 without a token', async () => {
    const note = await makeNote(app, 'writers', manager.user, { slug: 'kept' });
    await makeNote(app, 'writers', manager.user, { slug: 'kept-private', isPrivate: true });
    const denied = await member.client.delete('/api/v1/writers/kept');
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
    expect((await outsider.client.delete('/api/v1/writers/kept-private')).status).toBe(404);
    expect((await anonymous(app).delete('/api/v1/writers/kept')).status).toBe(401);
    expect(await stored(note.id)).not.toBeNull();
  });
});
