// The routes outside /api/v1 pass the input guard of the API and answer a method they lack with 405 and Allow, in
// their own format (src/http/input-guard.ts: plainRouter): the requests reported in issue 25, each as reported, and
// the rules around them. test/api/fuzz-outside-api.test.ts generates the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { givePassword, makeClient, tokenRequest } from '../support/oauth.ts';

let app: TestApp;
let alice: Actor;
let password: string;
let pageId: number;
let ios: Awaited<ReturnType<typeof makeClient>>;
const BODY_LIMIT = 256 * 1024;
const METRICS_TOKEN = 'outside-api-metrics-token';
const CSRF = 'c'.repeat(43);

beforeAll(async () => {
  app = await startTestApp({
    LIMIT_REQUEST_BODY_BYTES: String(BODY_LIMIT),
    METRICS_TOKEN,
    SIGN_IN_ATTEMPTS_PER_ACCOUNT: '1000',
    SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000',
  });
  alice = await makeUser(app, 'alice');
  password = await givePassword(app, alice.user);
  await makeTeam(app, 'acme', [{ user: alice.user, role: 'manager' }]);
  const note = await makeNote(app, 'acme', alice.user, { slug: 'handbook', title: 'Handbook' });
  pageId = (await makePage(app, note, alice, { title: 'Welcome' })).id;
  ios = await makeClient(app, { name: 'Notes for iOS', confidential: true, firstParty: true, redirectUris: ['notesapp://callback'] });
});
afterAll(async () => app?.close());

type Answer = { status: number; headers: Headers; text: string };

async function send(method: string, path: string, options: { form?: string; json?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.form !== undefined) headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
  if (options.json !== undefined) headers['Content-Type'] ??= 'application/json';
  const response = await fetch(app.baseUrl + path, { method, headers, body: options.form ?? options.json, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function expectPage(answer: Answer, status: number): void {
  expect(answer.status, answer.text.slice(0, 300)).toBe(status);
  expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(answer.text).toMatch(/^<!doctype html>/);
  expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
}

function expectOAuthError(answer: Answer, status: number, error = 'invalid_request'): Record<string, unknown> {
  expect(answer.status, answer.text.slice(0, 300)).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(answer.headers.get('cache-control')).toBe('no-store');
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error).toBe(error);
  expect(body.error_description).toEqual(expect.any(String));
  return body;
}

function expectProblem(answer: Answer, status: number, code: string): Record<string, unknown> {
  expect(answer.status, answer.text.slice(0, 300)).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  expect(body).toMatchObject({ status, code });
  return body;
}

/** The rows a refused OAuth request must not have written, sign-in attempts counted included. */
async function written(): Promise<Record<string, string>> {
  const tables = ['oauth_codes', 'oauth_refresh_tokens', 'oauth_grants', 'browser_sessions', 'oauth_clients'];
  const rows = await app.em().execute<Record<string, string>[]>(
    `select ${tables.map((table) => `(select count(*) from ${table})::text as ${table}`).join(', ')},
      (select count(*) from tokens where user_id = ${alice.user.id})::text as tokens,
      (select coalesce(sum(used), 0) from rate_limits where key not like 'token:%')::text as sign_in_attempts`,
  );
  return rows[0]!;
}

const basic = (pair: string) => ({ Authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` });

describe('NUL in an OAuth parameter (issue 25)', () => {
  it('GET /oauth/authorize?response_type=code&client_id=a%00b answers 400 with an HTML page', async () => {
    const before = await written();
    const answer = await send('GET', '/oauth/authorize?response_type=code&client_id=a%00b');
    expectPage(answer, 400);
    expect(answer.text).toContain('client_id must not contain NUL');
    expect(await written()).toEqual(before);
  });

  it('POST /oauth/revoke with client_id=a%00b as a form, as JSON or in HTTP Basic answers 400 invalid_request', async () => {
    const before = await written();
    expectOAuthError(await send('POST', '/oauth/revoke', { form: 'client_id=a%00b&token=x' }), 400);
    expectOAuthError(await send('POST', '/oauth/revoke', { json: '{"client_id":"a\\u0000b","token":"x"}' }), 400);
    // Basic credentials are form-encoded (RFC 6749 section 2.3.1): `a%00b` is a NUL once decoded, as is a raw one
    expectOAuthError(await send('POST', '/oauth/revoke', { form: 'token=x', headers: basic('a%00b:secret') }), 400);
    expectOAuthError(await send('POST', '/oauth/revoke', { form: 'token=x', headers: basic('a\u0000b:secret') }), 400);
    expectOAuthError(await send('POST', '/oauth/revoke', { form: 'token=x', headers: basic(`${ios.clientId}:se%00cret`) }), 400);
    expect(await written()).toEqual(before);
  });

  it('POST /oauth/token with grant_type=password&username=a%00b answers 400 invalid_request and counts no attempt', async () => {
    const before = await written();
    const form = `grant_type=password&username=a%00b&password=${encodeURIComponent(password)}&client_id=${ios.clientId}&client_secret=${ios.secret}`;
    const body = expectOAuthError(await send('POST', '/oauth/token', { form }), 400);
    expect(body.error_description).toContain('username must not contain NUL');
    expectOAuthError(await send('POST', '/oauth/token', { form: form.replace('username=', 'login=') }), 400);
    expectOAuthError(await send('POST', '/oauth/token', { json: JSON.stringify({ grant_type: 'password', username: 'a\u0000b', password, client_id: ios.clientId, client_secret: ios.secret }) }), 400);
    expect(await written()).toEqual(before);
  });

  it('POST /oauth/sign-in with login=a%00b answers 400 with an HTML page, counts no attempt and starts no session', async () => {
    const before = await written();
    const answer = await send('POST', '/oauth/sign-in', { form: `login=a%00b&password=${encodeURIComponent(password)}` });
    expectPage(answer, 400);
    expect(answer.text).toContain('login must not contain NUL');
    // with the form's CSRF token too, the guard comes first
    const withToken = await send('POST', '/oauth/sign-in', { form: `csrf_token=${CSRF}&login=a%00b&password=x`, headers: { Cookie: `notes_csrf=${CSRF}` } });
    expectPage(withToken, 400);
    expect(withToken.headers.getSetCookie()).toEqual([]);
    expect(await written()).toEqual(before);
  });

  it('a lone surrogate in a JSON body of /oauth/token or /oauth/revoke answers 400 invalid_request', async () => {
    const before = await written();
    expectOAuthError(await send('POST', '/oauth/token', { json: `{"grant_type":"password","username":"al\\ud800ice","password":"x","client_id":"${ios.clientId}"}` }), 400);
    expectOAuthError(await send('POST', '/oauth/revoke', { json: `{"token":"\\udfff","client_id":"${ios.clientId}"}` }), 400);
    expect(await written()).toEqual(before);
  });

  it('a 20,000-character login is refused as a wrong one, not with a 500 (its attempt is counted under a hash)', async () => {
    const login = Array.from({ length: 2000 }, (_, index) => (index * 7919).toString(36)).join('').slice(0, 20_000);
    const answer = await tokenRequest(app, { grant_type: 'password', username: login, password: 'x', client_id: ios.clientId, client_secret: ios.secret! });
    expect([answer.status, answer.body.error]).toEqual([400, 'invalid_grant']);
    const keys = await app.em().execute<{ key: string }[]>(`select key from rate_limits where key like 'account#%'`);
    expect(keys.map(({ key }) => key.length)).toEqual([8 + 64]);
  });

  it('other routes: a NUL in the query answers 400, in a path segment 404, each in its format', async () => {
    expectProblem(await send('GET', '/healthz?x=%00'), 400, 'validation_failed');
    expectProblem(await send('GET', '/.well-known/oauth-authorization-server?x=a%00b'), 400, 'validation_failed');
    expectProblem(await send('GET', '/avatars/notes/7.svg?v=%00'), 400, 'validation_failed');
    expectPage(await send('GET', '/oauth/sign-in?return_to=%00'), 400);
    const bearer = { Authorization: `Bearer ${alice.token}` };
    expectProblem(await send('GET', '/acme/hand%00book', { headers: bearer }), 404, 'not_found');
    const page = await send('GET', '/acme/hand%00book', { headers: { ...bearer, Accept: 'text/html' } });
    expect([page.status, page.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    expectProblem(await send('GET', '/activity?page=%00', { headers: bearer }), 400, 'validation_failed');
  });

  it('integers of the views are decimal digits up to 2147483647: 404 in the path, 400 in the query', async () => {
    const bearer = { Authorization: `Bearer ${alice.token}` };
    expect((await send('GET', `/acme/handbook/${pageId}`, { headers: bearer })).status).toBe(200);
    for (const path of ['/acme/handbook/issues/2147483648', '/acme/handbook/requests/99999999999', '/acme/handbook/99999999999999', `/acme/handbook/${pageId}/histories/1e3`]) {
      expectProblem(await send('GET', path, { headers: bearer }), 404, 'not_found');
    }
    for (const query of ['page=1e3', 'page=0x2', 'page=2147483648', 'page[]=1']) {
      expectProblem(await send('GET', `/activity?${query}`, { headers: bearer }), 400, 'validation_failed');
    }
    expectProblem(await send('GET', `/acme/handbook/${pageId}/histories/diff?a=-1`, { headers: bearer }), 400, 'validation_failed');
    expectProblem(await send('GET', '/avatars/notes/2147483648.svg'), 404, 'not_found');
    expect((await send('GET', '/avatars/notes/2147483647.svg')).status).toBe(200);
  });
});

describe('a method a route lacks (issue 25)', () => {
  it('PUT, PATCH and DELETE /oauth/authorize answer 405 with Allow, as an HTML page', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const answer = await send(method, '/oauth/authorize');
      expectPage(answer, 405);
      expect(answer.headers.get('allow')).toBe('GET, HEAD, POST');
    }
  });

  it('POST, PUT, PATCH and DELETE /.well-known/oauth-authorization-server answer 405 with Allow, as problem details', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const answer = await send(method, '/.well-known/oauth-authorization-server');
      expectProblem(answer, 405, 'method_not_allowed');
      expect(answer.headers.get('allow')).toBe('GET, HEAD');
    }
  });

  it('every other route outside /api/v1 answers 405 with Allow, in its own format', async () => {
    const bearer = { Authorization: `Bearer ${alice.token}` };
    const cases: [method: string, path: string, allow: string, format: 'page' | 'oauth' | 'problem' | 'view'][] = [
      ['GET', '/oauth/token', 'POST', 'oauth'],
      ['PUT', '/oauth/revoke', 'POST', 'oauth'],
      ['DELETE', '/oauth/sign-in', 'GET, HEAD, POST', 'page'],
      ['GET', '/oauth/sign-out', 'POST', 'page'],
      ['POST', '/oauth/style.css', 'GET, HEAD', 'page'],
      ['POST', '/healthz', 'GET, HEAD', 'problem'],
      ['DELETE', '/readyz', 'GET, HEAD', 'problem'],
      ['PUT', '/openapi.json', 'GET, HEAD', 'problem'],
      ['POST', '/docs', 'GET, HEAD', 'problem'],
      ['POST', '/avatars/notes/7.svg', 'GET, HEAD', 'problem'],
      ['POST', '/metrics', 'GET, HEAD', 'problem'],
      ['POST', '/web/style.css', 'GET, HEAD', 'view'],
      ['POST', '/', 'GET, HEAD', 'view'],
      ['DELETE', '/acme/handbook', 'GET, HEAD', 'view'],
      ['PUT', `/acme/handbook/${pageId}`, 'GET, HEAD', 'view'],
      ['PATCH', '/users/alice', 'GET, HEAD', 'view'],
      ['POST', `/acme/handbook/${pageId}/histories/diff`, 'GET, HEAD', 'view'],
      ['HEAD', '/oauth/token', 'POST', 'oauth'],
    ];
    for (const [method, path, allow, format] of cases) {
      const answer = await send(method, path, { headers: bearer });
      expect([method, path, answer.status, answer.headers.get('allow')]).toEqual([method, path, 405, allow]);
      if (method === 'HEAD') continue;
      if (format === 'page') expectPage(answer, 405);
      if (format === 'oauth') expectOAuthError(answer, 405);
      if (format === 'problem' || format === 'view') expectProblem(answer, 405, 'method_not_allowed');
      if (format === 'view') {
        const page = await send(method, path, { headers: { ...bearer, Accept: 'text/html' } });
        expect([page.status, page.headers.get('allow'), page.headers.get('content-type')]).toEqual([405, allow, 'text/html; charset=utf-8']);
      }
    }
  });

  it('HEAD follows GET, OPTIONS answers 200 with Allow, and a path no route has is still 404', async () => {
    const head = await send('HEAD', '/.well-known/oauth-authorization-server');
    expect([head.status, head.text]).toEqual([200, '']);
    for (const [path, allow] of [['/oauth/authorize', 'GET, HEAD, POST'], ['/oauth/token', 'POST'], ['/healthz', 'GET, HEAD']] as const) {
      const options = await send('OPTIONS', path);
      expect([options.status, options.headers.get('allow'), options.text]).toEqual([200, allow, allow]);
    }
    expectProblem(await send('POST', '/nothing/here/at/all/x'), 404, 'not_found');
    expectProblem(await send('PUT', '/oauth/nothing-here/x'), 404, 'not_found');
    expectProblem(await send('DELETE', '/avatars/things/7.svg'), 404, 'not_found');
    expectProblem(await send('POST', '/acme/handbook/not-a-page'), 404, 'not_found');
  });
});

describe('the body limit of /oauth/token and /oauth/revoke (issue 25)', () => {
  const padding = (bytes: number) => `&padding=${'x'.repeat(bytes)}`;

  it('takes a body past 64 KiB within LIMIT_REQUEST_BODY_BYTES', async () => {
    const form = `grant_type=password&username=alice&password=${encodeURIComponent(password)}&client_id=${ios.clientId}&client_secret=${ios.secret}`;
    const granted = await send('POST', '/oauth/token', { form: form + padding(100 * 1024) });
    expect(granted.status, granted.text).toBe(200);
    const token = (JSON.parse(granted.text) as { access_token: string }).access_token;
    const revoked = await send('POST', '/oauth/revoke', { form: `token=${token}&client_id=${ios.clientId}&client_secret=${ios.secret}${padding(100 * 1024)}` });
    expect(revoked.status, revoked.text).toBe(200);
    expect((await send('GET', '/api/v1/me', { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
    const json = await send('POST', '/oauth/revoke', { json: JSON.stringify({ token: 'nt_none', client_id: ios.clientId, client_secret: ios.secret, padding: 'x'.repeat(100 * 1024) }) });
    expect(json.status, json.text).toBe(200);
  });

  it('refuses a body past LIMIT_REQUEST_BODY_BYTES with 413, in each route’s format, and stores nothing', async () => {
    const before = await written();
    const form = `grant_type=password&username=alice&password=${encodeURIComponent(password)}&client_id=${ios.clientId}&client_secret=${ios.secret}${padding(BODY_LIMIT)}`;
    expectOAuthError(await send('POST', '/oauth/token', { form }), 413);
    expectOAuthError(await send('POST', '/oauth/revoke', { form: `token=x${padding(BODY_LIMIT)}` }), 413);
    expectOAuthError(await send('POST', '/oauth/revoke', { json: JSON.stringify({ token: 'x', padding: 'x'.repeat(BODY_LIMIT) }) }), 413);
    expectPage(await send('POST', '/oauth/sign-in', { form: `csrf_token=${CSRF}&login=alice&password=x${padding(BODY_LIMIT)}`, headers: { Cookie: `notes_csrf=${CSRF}` } }), 413);
    expectPage(await send('POST', '/oauth/authorize', { form: `client_id=x${padding(BODY_LIMIT)}` }), 413);
    expect(await written()).toEqual(before);
  });

  it('refuses more than 50 form fields with 413', async () => {
    const many = Array.from({ length: 51 }, (_, index) => `k${index}=1`).join('&');
    expectOAuthError(await send('POST', '/oauth/token', { form: `grant_type=password&${many}` }), 413);
    expectPage(await send('POST', '/oauth/sign-out', { form: many }), 413);
  });
});

describe('found by the fuzzing of these routes', () => {
  it('POST /oauth/sign-out, signed in, with a body that is not a form answers 403 (it read a body that was not there: 500)', async () => {
    const signIn = await send('POST', '/oauth/sign-in', { form: `csrf_token=${CSRF}&login=alice&password=${encodeURIComponent(password)}`, headers: { Cookie: `notes_csrf=${CSRF}` } });
    expect(signIn.status, signIn.text).toBe(200);
    const cookie = signIn.headers.getSetCookie().find((text) => text.startsWith('notes_session='))!.split(';')[0]!;
    const before = await written();
    const answer = await send('POST', '/oauth/sign-out', { headers: { Cookie: cookie, 'Content-Type': 'text/plain' }, form: 'csrf_token=x' });
    expectPage(answer, 403);
    expect(await written()).toEqual(before);
  });
});
