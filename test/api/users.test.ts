import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makeTeam, makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let alice: Actor;
let bob: Actor;

beforeAll(async () => {
  app = await startTestApp();
  alice = await makeUser(app, 'alice');
  bob = await makeUser(app, 'bob', { lang: 'ja' });
});
afterAll(async () => app?.close());

describe('getMe', () => {
  it('returns the signed-in user with absolute, resolving URLs', async () => {
    const answer = await alice.client.get('/api/v1/me');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.body).toMatchObject({ id: alice.user.id, username: 'alice', name: 'alice Name', model: 'user', lang: { code: 'en', model: 'lang' } });
    expect(answer.body).not.toHaveProperty('options');
    expect(answer.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    const avatar = await fetch(answer.body.avatar_url);
    expect(avatar.status).toBe(200);
    expect(avatar.headers.get('content-type')).toContain('image/svg+xml');
    const page = await alice.client.get(answer.body.html_url.replace(app.baseUrl, ''));
    expect(page.status).toBe(200);
    expect(page.text).toContain('alice Name');
  });

  it('shows the language of a Japanese user', async () => {
    expect((await bob.client.get('/api/v1/me')).body.lang).toEqual({ code: 'ja', model: 'lang' });
  });

  it('shows options only for users who set them', async () => {
    const em = app.em();
    const carol = await makeUser(app, 'carol');
    await em.execute(`update users set options = '{"advanced_menu": true}' where id = ?`, [carol.user.id]);
    expect((await carol.client.get('/api/v1/me')).body.options).toEqual({ advanced_menu: true });
  });

  it('answers 401 with WWW-Authenticate without a token', async () => {
    const answer = await anonymous(app).get('/api/v1/me');
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(answer.body.request_id).toBe(answer.headers.get('x-request-id'));
  });

  it('answers 401 for a wrong or malformed token', async () => {
    const wrong = await anonymous(app).get('/api/v1/me', { headers: { Authorization: 'Bearer nt_nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('invalid_token');
    const basic = await anonymous(app).get('/api/v1/me', { headers: { Authorization: 'Basic YWxpY2U6eA==' } });
    expect(basic.status).toBe(401);
  });

  it('answers 401 for an expired token', async () => {
    const em = app.em();
    const dave = await makeUser(app, 'dave');
    await em.execute(`update tokens set expires_at = now() - interval '1 minute' where user_id = ?`, [dave.user.id]);
    const answer = await dave.client.get('/api/v1/me');
    expect(answer.status).toBe(401);
    expect(answer.body.detail).toContain('expired');
  });

  it('accepts the token as ?access_token= and with a .json suffix', async () => {
    const answer = await alice.client.get('/api/v1/me.json', { tokenInQuery: true });
    expect(answer.status).toBe(200);
    expect(answer.body.username).toBe('alice');
  });
});

describe('listUsers', () => {
  it('lists every user by id, paginated with Link and X-Total-Count', async () => {
    const all = await alice.client.get('/api/v1/users');
    expect(all.status).toBe(200);
    const ids = all.body.map((user: { id: number }) => user.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    expect(ids).toContain(bob.user.id);
    expect(Number(all.headers.get('x-total-count'))).toBe(all.body.length);
    const first = await alice.client.get('/api/v1/users', { query: { per_page: '1', page: '2' } });
    expect(first.body).toHaveLength(1);
    expect(first.body[0].id).toBe(ids[1]);
    const link = first.headers.get('link') ?? '';
    expect(link).toContain('rel="next"');
    expect(link).toContain('rel="prev"');
    expect(link).toContain(`${app.baseUrl}/api/v1/users?page=3&per_page=1`);
    expect(link).not.toContain('access_token');
  });

  it('rejects a per_page over 100 and a page below 1 with 400', async () => {
    expect((await alice.client.get('/api/v1/users', { query: { per_page: '101' } })).status).toBe(400);
    const zero = await alice.client.get('/api/v1/users', { query: { page: '0' } });
    expect(zero.status).toBe(400);
    expect(zero.body.code).toBe('validation_failed');
  });

  it('answers 401 without a token', async () => {
    expect((await anonymous(app).get('/api/v1/users')).status).toBe(401);
  });
});

describe('getUser', () => {
  it('finds a user by username, case-insensitively', async () => {
    const answer = await alice.client.get('/api/v1/users/BOB');
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBe(bob.user.id);
  });

  it('answers 404 for an unknown user and 401 without a token', async () => {
    expect((await alice.client.get('/api/v1/users/nobody-here')).status).toBe(404);
    expect((await anonymous(app).get('/api/v1/users/bob')).status).toBe(401);
  });
});

describe('listUserNotes', () => {
  it('lists the notes of the user\'s teams that the caller may read', async () => {
    const shared = await makeTeam(app, 'shared-with-bob', [{ user: bob.user, role: 'manager' }, { user: alice.user, role: 'member' }]);
    const open = await makeNote(app, 'bob', bob.user, { title: 'Bob public' });
    const secret = await makeNote(app, 'bob', bob.user, { title: 'Bob private', isPrivate: true });
    const sharedSecret = await makeNote(app, shared, bob.user, { title: 'Shared private', isPrivate: true });
    const answer = await alice.client.get('/api/v1/users/bob/notes');
    expect(answer.status).toBe(200);
    const ids = answer.body.map((note: { id: number }) => note.id);
    expect(ids).toContain(open.id);
    expect(ids).toContain(sharedSecret.id);
    expect(ids).not.toContain(secret.id);
    const own = await bob.client.get('/api/v1/users/bob/notes');
    expect(own.body.map((note: { id: number }) => note.id)).toContain(secret.id);
  });

  it('answers 404 for an unknown user and 401 without a token', async () => {
    expect((await alice.client.get('/api/v1/users/nobody-here/notes')).status).toBe(404);
    expect((await anonymous(app).get('/api/v1/users/bob/notes')).status).toBe(401);
  });
});

describe('listUsernames', () => {
  it('lists usernames as strings', async () => {
    const answer = await alice.client.get('/api/v1/usernames');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(expect.arrayContaining(['alice', 'bob']));
    expect(answer.body.every((name: unknown) => typeof name === 'string')).toBe(true);
  });

  it('answers 401 without a token', async () => {
    expect((await anonymous(app).get('/api/v1/usernames')).status).toBe(401);
  });
});
