// The token endpoint beyond the code exchange: the password grant (first-party apps, `login` or `username`),
// refresh rotation and reuse detection, RFC 7009 revocation, scopes, the brute-force limits, the RFC 8414 metadata.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Token } from '../../src/modules/auth/token.entity.ts';
import { RefreshToken } from '../../src/modules/oauth/oauth.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { makeUser, type Actor } from '../support/factories.ts';
import { authorizePath, CookieBrowser, givePassword, makeClient, pkcePair, tokenRequest } from '../support/oauth.ts';

let app: TestApp;
let alice: Actor;
let password: string;
let iosApp: Awaited<ReturnType<typeof makeClient>>;
let thirdParty: Awaited<ReturnType<typeof makeClient>>;

beforeAll(async () => {
  // every attempt counts against the account: this file signs alice in far more often than the default allows
  app = await startTestApp({ SIGN_IN_ATTEMPTS_PER_ACCOUNT: '1000', SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000' });
  alice = await makeUser(app, 'alice');
  password = await givePassword(app, alice.user);
  iosApp = await makeClient(app, { name: 'Notes for iOS', confidential: true, firstParty: true, redirectUris: ['notesapp://callback'] });
  thirdParty = await makeClient(app, { name: 'Other', confidential: true, redirectUris: ['https://other.example/cb'] });
});
afterAll(async () => app?.close());

const ios = (form: Record<string, string>) => tokenRequest(app, { client_id: iosApp.clientId, client_secret: iosApp.secret!, ...form });

describe('the password grant', () => {
  it('takes the user name as `login` (the old iOS app) or `username`, for a first-party app', async () => {
    const byLogin = await ios({ grant_type: 'password', login: 'alice', password });
    expect(byLogin.status, byLogin.text).toBe(200);
    expect(byLogin.body).toMatchObject({ token_type: 'Bearer', scope: 'read write' });
    expect((await new ApiClient(app.baseUrl, byLogin.body.access_token).get('/api/v1/me')).body.username).toBe('alice');
    const byUsername = await ios({ grant_type: 'password', username: 'ALICE', password });
    expect(byUsername.status).toBe(200);
  });

  it('refuses a wrong password with invalid_grant, and a third-party app with unauthorized_client', async () => {
    const wrong = await ios({ grant_type: 'password', login: 'alice', password: 'wrong password' });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('content-type')).toMatch(/^application\/json/);
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    const unknown = await ios({ grant_type: 'password', login: 'nobody-here', password });
    expect(unknown.body.error).toBe('invalid_grant');
    const other = await tokenRequest(app, { grant_type: 'password', username: 'alice', password, client_id: thirdParty.clientId, client_secret: thirdParty.secret! });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('unauthorized_client');
  });

  it('answers RFC 6749 JSON for an unknown grant type, a missing one, and a body that is not a form', async () => {
    expect((await ios({ grant_type: 'client_credentials' })).body.error).toBe('unauthorized_client');
    expect((await ios({ grant_type: 'magic' })).body.error).toBe('unsupported_grant_type');
    expect((await ios({})).body.error).toBe('invalid_request');
    const broken = await fetch(`${app.baseUrl}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"grant_type":' });
    expect(broken.status).toBe(400);
    expect(broken.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await broken.json()).error).toBe('invalid_request');
    const json = await fetch(`${app.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', login: 'alice', password, client_id: iosApp.clientId, client_secret: iosApp.secret }),
    });
    expect(json.status).toBe(200);
  });
});

describe('refresh tokens', () => {
  it('rotate: a refresh gives new tokens and spends the old refresh token', async () => {
    const first = await ios({ grant_type: 'password', login: 'alice', password });
    const second = await ios({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(second.status, second.text).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect((await new ApiClient(app.baseUrl, second.body.access_token).get('/api/v1/me')).status).toBe(200);
    const rows = await app.em().find(RefreshToken, { user: alice.user.id, client: iosApp.rowId }, { orderBy: { id: 'desc' }, limit: 2 });
    expect(rows[0]!.family).toBe(rows[1]!.family);
    expect(rows[0]!.usedAt).toBeNull();
    expect(rows[1]!.usedAt).not.toBeNull();
  });

  it('revoke the whole family when a spent refresh token comes back', async () => {
    const first = await ios({ grant_type: 'password', login: 'alice', password });
    const second = await ios({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    const stolen = await ios({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    expect((await new ApiClient(app.baseUrl, second.body.access_token).get('/api/v1/me')).status).toBe(401);
    expect((await new ApiClient(app.baseUrl, first.body.access_token).get('/api/v1/me')).status).toBe(401);
    expect((await ios({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token })).body.error).toBe('invalid_grant');
  });

  it('belong to their app: another app cannot use them', async () => {
    const first = await ios({ grant_type: 'password', login: 'alice', password });
    const other = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: thirdParty.clientId, client_secret: thirdParty.secret! });
    expect(other.body.error).toBe('invalid_grant');
  });

  it('may narrow the scope, never widen it', async () => {
    const first = await ios({ grant_type: 'password', login: 'alice', password, scope: 'read' });
    expect(first.body.scope).toBe('read');
    expect((await ios({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, scope: 'read write' })).body.error).toBe('invalid_scope');
  });
});

describe('revocation (RFC 7009)', () => {
  it('revokes an access token at once, even one this process has cached', async () => {
    const issued = await ios({ grant_type: 'password', login: 'alice', password });
    const client = new ApiClient(app.baseUrl, issued.body.access_token);
    expect((await client.get('/api/v1/me')).status).toBe(200);
    const revoke = await fetch(`${app.baseUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: issued.body.access_token, token_type_hint: 'access_token', client_id: iosApp.clientId, client_secret: iosApp.secret! }),
    });
    expect(revoke.status).toBe(200);
    expect((await client.get('/api/v1/me')).status).toBe(401);
    // the refresh token of the grant still works: revoking the access token alone ends only it
    expect((await ios({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token })).status).toBe(200);
  });

  it('revokes a refresh token with its family, answers 200 for an unknown token, and needs the app’s credentials', async () => {
    const issued = await ios({ grant_type: 'password', login: 'alice', password });
    const basic = `Basic ${Buffer.from(`${iosApp.clientId}:${iosApp.secret}`).toString('base64')}`;
    const revoke = (token: string, authorization = basic) =>
      fetch(`${app.baseUrl}/oauth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: authorization }, body: new URLSearchParams({ token }) });
    expect((await revoke(issued.body.refresh_token)).status).toBe(200);
    expect((await new ApiClient(app.baseUrl, issued.body.access_token).get('/api/v1/me')).status).toBe(401);
    expect((await revoke('nt_unknown')).status).toBe(200);
    const wrong = await revoke('nt_unknown', `Basic ${Buffer.from(`${iosApp.clientId}:nope`).toString('base64')}`);
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).error).toBe('invalid_client');
    // an app cannot revoke another app's token
    const kept = await ios({ grant_type: 'password', login: 'alice', password });
    const otherBasic = `Basic ${Buffer.from(`${thirdParty.clientId}:${thirdParty.secret}`).toString('base64')}`;
    expect((await revoke(kept.body.access_token, otherBasic)).status).toBe(200);
    expect((await new ApiClient(app.baseUrl, kept.body.access_token).get('/api/v1/me')).status).toBe(200);
    expect(await app.em().count(Token, { clientId: iosApp.rowId, user: alice.user.id })).toBeGreaterThan(0);
  });
});

describe('scopes', () => {
  it('a read-scoped token reads and is refused on writes with 403 insufficient_scope', async () => {
    const issued = await ios({ grant_type: 'password', login: 'alice', password, scope: 'read' });
    const client = new ApiClient(app.baseUrl, issued.body.access_token);
    expect((await client.get('/api/v1/notes')).status).toBe(200);
    const write = await client.post('/api/v1/notes', { json: { note: { title: 'Nope', team: 'alice' } } });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('insufficient_scope');
  });

  it('read scope through the code flow too', async () => {
    const { verifier, challenge } = pkcePair();
    const browser = new CookieBrowser(app.baseUrl);
    const answer = await browser.signIn(authorizePath({ response_type: 'code', client_id: iosApp.clientId, redirect_uri: iosApp.redirectUri, scope: 'read', code_challenge: challenge, code_challenge_method: 'S256' }), 'alice', password);
    const code = new URL(answer.location!).searchParams.get('code')!;
    const token = await ios({ grant_type: 'authorization_code', code, redirect_uri: iosApp.redirectUri, code_verifier: verifier });
    expect(token.body.scope).toBe('read');
    expect((await new ApiClient(app.baseUrl, token.body.access_token).request('DELETE', '/api/v1/alice/x')).status).toBe(403);
  });
});

describe('the metadata (RFC 8414)', () => {
  it('names the endpoints, scopes, grants and PKCE method', async () => {
    const answer = await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`);
    const metadata = await answer.json();
    expect(metadata).toMatchObject({
      issuer: app.baseUrl,
      authorization_endpoint: `${app.baseUrl}/oauth/authorize`,
      token_endpoint: `${app.baseUrl}/oauth/token`,
      revocation_endpoint: `${app.baseUrl}/oauth/revoke`,
      scopes_supported: ['read', 'write'],
      code_challenge_methods_supported: ['S256'],
    });
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'password']));
  });
});

describe('brute force', () => {
  let limited: TestApp;
  let client: Awaited<ReturnType<typeof makeClient>>;
  beforeAll(async () => {
    limited = await startTestApp({ SIGN_IN_ATTEMPTS_PER_ACCOUNT: '3', SIGN_IN_ATTEMPTS_PER_ADDRESS: '9', SIGN_IN_WINDOW_SECONDS: '600' });
    for (const name of ['carol', 'dave', 'erin']) await givePassword(limited, (await makeUser(limited, name)).user);
    client = await makeClient(limited, { confidential: true, firstParty: true, redirectUris: ['notesapp://cb'] });
  });
  afterAll(async () => limited?.close());
  const grant = (login: string, secret = 'wrong password') =>
    tokenRequest(limited, { grant_type: 'password', login, password: secret, client_id: client.clientId, client_secret: client.secret! });

  it('limits the password grant per account, with RateLimit headers and 429 Retry-After', async () => {
    const first = await grant('carol');
    expect(first.status).toBe(400);
    expect(first.headers.get('ratelimit-limit')).toBe('3');
    expect(first.headers.get('ratelimit-remaining')).toBe('2');
    await grant('carol');
    await grant('carol');
    const blocked = await grant('carol', 'correct horse battery');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.headers.get('ratelimit-remaining')).toBe('0');
    expect(blocked.body.error).toBe('temporarily_unavailable');
    // another account from the same address still gets through
    expect((await grant('dave', 'correct horse battery')).status).toBe(200);
  });

  it('limits the sign-in page per account and per address', async () => {
    const browser = new CookieBrowser(limited.baseUrl);
    const parameters = { response_type: 'code', client_id: client.clientId, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
    // dave has one attempt already (the grant above): two more are allowed, the fourth is not
    let last = await browser.signIn(authorizePath(parameters), 'dave', 'wrong');
    expect(last.status).toBe(403);
    expect(last.headers.get('ratelimit-remaining')).toBe('1');
    last = await browser.signIn(authorizePath(parameters), 'dave', 'wrong');
    expect(last.status).toBe(403);
    last = await browser.signIn(authorizePath(parameters), 'dave', 'correct horse battery');
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toBeTruthy();
    expect(last.headers.get('content-type')).toMatch(/^text\/html/);
    expect(last.text).toContain('Too many sign-in attempts');
    // 8 attempts from this address so far (4 carol, 4 dave): erin gets the ninth, then the address is spent
    expect((await browser.signIn(authorizePath(parameters), 'erin', 'wrong')).status).toBe(403);
    const erin = await browser.signIn(authorizePath(parameters), 'erin', 'correct horse battery');
    expect(erin.status).toBe(429);
  });
});

describe('the token endpoint’s other methods', () => {
  it('answer 405 with Allow: POST and an RFC 6749 error', async () => {
    const answer = await fetch(`${app.baseUrl}/oauth/token`);
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    expect((await answer.json()).error).toBe('invalid_request');
  });
});
