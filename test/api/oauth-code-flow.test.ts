// The authorization-code flow with PKCE, driven through the sign-in and consent pages as a browser would (cookies,
// hidden form fields, redirects read rather than followed), then the token endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Token } from '../../src/modules/auth/token.entity.ts';
import { AuthorizationCode, OAuthGrant } from '../../src/modules/oauth/oauth.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { makeUser, type Actor } from '../support/factories.ts';
import { authorizePath, CookieBrowser, givePassword, hiddenFields, makeClient, pkcePair, tokenRequest } from '../support/oauth.ts';

let app: TestApp;
let alice: Actor;
let password: string;
let publicApp: Awaited<ReturnType<typeof makeClient>>;
let confidentialApp: Awaited<ReturnType<typeof makeClient>>;

beforeAll(async () => {
  app = await startTestApp();
  alice = await makeUser(app, 'alice');
  password = await givePassword(app, alice.user);
  publicApp = await makeClient(app, { name: 'Pocket Notes', confidential: false, redirectUris: ['http://127.0.0.1:9/callback', 'notesapp://oauth'] });
  confidentialApp = await makeClient(app, { name: 'Ruby Site', confidential: true, redirectUris: ['https://site.example/auth/notes/callback'] });
});
afterAll(async () => app?.close());

/** A user with a password, who has authorized no app yet (so the consent page is shown). */
async function freshUser() {
  const actor = await makeUser(app);
  return { username: actor.user.username, password: await givePassword(app, actor.user) };
}

/** Signs a new user in on a new browser and answers the consent page with `decision`: the redirect it ends on. */
async function authorizeAs(parameters: Record<string, string>, decision: 'allow' | 'deny' = 'allow') {
  const browser = new CookieBrowser(app.baseUrl);
  const who = await freshUser();
  const consent = await browser.signIn(authorizePath(parameters), who.username, who.password);
  expect(consent.status, consent.text).toBe(200);
  expect(consent.text).toContain('Authorize');
  const answer = await browser.decide(consent, decision);
  expect(answer.status, answer.text).toBe(303);
  return { browser, consent, location: new URL(answer.location!) };
}

function publicParameters(challenge: string, extra: Record<string, string> = {}) {
  return { response_type: 'code', client_id: publicApp.clientId, redirect_uri: publicApp.redirectUri, state: 'xyz 123', code_challenge: challenge, code_challenge_method: 'S256', ...extra };
}

describe('the authorization-code flow with PKCE', () => {
  it('signs in, asks for consent, redirects with a code and the state, and the code buys a working token', async () => {
    const { verifier, challenge } = pkcePair();
    const browser = new CookieBrowser(app.baseUrl);
    const signIn = await browser.get(authorizePath(publicParameters(challenge)));
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('content-type')).toMatch(/^text\/html/);
    expect(signIn.headers.get('x-content-type-options')).toBe('nosniff');
    expect(signIn.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(signIn.headers.get('content-security-policy')).not.toMatch(/script-src|unsafe-inline/);
    expect(signIn.text).toContain('Pocket Notes');
    expect(signIn.text).not.toContain('<script');

    const consent = await browser.signIn(authorizePath(publicParameters(challenge)), 'alice', password);
    expect(consent.text).toContain('Pocket Notes');
    expect(consent.text).toContain('create and change');
    const session = browser.cookies.get('notes_session');
    expect(session).toBeDefined();

    const answer = await browser.decide(consent, 'allow');
    expect(answer.status).toBe(303);
    const location = new URL(answer.location!);
    expect(`${location.origin}${location.pathname}`).toBe(publicApp.redirectUri);
    expect(location.searchParams.get('state')).toBe('xyz 123');
    const code = location.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{20,}$/);

    const stored = await app.em().findOneOrFail(AuthorizationCode, { client: publicApp.rowId }, { orderBy: { id: 'desc' } });
    expect(stored.codeHash).not.toBe(code);
    // 10 minutes, give or take the whole second the timestamps are kept to
    expect(Math.abs(stored.expiresAt.getTime() - stored.createdAt.getTime() - 600_000)).toBeLessThanOrEqual(1000);

    const token = await tokenRequest(app, { grant_type: 'authorization_code', code, redirect_uri: publicApp.redirectUri, client_id: publicApp.clientId, code_verifier: verifier });
    expect(token.status, token.text).toBe(200);
    expect(token.headers.get('content-type')).toMatch(/^application\/json/);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(token.body).toMatchObject({ token_type: 'Bearer', scope: 'read write' });
    expect(token.body.expires_in).toBeGreaterThan(3590);
    expect(token.body.expires_in).toBeLessThanOrEqual(3600);
    expect(token.body.refresh_token).toMatch(/^nr_/);

    const me = await new ApiClient(app.baseUrl, token.body.access_token).get('/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('alice');
    const viaQuery = await new ApiClient(app.baseUrl).get(`/api/v1/me.json?access_token=${encodeURIComponent(token.body.access_token)}`);
    expect(viaQuery.status).toBe(200);

    const row = await app.em().findOneOrFail(Token, { clientId: publicApp.rowId, user: alice.user.id }, { orderBy: { id: 'desc' } });
    expect(row.scope).toBe('write');
    expect(row.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    expect(row.tokenHash).not.toBe(token.body.access_token);
    expect(await app.em().count(OAuthGrant, { user: alice.user.id, client: publicApp.rowId })).toBe(1);

    // the session cookie never authorizes the API
    const withCookie = await fetch(`${app.baseUrl}/api/v1/me`, { headers: { Cookie: `notes_session=${session}` } });
    expect(withCookie.status).toBe(401);
  });

  it('refuses a wrong verifier, and the code is spent by the attempt', async () => {
    const { verifier, challenge } = pkcePair();
    const { location } = await authorizeAs(publicParameters(challenge));
    const code = location.searchParams.get('code')!;
    const wrong = await tokenRequest(app, { grant_type: 'authorization_code', code, redirect_uri: publicApp.redirectUri, client_id: publicApp.clientId, code_verifier: pkcePair().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    const retry = await tokenRequest(app, { grant_type: 'authorization_code', code, redirect_uri: publicApp.redirectUri, client_id: publicApp.clientId, code_verifier: verifier });
    expect(retry.body.error).toBe('invalid_grant');
    const missing = await tokenRequest(app, { grant_type: 'authorization_code', code: (await authorizeAs(publicParameters(challenge))).location.searchParams.get('code')!, redirect_uri: publicApp.redirectUri, client_id: publicApp.clientId });
    expect(missing.status).toBe(400);
  });

  it('refuses a reused code and revokes what its first use got', async () => {
    const { verifier, challenge } = pkcePair();
    const { location } = await authorizeAs(publicParameters(challenge));
    const form = { grant_type: 'authorization_code', code: location.searchParams.get('code')!, redirect_uri: publicApp.redirectUri, client_id: publicApp.clientId, code_verifier: verifier };
    const first = await tokenRequest(app, form);
    expect(first.status).toBe(200);
    const client = new ApiClient(app.baseUrl, first.body.access_token);
    expect((await client.get('/api/v1/me')).status).toBe(200);
    const second = await tokenRequest(app, form);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    expect((await client.get('/api/v1/me')).status).toBe(401);
    const refreshed = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: publicApp.clientId });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it('refuses a redirect URI at the token step that differs from the one authorized', async () => {
    const { verifier, challenge } = pkcePair();
    const { location } = await authorizeAs(publicParameters(challenge));
    const answer = await tokenRequest(app, { grant_type: 'authorization_code', code: location.searchParams.get('code')!, redirect_uri: 'notesapp://oauth', client_id: publicApp.clientId, code_verifier: verifier });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_request');
  });

  it('takes the redirect URI with the callback query appended, as omniauth-oauth2 sends it', async () => {
    const { location } = await authorizeAs({ response_type: 'code', client_id: confidentialApp.clientId, redirect_uri: confidentialApp.redirectUri, state: 'st' });
    const code = location.searchParams.get('code')!;
    const sent = `${confidentialApp.redirectUri}?code=${code}&state=st`;
    const answer = await tokenRequest(app, { grant_type: 'authorization_code', code, redirect_uri: sent, client_id: confidentialApp.clientId, client_secret: confidentialApp.secret! });
    expect(answer.status, answer.text).toBe(200);
  });

  it('takes the client credentials in HTTP Basic, and refuses a wrong secret with 401 invalid_client', async () => {
    const code = async () => (await authorizeAs({ response_type: 'code', client_id: confidentialApp.clientId, redirect_uri: confidentialApp.redirectUri })).location.searchParams.get('code')!;
    const basic = (secret: string) => ({ Authorization: `Basic ${Buffer.from(`${confidentialApp.clientId}:${secret}`).toString('base64')}` });
    const good = await tokenRequest(app, { grant_type: 'authorization_code', code: await code(), redirect_uri: confidentialApp.redirectUri }, basic(confidentialApp.secret!));
    expect(good.status, good.text).toBe(200);
    const bad = await tokenRequest(app, { grant_type: 'authorization_code', code: await code(), redirect_uri: confidentialApp.redirectUri }, basic('ns_wrong'));
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(bad.body.error).toBe('invalid_client');
    const noSecret = await tokenRequest(app, { grant_type: 'authorization_code', code: await code(), redirect_uri: confidentialApp.redirectUri, client_id: confidentialApp.clientId });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error).toBe('invalid_client');
  });

  it('redirects a denied consent with access_denied and the state', async () => {
    const { challenge } = pkcePair();
    const { location } = await authorizeAs(publicParameters(challenge, { state: 'deny-me' }), 'deny');
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('deny-me');
    expect(location.searchParams.has('code')).toBe(false);
  });

  it('shows a page, never a redirect, when the app or its redirect URI is not registered', async () => {
    const browser = new CookieBrowser(app.baseUrl);
    const { challenge } = pkcePair();
    for (const parameters of [
      publicParameters(challenge, { redirect_uri: 'https://evil.example/steal' }),
      publicParameters(challenge, { redirect_uri: `${publicApp.redirectUri}/more` }),
      publicParameters(challenge, { client_id: 'nope' }),
      { response_type: 'code' },
    ]) {
      const answer = await browser.get(authorizePath(parameters));
      expect(answer.status).toBe(400);
      expect(answer.location).toBeNull();
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });

  it('redirects request errors once the redirect URI is known: PKCE missing for a public app, plain PKCE, a bad scope', async () => {
    const browser = new CookieBrowser(app.baseUrl);
    const { challenge } = pkcePair();
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'code', client_id: publicApp.clientId, redirect_uri: publicApp.redirectUri, state: 's' }, 'invalid_request'],
      [publicParameters(challenge, { code_challenge_method: 'plain' }), 'invalid_request'],
      [publicParameters(challenge, { scope: 'admin' }), 'invalid_scope'],
      [publicParameters(challenge, { response_type: 'token' }), 'unsupported_response_type'],
    ];
    for (const [parameters, error] of cases) {
      const answer = await browser.get(authorizePath(parameters));
      expect(answer.status).toBe(302);
      const location = new URL(answer.location!);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('state')).toBe(parameters.state ?? null);
    }
  });

  it('skips consent the second time, and for a first-party app', async () => {
    const { challenge } = pkcePair();
    const { browser } = await authorizeAs(publicParameters(challenge));
    const again = await browser.get(authorizePath(publicParameters(challenge)));
    expect(again.status).toBe(302);
    expect(new URL(again.location!).searchParams.get('code')).toBeTruthy();

    const firstParty = await makeClient(app, { name: 'Official iOS', firstParty: true, redirectUris: ['notesapp://first'] });
    const fresh = new CookieBrowser(app.baseUrl);
    const who = await freshUser();
    const answer = await fresh.signIn(authorizePath({ response_type: 'code', client_id: firstParty.clientId, code_challenge: challenge, code_challenge_method: 'S256' }), who.username, who.password);
    expect(answer.status).toBe(302);
    expect(answer.location).toMatch(/^notesapp:\/\/first\?code=/);
  });

  it('keeps the session in an HttpOnly, SameSite=Lax cookie, Secure only behind https, ended by signing out', async () => {
    const { username, password } = await freshUser();
    const browser = new CookieBrowser(app.baseUrl);
    const form = await browser.get('/oauth/sign-in');
    const response = await fetch(`${app.baseUrl}/oauth/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `notes_csrf=${browser.cookies.get('notes_csrf')}` },
      body: new URLSearchParams({ ...hiddenFields(form.text), login: username, password }),
      redirect: 'manual',
    });
    expect(response.status).toBe(200);
    const session = response.headers.getSetCookie().find((cookie) => cookie.startsWith('notes_session='))!;
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Lax/);
    expect(session).not.toMatch(/; Secure/);
    const secret = /^notes_session=([^;]+)/.exec(session)![1]!;
    const signedIn = new CookieBrowser(app.baseUrl);
    signedIn.cookies.set('notes_session', secret);
    expect((await signedIn.get('/oauth/sign-in')).text).toContain('You are signed in');
    // the session's own CSRF token is on its consent pages; signing out needs it
    const { challenge } = pkcePair();
    const consent = await signedIn.get(authorizePath(publicParameters(challenge)));
    expect((await signedIn.post('/oauth/sign-out', { csrf_token: 'forged' })).status).toBe(403);
    expect((await signedIn.post('/oauth/sign-out', { csrf_token: hiddenFields(consent.text).csrf_token! })).status).toBe(200);
    expect((await signedIn.get(authorizePath(publicParameters(challenge)))).text).toContain('action="/oauth/sign-in"');
  });

  it('refuses forms without the CSRF token, and a wrong password', async () => {
    const browser = new CookieBrowser(app.baseUrl);
    const { challenge } = pkcePair();
    const { username, password } = await freshUser();
    await browser.get(authorizePath(publicParameters(challenge)));
    const noToken = await browser.post('/oauth/sign-in', { login: username, password, return_to: authorizePath(publicParameters(challenge)) });
    expect(noToken.status).toBe(403);
    expect(browser.cookies.has('notes_session')).toBe(false);
    const wrong = await browser.signIn(authorizePath(publicParameters(challenge)), username, 'not the password');
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('wrong');
    const consent = await browser.signIn(authorizePath(publicParameters(challenge)), username, password);
    const forged = await browser.post('/oauth/authorize', { ...Object.fromEntries(new URLSearchParams(authorizePath(publicParameters(challenge)).split('?')[1])), decision: 'allow', csrf_token: 'forged' });
    expect(consent.status).toBe(200);
    expect(forged.status).toBe(403);
    expect(forged.location).toBeNull();
  });
});

describe('the pages’ product name and language', () => {
  const japanese = { 'Accept-Language': 'ja,en;q=0.8' };
  /** A request with headers the cookie browser does not send (Accept-Language), cookies passed by hand. */
  async function fetchPage(path: string, headers: Record<string, string>, form?: Record<string, string>) {
    const response = await fetch(app.baseUrl + path, {
      method: form ? 'POST' : 'GET',
      headers: form ? { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' } : headers,
      body: form ? new URLSearchParams(form).toString() : undefined,
      redirect: 'manual',
    });
    return { status: response.status, headers: response.headers, cookies: response.headers.getSetCookie(), text: await response.text() };
  }

  it('names the product on the sign-in page and in the title of every page, in English by default', async () => {
    const { challenge } = pkcePair();
    const signIn = await new CookieBrowser(app.baseUrl).get(authorizePath(publicParameters(challenge)));
    expect(signIn.text).toContain('<html lang="en">');
    expect(signIn.text).toContain('<title>Sign in · Notes</title>');
    expect(signIn.text).toMatch(/<main><p class="brand">Notes<\/p><h1>Sign in<\/h1><p class="lead">Sign in to continue to <strong>Pocket Notes<\/strong>\.<\/p>/);
    expect(signIn.text).toContain('<label for="login">User name</label>');
    expect(signIn.headers.get('content-language')).toBe('en');
    const plain = await new CookieBrowser(app.baseUrl).get('/oauth/sign-in');
    expect(plain.text).toContain('Use your Notes account to continue.');
    const broken = await new CookieBrowser(app.baseUrl).get(authorizePath(publicParameters(challenge, { client_id: 'nope' })));
    expect(broken.status).toBe(400);
    expect(broken.text).toContain('<title>Cannot authorize · Notes</title>');
    expect(broken.text).toContain('the app this link names is not registered here');
    // a browser that prefers English to Japanese gets English
    expect((await fetchPage('/oauth/sign-in', { 'Accept-Language': 'en-US,en;q=0.9,ja;q=0.8' })).text).toContain('<html lang="en">');
  });

  it('speaks Japanese to a browser that asks for it: the sign-in page, a failed sign-in, a broken link, a refusal', async () => {
    const { challenge } = pkcePair();
    const { username } = await freshUser();
    const path = authorizePath(publicParameters(challenge));
    const form = await fetchPage(path, japanese);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-language')).toBe('ja');
    expect(form.text).toContain('<html lang="ja">');
    expect(form.text).toContain('<title>サインイン · Notes</title>');
    expect(form.text).toContain('<p class="brand">Notes</p><h1>サインイン</h1>');
    expect(form.text).toContain('<strong>Pocket Notes</strong> の利用を続けるには、サインインしてください。');
    expect(form.text).toContain('<label for="login">ユーザー名</label>');
    expect(form.text).toContain('<label for="password">パスワード</label>');
    expect(form.text).toContain('<button type="submit">サインイン</button>');
    expect(form.text).not.toMatch(/Sign in|User name|Password/);

    const csrf = /^notes_csrf=([^;]+)/.exec(form.cookies.find((cookie) => cookie.startsWith('notes_csrf='))!)![1]!;
    const wrong = await fetchPage('/oauth/sign-in', { ...japanese, Cookie: `notes_csrf=${csrf}` }, { ...hiddenFields(form.text), login: username, password: 'not the password' });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('<html lang="ja">');
    expect(wrong.text).toContain('<p class="error" role="alert">ユーザー名またはパスワードが違います。</p>');
    expect(wrong.text).toContain(`value="${username}"`);
    expect(wrong.text).not.toContain('wrong');
    const expired = await fetchPage('/oauth/sign-in', japanese, { ...hiddenFields(form.text), login: username, password: 'not the password' });
    expect(expired.status).toBe(403);
    expect(expired.text).toContain('フォームの有効期限が切れました。もう一度サインインしてください。');

    const broken = await fetchPage(authorizePath(publicParameters(challenge, { redirect_uri: 'https://evil.example/steal' })), japanese);
    expect(broken.status).toBe(400);
    expect(broken.text).toContain('<title>承認できません · Notes</title>');
    expect(broken.text).toContain('このリンクのリダイレクト URI はアプリに登録されていません');
    const refused = await fetch(`${app.baseUrl}/oauth/authorize`, { method: 'PUT', headers: japanese });
    expect(refused.status).toBe(405);
    expect(await refused.text()).toMatch(/<html lang="ja">[\s\S]*<h1>使えないメソッド<\/h1>/);
  });

  it('shows the consent page in the signed-in user’s language, whatever the browser asks for', async () => {
    const { challenge } = pkcePair();
    const jun = await makeUser(app, undefined, { lang: 'ja' });
    const junPassword = await givePassword(app, jun.user);
    const browser = new CookieBrowser(app.baseUrl);
    const consent = await browser.signIn(authorizePath(publicParameters(challenge)), jun.user.username, junPassword);
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain('<html lang="ja">');
    expect(consent.text).toContain('<title>Pocket Notes を承認 · Notes</title>');
    expect(consent.text).toContain(`<strong>Pocket Notes</strong> が <strong>${jun.user.username}</strong> として次のことを行う許可を求めています:`);
    expect(consent.text).toContain('<li>あなたのノート、ページ、課題、コメントを読む</li><li>あなたとしてノート、ページ、課題、コメントを作成・変更する</li>');
    expect(consent.text).toContain('value="allow">許可</button>');
    expect(consent.text).toContain('value="deny">拒否</button>');
    const answer = await browser.decide(consent, 'allow');
    expect(answer.status).toBe(303);
    expect(new URL(answer.location!).searchParams.get('code')).toBeTruthy();

    // an English user on a Japanese browser: the setting wins
    const { username, password: englishPassword } = await freshUser();
    const english = new CookieBrowser(app.baseUrl);
    await english.signIn(authorizePath(publicParameters(challenge)), username, englishPassword);
    const cookie = `notes_session=${english.cookies.get('notes_session')}`;
    const readOnly = await fetchPage(authorizePath(publicParameters(challenge, { scope: 'read' })), { ...japanese, Cookie: cookie });
    expect(readOnly.text).toContain('<html lang="en">');
    expect(readOnly.text).toMatch(/<ul><li>read your notes, pages, issues and comments<\/li><\/ul>/);
    expect((await fetchPage('/oauth/sign-in', { ...japanese, Cookie: cookie })).text).toContain(`You are signed in as ${username}.`);
  });

  it('describes an app that only proposes changes in Japanese too', async () => {
    const proposer = await makeClient(app, { name: 'Agent <App>', writes: 'proposals', redirectUris: ['http://127.0.0.1:9/agent'] });
    const jun = await makeUser(app, undefined, { lang: 'ja' });
    const consent = await new CookieBrowser(app.baseUrl).signIn(
      authorizePath({ response_type: 'code', client_id: proposer.clientId, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', scope: 'write' }),
      jun.user.username, await givePassword(app, jun.user),
    );
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain('<h1>Agent &#60;App&#62; を承認</h1>');
    expect(consent.text).toContain('<li>ページへの変更を提案する: ');
    expect(consent.text).toContain('<li>あなたとしてコメントし、課題を作成する</li>');
    expect(consent.text).not.toContain('作成・変更する');
  });
});
