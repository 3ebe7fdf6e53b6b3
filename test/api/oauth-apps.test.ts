// The caller's apps, authorizations and tokens: createApp, listApps, deleteApp, listAuthorizations,
// revokeAuthorization, listTokens, revokeToken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Token } from '../../src/modules/auth/token.entity.ts';
import { OAuthClient, OAuthGrant } from '../../src/modules/oauth/oauth.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { anonymous, makeUser, type Actor } from '../support/factories.ts';
import { authorizePath, CookieBrowser, givePassword, pkcePair, tokenRequest } from '../support/oauth.ts';

let app: TestApp;
let alice: Actor;
let bob: Actor;
let reader: Actor;
let password: string;

beforeAll(async () => {
  app = await startTestApp();
  alice = await makeUser(app, 'alice');
  bob = await makeUser(app, 'bob');
  reader = await makeUser(app, 'reader', { scope: 'read' });
  password = await givePassword(app, alice.user);
});
afterAll(async () => app?.close());

/** alice authorizes the app in a browser and exchanges the code: her tokens for it. */
async function authorizeAndExchange(clientId: string, redirectUri: string, secret?: string) {
  const { verifier, challenge } = pkcePair();
  const browser = new CookieBrowser(app.baseUrl);
  let answer = await browser.signIn(authorizePath({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256' }), 'alice', password);
  if (answer.status === 200) answer = await browser.decide(answer, 'allow');
  const code = new URL(answer.location!).searchParams.get('code')!;
  const token = await tokenRequest(app, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier, ...(secret ? { client_secret: secret } : {}) });
  expect(token.status, token.text).toBe(200);
  return token.body as { access_token: string; refresh_token: string };
}

describe('createApp', () => {
  it('registers a confidential app and shows its secret once (JSON)', async () => {
    const answer = await alice.client.post('/api/v1/me/apps', { json: { app: { name: 'My Site', redirect_uris: ['https://my.example/cb'] } } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ model: 'app', name: 'My Site', confidential: true, first_party: false, redirect_uris: ['https://my.example/cb'] });
    expect(answer.body.client_secret).toMatch(/^ns_/);
    const stored = await app.em().findOneOrFail(OAuthClient, { clientId: answer.body.client_id }, { populate: ['owner'] });
    expect(stored.owner?.id).toBe(alice.user.id);
    expect(stored.secretHash).not.toContain(answer.body.client_secret);
    // the app works: consent page (never first-party), code, token with the secret
    const tokens = await authorizeAndExchange(answer.body.client_id, 'https://my.example/cb', answer.body.client_secret);
    expect((await new ApiClient(app.baseUrl, tokens.access_token).get('/api/v1/me')).body.username).toBe('alice');
    const passwordGrant = await tokenRequest(app, { grant_type: 'password', login: 'alice', password, client_id: answer.body.client_id, client_secret: answer.body.client_secret });
    expect(passwordGrant.body.error).toBe('unauthorized_client');
  });

  it('registers a public app from a form, with no secret', async () => {
    const answer = await alice.client.post('/api/v1/me/apps', { form: 'app%5Bname%5D=Pocket+Notes&app%5Bredirect_uris%5D%5B%5D=pocketnotes%3A%2F%2Fcb&app%5Bconfidential%5D=0' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ confidential: false, client_secret: null, redirect_uris: ['pocketnotes://cb'] });
  });

  it('refuses unsafe redirect URIs with 422, bad input with 400, a read token with 403, no token with 401', async () => {
    const unsafe = await alice.client.post('/api/v1/me/apps', { json: { app: { name: 'X', redirect_uris: ['https://ok.example/cb', 'javascript:alert(1)'] } } });
    expect(unsafe.status).toBe(422);
    expect(unsafe.body.code).toBe('invalid_redirect_uri');
    expect(unsafe.body.errors[0].pointer).toBe('/app/redirect_uris/1');
    expect((await alice.client.post('/api/v1/me/apps', { json: { app: { name: 'X', redirect_uris: ['https://a.example/cb#frag'] } } })).status).toBe(422);
    expect((await alice.client.post('/api/v1/me/apps', { json: { app: { name: '', redirect_uris: ['https://a.example/cb'] } } })).status).toBe(400);
    expect((await alice.client.post('/api/v1/me/apps', { json: { app: { name: 'X', redirect_uris: [] } } })).status).toBe(400);
    expect((await reader.client.post('/api/v1/me/apps', { json: { app: { name: 'X', redirect_uris: ['https://a.example/cb'] } } })).status).toBe(403);
    expect((await anonymous(app).post('/api/v1/me/apps', { json: { app: { name: 'X', redirect_uris: ['https://a.example/cb'] } } })).status).toBe(401);
  });
});

describe('listApps and deleteApp', () => {
  it('lists the caller’s own apps only, and deletes one with every token it held', async () => {
    const created = await bob.client.post('/api/v1/me/apps', { json: { app: { name: 'Bob App', redirect_uris: ['https://bob.example/cb'], confidential: false } } });
    const list = await bob.client.get('/api/v1/me/apps');
    expect(list.status).toBe(200);
    expect(list.body.map((item: { name: string }) => item.name)).toEqual(['Bob App']);
    expect(list.headers.get('x-total-count')).toBe('1');
    expect(list.body[0]).not.toHaveProperty('client_secret');
    // alice uses bob's app, then bob deletes it: alice's token for it stops working
    const tokens = await authorizeAndExchange(created.body.client_id, 'https://bob.example/cb');
    const aliceViaApp = new ApiClient(app.baseUrl, tokens.access_token);
    expect((await aliceViaApp.get('/api/v1/me')).status).toBe(200);
    expect((await alice.client.request('DELETE', `/api/v1/me/apps/${created.body.client_id}`)).status).toBe(404);
    expect((await bob.client.request('DELETE', `/api/v1/me/apps/${created.body.client_id}`)).status).toBe(204);
    expect((await aliceViaApp.get('/api/v1/me')).status).toBe(401);
    expect(await app.em().count(OAuthClient, { clientId: created.body.client_id })).toBe(0);
  });
});

describe('listAuthorizations and revokeAuthorization', () => {
  it('lists the apps the caller authorized, and revoking one ends its tokens at once', async () => {
    const created = await bob.client.post('/api/v1/me/apps', { json: { app: { name: 'Reader App', redirect_uris: ['https://reader.example/cb'], confidential: false } } });
    const tokens = await authorizeAndExchange(created.body.client_id, 'https://reader.example/cb');
    const viaApp = new ApiClient(app.baseUrl, tokens.access_token);
    expect((await viaApp.get('/api/v1/me')).status).toBe(200);
    const list = await alice.client.get('/api/v1/me/authorizations');
    expect(list.status).toBe(200);
    const entry = list.body.find((item: { app: { client_id: string } }) => item.app.client_id === created.body.client_id);
    expect(entry).toMatchObject({ model: 'authorization', scopes: ['read', 'write'], app: { name: 'Reader App' } });
    expect((await bob.client.request('DELETE', `/api/v1/me/authorizations/${created.body.client_id}`)).status).toBe(404);
    expect((await alice.client.request('DELETE', `/api/v1/me/authorizations/${created.body.client_id}`)).status).toBe(204);
    expect((await viaApp.get('/api/v1/me')).status).toBe(401);
    expect((await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: created.body.client_id })).body.error).toBe('invalid_grant');
    expect(await app.em().count(OAuthGrant, { user: alice.user.id, client: { clientId: created.body.client_id } })).toBe(0);
  });
});

describe('listTokens and revokeToken', () => {
  it('lists the caller’s tokens with the current one marked, and revokes one by id', async () => {
    const carol = await makeUser(app, 'carol');
    const list = await carol.client.get('/api/v1/me/tokens');
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ model: 'token', current: true, app: null, scopes: ['read', 'write'] });
    expect(carol.token.startsWith(list.body[0].prefix)).toBe(true);
    expect(JSON.stringify(list.body)).not.toContain(carol.token);
    expect((await alice.client.request('DELETE', `/api/v1/me/tokens/${list.body[0].id}`)).status).toBe(404);
    expect((await carol.client.request('DELETE', `/api/v1/me/tokens/${list.body[0].id}`)).status).toBe(204);
    expect((await carol.client.get('/api/v1/me')).status).toBe(401);
    expect(await app.em().count(Token, { user: carol.user.id })).toBe(0);
  });

  it('shows the app a token belongs to', async () => {
    const created = await alice.client.post('/api/v1/me/apps', { json: { app: { name: 'Listed App', redirect_uris: ['https://listed.example/cb'], confidential: false } } });
    await authorizeAndExchange(created.body.client_id, 'https://listed.example/cb');
    const list = await alice.client.get('/api/v1/me/tokens');
    expect(list.body.some((token: { app: { name: string } | null; expires_at: string | null }) => token.app?.name === 'Listed App' && token.expires_at !== null)).toBe(true);
  });
});
