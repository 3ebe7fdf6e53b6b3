// RFC 7591 dynamic client registration (oauthRegister, POST /oauth/register): what is registered and stored, the
// whole flow of a registered public app (PKCE through the sign-in and consent pages, the token, the API, the user's
// authorizations and their revocation), the metadata refused and nothing stored then, the limit per address, and
// the expiry of registrations no user authorized.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Token } from '../../src/modules/auth/token.entity.ts';
import { createClient } from '../../src/modules/oauth/clients.ts';
import { OAuthClient, OAuthGrant, RefreshToken } from '../../src/modules/oauth/oauth.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { makeUser, type Actor } from '../support/factories.ts';
import { authorizePath, CookieBrowser, givePassword, pkcePair, tokenRequest } from '../support/oauth.ts';
import { documentSchema } from '../support/document-schemas.ts';

let app: TestApp;
let alice: Actor;
let password: string;
let validateRegistration: ((value: unknown) => boolean) & { errors?: unknown };
let validateOAuthError: (value: unknown) => boolean;

const LOOPBACK = 'http://127.0.0.1:43117/callback';
/** The address the requests come from unless a test says otherwise (the app trusts X-Forwarded-For from loopback). */
const ADDRESS = '198.51.100.1';

beforeAll(async () => {
  // the limit per address is counted on the address X-Forwarded-For names, so each test can have its own
  app = await startTestApp({ TRUST_PROXY: 'loopback' });
  alice = await makeUser(app, 'alice');
  password = await givePassword(app, alice.user);
  validateRegistration = documentSchema('ClientRegistration');
  validateOAuthError = documentSchema('OAuthError');
});
afterAll(async () => app?.close());

type Answer = { status: number; headers: Headers; body: Record<string, any>; text: string };

async function register(body: unknown, options: { address?: string; type?: string; raw?: string } = {}): Promise<Answer> {
  const response = await fetch(`${app.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': options.type ?? 'application/json', 'X-Forwarded-For': options.address ?? ADDRESS },
    body: options.raw ?? JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: Record<string, any> = {};
  try {
    parsed = JSON.parse(text) as Record<string, any>;
  } catch {
    parsed = {};
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** What a refused registration must leave as it was: the apps, and the address's count of registrations. */
async function storedState(address = ADDRESS) {
  const em = app.em();
  const [limit] = await em.execute<{ used: number }[]>('select used from rate_limits where key = ?', [`registration:${address}`]);
  return { clients: await em.count(OAuthClient, {}), used: limit?.used ?? 0 };
}

function expectRegistrationError(answer: Answer, status: number, error: string) {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.body).toEqual({ error, error_description: expect.any(String) });
  expect(validateOAuthError(answer.body)).toBe(true);
}

describe('oauthRegister', () => {
  it('registers a public app with no owner, answers 201 with the RFC 7591 client information, and stores it marked', async () => {
    const before = await storedState();
    const answer = await register({
      client_name: '  Example MCP client ', redirect_uris: [LOOPBACK, LOOPBACK, 'https://app.example/oauth/callback'], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'read write', logo_uri: 'https://app.example/logo.png', contacts: ['ops@app.example'],
    });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('ratelimit-limit')).toBe('20');
    expect(validateRegistration(answer.body), JSON.stringify(validateRegistration.errors)).toBe(true);
    expect(answer.body).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f]{32}$/), client_id_issued_at: expect.any(Number), client_name: 'Example MCP client',
      redirect_uris: [LOOPBACK, 'https://app.example/oauth/callback'], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none', scope: 'read write',
    });
    expect(Math.abs(answer.body.client_id_issued_at * 1000 - Date.now())).toBeLessThan(5000);
    expect(answer.body).not.toHaveProperty('client_secret');

    const stored = await app.em().findOneOrFail(OAuthClient, { clientId: answer.body.client_id });
    expect(stored).toMatchObject({
      name: 'Example MCP client', redirectUris: [LOOPBACK, 'https://app.example/oauth/callback'], confidential: false, firstParty: false,
      secretHash: null, owner: null, registeredDynamically: true, authorizedAt: null, scope: 'write',
    });
    expect(Math.floor(stored.createdAt.getTime() / 1000)).toBe(answer.body.client_id_issued_at);
    expect(await storedState()).toEqual({ clients: before.clients + 1, used: before.used + 1 });
    // listed nowhere: it has no owner
    expect((await alice.client.get('/api/v1/me/apps')).body).toEqual([]);
  });

  it('fills what is left out: the name, and the public client’s authentication method none', async () => {
    const answer = await register({ redirect_uris: ['http://localhost:8080/callback'] });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body).toMatchObject({ client_name: 'MCP client', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] });
    expect(answer.body).not.toHaveProperty('scope');
    expect((await app.em().findOneOrFail(OAuthClient, { clientId: answer.body.client_id })).scope).toBeNull();
  });

  it('takes http redirect URIs on a loopback host with any port, https ones, and an app’s own scheme', async () => {
    const uris = ['http://127.0.0.1:1/cb', 'http://127.0.0.1:65535/cb', 'http://127.0.0.1/cb', 'http://localhost:53682/callback', 'http://[::1]:33418/cb', 'https://claude.example/api/mcp/auth_callback', 'cursor://anysphere.cursor-mcp/oauth/callback'];
    const answer = await register({ client_name: 'Loopbacks', redirect_uris: uris });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.redirect_uris).toEqual(uris);
  });

  it('is listed in the metadata (RFC 8414) as registration_endpoint', async () => {
    const metadata = await (await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`)).json();
    expect(metadata.registration_endpoint).toBe(`${app.baseUrl}/oauth/register`);
    expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('answers other methods with 405 and Allow: POST, as an OAuth error', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const answer = await fetch(`${app.baseUrl}/oauth/register`, { method });
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
      expect(await answer.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    }
  });
});

describe('oauthRegister: the flow of a registered app', () => {
  it('authorizes with PKCE through sign-in and consent, gets a token that works, shows in the authorizations, and is revoked there', async () => {
    const registered = await register({ client_name: 'Flow MCP client', redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'none' });
    expect(registered.status, registered.text).toBe(201);
    const clientId = registered.body.client_id as string;
    const { verifier, challenge } = pkcePair();
    const browser = new CookieBrowser(app.baseUrl);
    const consent = await browser.signIn(authorizePath({ response_type: 'code', client_id: clientId, redirect_uri: LOOPBACK, state: 'st-1', code_challenge: challenge, code_challenge_method: 'S256', scope: 'read write' }), 'alice', password);
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain('Flow MCP client');
    const decided = await browser.decide(consent, 'allow');
    expect(decided.status).toBe(303);
    const location = new URL(decided.location!);
    expect(`${location.origin}${location.pathname}`).toBe(LOOPBACK);
    expect(location.searchParams.get('state')).toBe('st-1');
    const row = await app.em().findOneOrFail(OAuthClient, { clientId });
    expect(row.authorizedAt).toBeInstanceOf(Date);

    // no secret: the client_id and the verifier
    const token = await tokenRequest(app, { grant_type: 'authorization_code', code: location.searchParams.get('code')!, redirect_uri: LOOPBACK, client_id: clientId, code_verifier: verifier });
    expect(token.status, token.text).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', scope: 'read write', refresh_token: expect.stringMatching(/^nr_/) });
    const asApp = new ApiClient(app.baseUrl, token.body.access_token);
    const me = await asApp.get('/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('alice');

    const authorizations = await alice.client.get('/api/v1/me/authorizations');
    expect(authorizations.status).toBe(200);
    const listed = authorizations.body.find((item: { app: { client_id: string } }) => item.app.client_id === clientId);
    expect(listed).toMatchObject({ app: { name: 'Flow MCP client', confidential: false, first_party: false, redirect_uris: [LOOPBACK] }, scopes: ['read', 'write'] });

    expect((await alice.client.delete(`/api/v1/me/authorizations/${clientId}`)).status).toBe(204);
    expect((await asApp.get('/api/v1/me')).status).toBe(401);
    const refreshed = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: token.body.refresh_token, client_id: clientId });
    expect(refreshed.body.error).toBe('invalid_grant');
    const em = app.em();
    expect(await em.count(OAuthGrant, { user: alice.user.id, client: row.id })).toBe(0);
    expect(await em.count(Token, { user: alice.user.id, clientId: row.id })).toBe(0);
    expect(await em.count(RefreshToken, { user: alice.user.id, client: row.id })).toBe(0);
    expect((await alice.client.get('/api/v1/me/authorizations')).body.some((item: { app: { client_id: string } }) => item.app.client_id === clientId)).toBe(false);
  });

  it('must use PKCE: no code_challenge, or plain, redirects with invalid_request and issues no code', async () => {
    const registered = await register({ client_name: 'No PKCE', redirect_uris: [LOOPBACK] });
    const browser = new CookieBrowser(app.baseUrl);
    for (const extra of [{}, { code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }] as Record<string, string>[]) {
      const answer = await browser.get(authorizePath({ response_type: 'code', client_id: registered.body.client_id, redirect_uri: LOOPBACK, state: 's', ...extra }));
      expect(answer.status).toBe(302);
      const location = new URL(answer.location!);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.has('code')).toBe(false);
    }
    expect((await app.em().findOneOrFail(OAuthClient, { clientId: registered.body.client_id })).authorizedAt).toBeNull();
  });

  it('holds an app registered for read to it: asking for write is invalid_scope, asking for nothing gives read', async () => {
    const registered = await register({ client_name: 'Reader MCP client', redirect_uris: [LOOPBACK], scope: 'read' });
    expect(registered.body.scope).toBe('read');
    const clientId = registered.body.client_id as string;
    const browser = new CookieBrowser(app.baseUrl);
    const { verifier, challenge } = pkcePair();
    const parameters = { response_type: 'code', client_id: clientId, redirect_uri: LOOPBACK, code_challenge: challenge, code_challenge_method: 'S256' };
    const refused = await browser.get(authorizePath({ ...parameters, scope: 'write' }));
    expect(refused.status).toBe(302);
    expect(new URL(refused.location!).searchParams.get('error')).toBe('invalid_scope');
    const consent = await browser.signIn(authorizePath(parameters), 'alice', password);
    expect(consent.status, consent.text).toBe(200);
    const decided = await browser.decide(consent, 'allow');
    const token = await tokenRequest(app, { grant_type: 'authorization_code', code: new URL(decided.location!).searchParams.get('code')!, redirect_uri: LOOPBACK, client_id: clientId, code_verifier: verifier });
    expect(token.status, token.text).toBe(200);
    expect(token.body.scope).toBe('read');
    const asApp = new ApiClient(app.baseUrl, token.body.access_token);
    expect((await asApp.post('/api/v1/teams', { json: { team: { name: 'nope-team' } } })).status).toBe(403);
  });
});

describe('oauthRegister: refused metadata', () => {
  const cases: [string, unknown, 'invalid_redirect_uri' | 'invalid_client_metadata'][] = [
    ['no redirect_uris', { client_name: 'X' }, 'invalid_redirect_uri'],
    ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri'],
    ['redirect_uris as a string', { redirect_uris: 'https://a.example/cb' }, 'invalid_redirect_uri'],
    ['a redirect URI that is not a string', { redirect_uris: [42] }, 'invalid_redirect_uri'],
    ['http on a host that is not loopback', { redirect_uris: [LOOPBACK, 'http://app.example/cb'] }, 'invalid_redirect_uri'],
    ['http on a private address', { redirect_uris: ['http://192.168.1.10:8080/cb'] }, 'invalid_redirect_uri'],
    ['a javascript: URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['a fragment', { redirect_uris: ['https://a.example/cb#x'] }, 'invalid_redirect_uri'],
    ['a relative URI', { redirect_uris: ['/callback'] }, 'invalid_redirect_uri'],
    ['11 redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/cb${i}`) }, 'invalid_redirect_uri'],
    ['client_secret_basic', { redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
    ['client_secret_post', { redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'client_secret_post' }, 'invalid_client_metadata'],
    ['private_key_jwt', { redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
    ['an unknown grant type', { redirect_uris: [LOOPBACK], grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'] }, 'invalid_client_metadata'],
    ['the password grant', { redirect_uris: [LOOPBACK], grant_types: ['password'] }, 'invalid_client_metadata'],
    ['refresh_token without authorization_code', { redirect_uris: [LOOPBACK], grant_types: ['refresh_token'] }, 'invalid_client_metadata'],
    ['grant_types as a string', { redirect_uris: [LOOPBACK], grant_types: 'authorization_code' }, 'invalid_client_metadata'],
    ['response type token', { redirect_uris: [LOOPBACK], response_types: ['token'] }, 'invalid_client_metadata'],
    ['an unknown scope', { redirect_uris: [LOOPBACK], scope: 'read admin' }, 'invalid_client_metadata'],
    ['NUL in client_name', { redirect_uris: [LOOPBACK], client_name: 'MCP\u0000client' }, 'invalid_client_metadata'],
    ['a lone surrogate in client_name', { redirect_uris: [LOOPBACK], client_name: 'MCP \ud800' }, 'invalid_client_metadata'],
    ['NUL in an ignored member', { redirect_uris: [LOOPBACK], client_uri: 'https://a.example/\u0000' }, 'invalid_client_metadata'],
    ['a line break in client_name', { redirect_uris: [LOOPBACK], client_name: 'Claude\nreally' }, 'invalid_client_metadata'],
    ['client_name past 255 characters', { redirect_uris: [LOOPBACK], client_name: 'x'.repeat(256) }, 'invalid_client_metadata'],
    ['a huge client_name within the body limit', { redirect_uris: [LOOPBACK], client_name: 'x'.repeat(1024 * 1024) }, 'invalid_client_metadata'],
    ['client_name as a number', { redirect_uris: [LOOPBACK], client_name: 7 }, 'invalid_client_metadata'],
    ['an array', [{ redirect_uris: [LOOPBACK] }], 'invalid_client_metadata'],
  ];
  for (const [what, body, error] of cases) {
    it(`${what}: 400 ${error}, nothing stored or counted`, async () => {
      const before = await storedState();
      expectRegistrationError(await register(body), 400, error);
      expect(await storedState()).toEqual(before);
    });
  }

  it('a body that is not JSON (a form, text, malformed JSON, a JSON string): 400 invalid_client_metadata, nothing stored', async () => {
    const before = await storedState();
    expectRegistrationError(await register(undefined, { type: 'application/x-www-form-urlencoded', raw: `redirect_uris=${encodeURIComponent(LOOPBACK)}` }), 400, 'invalid_client_metadata');
    expectRegistrationError(await register(undefined, { type: 'text/plain', raw: JSON.stringify({ redirect_uris: [LOOPBACK] }) }), 400, 'invalid_client_metadata');
    expectRegistrationError(await register(undefined, { raw: `{"redirect_uris":["${LOOPBACK}"]` }), 400, 'invalid_client_metadata');
    expectRegistrationError(await register(undefined, { raw: '"text"' }), 400, 'invalid_client_metadata');
    expect(await storedState()).toEqual(before);
  });

  it('a body past the request body limit: 413 invalid_client_metadata, nothing stored', async () => {
    const before = await storedState();
    const huge = JSON.stringify({ redirect_uris: [LOOPBACK], client_name: 'x', padding: 'x'.repeat(app.config.limits.requestBodyBytes + 1) });
    expectRegistrationError(await register(undefined, { raw: huge }), 413, 'invalid_client_metadata');
    expect(await storedState()).toEqual(before);
  });
});

describe('oauthRegister: the limit per address', () => {
  it('takes 20 registrations an hour from one address, then answers 429 with Retry-After; other addresses are not held', async () => {
    const address = '203.0.113.7';
    for (let i = 0; i < 20; i += 1) {
      const answer = await register({ client_name: `Burst ${i}`, redirect_uris: [LOOPBACK] }, { address });
      expect(answer.status, answer.text).toBe(201);
      expect(answer.headers.get('ratelimit-remaining')).toBe(String(19 - i));
    }
    const clients = await app.em().count(OAuthClient, {});
    const refused = await register({ client_name: 'One too many', redirect_uris: [LOOPBACK] }, { address });
    expectRegistrationError(refused, 429, 'temporarily_unavailable');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(await app.em().count(OAuthClient, {})).toBe(clients);
    // refused metadata is refused as such, and spends nothing
    expectRegistrationError(await register({ redirect_uris: [] }, { address }), 400, 'invalid_redirect_uri');
    expect((await register({ client_name: 'Elsewhere', redirect_uris: [LOOPBACK] }, { address: '203.0.113.8' })).status).toBe(201);
  });
});

describe('oauthRegister: unused registrations expire', () => {
  it('deletes, at the next registration, the ones no user authorized within 24 hours, and keeps the others', async () => {
    const em = app.em();
    const longAgo = new Date(Date.now() - 25 * 3_600_000);
    const make = async (name: string, registeredDynamically: boolean) => (await createClient(em, { name, redirectUris: [LOOPBACK], confidential: false, registeredDynamically })).client;
    const unused = await make('Old unused registration', true);
    const authorized = await make('Old authorized registration', true);
    const byHand = await make('Old app registered by hand', false);
    const recent = await make('Recent unused registration', true);
    for (const client of [unused, authorized, byHand]) client.createdAt = longAgo;
    authorized.authorizedAt = new Date(Date.now() - 24 * 3_600_000);
    await em.flush();
    em.create(OAuthGrant, { user: alice.user.id, client: authorized.id, scope: 'read' });
    await em.flush();

    const answer = await register({ client_name: 'Sweeper', redirect_uris: [LOOPBACK] }, { address: '198.51.100.77' });
    expect(answer.status, answer.text).toBe(201);
    const left = (await app.em().find(OAuthClient, { id: { $in: [unused.id, authorized.id, byHand.id, recent.id] } })).map((client) => client.name).sort();
    expect(left).toEqual(['Old app registered by hand', 'Old authorized registration', 'Recent unused registration']);
    expect(await app.em().count(OAuthGrant, { client: authorized.id })).toBe(1);
  });
});
