// Operations (issue 12): logs with credentials redacted by the logger, /metrics behind METRICS_TOKEN, ETag and 304 on
// the API's GETs, HEAD wherever GET answers, CORS_ORIGINS, compression of JSON.
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { signInLimits } from '../../src/modules/oauth/sign-in-limits.ts';
import { ApiClient } from '../support/client.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, makeUser, notePath, type Actor } from '../support/factories.ts';

const METRICS_TOKEN = 'metrics-secret-0123456789abcdef';
const ORIGIN = 'https://notes.example.com';
const lines: string[] = [];
let app: TestApp;
let member: Actor;
let noteUrl: string;
let pageUrl: string;

beforeAll(async () => {
  app = await startTestApp(
    { LOG_LEVEL: 'debug', METRICS_TOKEN, CORS_ORIGINS: `${ORIGIN}, http://localhost:8080` },
    { logTo: { write: (line: string) => void lines.push(line) } },
  );
  member = await makeUser(app, 'opsmember');
  const note = await makeNote(app, 'opsmember', member.user, { slug: 'ops' });
  noteUrl = await notePath(app, note);
  const page = await makePage(app, note, member, { title: 'Big', content: `<p>${'operations '.repeat(400)}</p>` });
  pageUrl = `${noteUrl}/${page.id}`;
});
afterAll(async () => app?.close());

/** A raw HTTP exchange (fetch would decode the body and hide Content-Encoding). */
function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(app.baseUrl + path), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('logs', () => {
  it('never hold a token or a password, whether in a header, a query string, a form or a logged field', async () => {
    const password = 'correct-horse-battery-staple';
    const { secret } = await issueToken(app.em(), member.user, { scope: 'write' });
    const client = new ApiClient(app.baseUrl, secret);
    lines.length = 0;
    expect((await client.get('/api/v1/me')).status).toBe(200);
    expect((await client.get('/api/v1/me', { tokenInQuery: true })).status).toBe(200);
    expect((await client.get('/api/v1/me', { headers: { Cookie: `session=${secret}` } })).status).toBe(200);
    await new ApiClient(app.baseUrl).post('/oauth/token', { form: { grant_type: 'password', username: 'opsmember', password, client_id: 'x', client_secret: password } });
    const { createLogger } = await import('../../src/http/logger.ts');
    const direct: string[] = [];
    const logger = createLogger('debug', {}, { write: (line: string) => void direct.push(line) });
    logger.info({ password, access_token: secret, nested: { refresh_token: secret, deeper: { client_secret: password } } }, 'fields');
    // the project's older order (message first) still goes through the redaction
    (logger.child({ request_id: 'r1' }).warn as (...args: unknown[]) => void)('old order', { password, token: secret });
    const output = lines.join('') + direct.join('');
    expect(output).toContain('"message":"request"');
    expect(output).toContain('[Redacted]');
    expect(output).not.toContain(secret);
    expect(output).not.toContain(password);
    const requestLine = JSON.parse(lines.find((line) => line.includes('access_token'))!);
    expect(requestLine).toMatchObject({ level: 'info', message: 'request', res: { status: 200 }, operation_id: 'getMe', user_id: member.user.id });
    expect(requestLine.request.url).toBe('/api/v1/me?access_token=[Redacted]');
    const headerLine = JSON.parse(lines.find((line) => line.includes('"cookie"'))!);
    expect(headerLine.request.headers).toMatchObject({ authorization: '[Redacted]', cookie: '[Redacted]' });
    expect(JSON.parse(direct[1]!)).toMatchObject({ message: 'old order', password: '[Redacted]', request_id: 'r1' });
  });
});

describe('/metrics', () => {
  it('is read by a bearer of METRICS_TOKEN only, in the Prometheus format', async () => {
    await member.client.get('/api/v1/me');
    expect((await new ApiClient(app.baseUrl).get('/metrics')).status).toBe(401);
    expect((await new ApiClient(app.baseUrl, member.token).get('/metrics')).status).toBe(401);
    const answer = await new ApiClient(app.baseUrl, METRICS_TOKEN).get('/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(answer.text).toMatch(/http_requests_total\{operation="getMe",method="GET",status="200"\} \d+/);
    expect(answer.text).toMatch(/http_request_duration_seconds_bucket\{le="0\.005",operation="getMe",method="GET",status="200"\} \d+/);
    expect(answer.text).toMatch(/db_pool_connections\{state="total"\} \d+/);
    expect(answer.text).toMatch(/db_pool_connections\{state="waiting"\} \d+/);
    expect(answer.text).toMatch(/nodejs_eventloop_lag_seconds \d/);
    expect(answer.text).toMatch(/process_cpu_user_seconds_total \d/);
    expect(answer.text).toContain('notes_change_feed_live 1');
  });

  it('answers 404 when METRICS_TOKEN is not set', async () => {
    const plain = await startTestApp({}, { beside: app });
    try {
      expect((await new ApiClient(plain.baseUrl, METRICS_TOKEN).get('/metrics')).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('ETag and 304', () => {
  it('every GET of the API answers with an ETag, and 304 with no body when If-None-Match names it', async () => {
    for (const path of ['/api/v1/me', '/api/v1/notes', '/api/v1/users/opsmember', noteUrl, `${noteUrl}/pages`, pageUrl, pageUrl, `${noteUrl}/issues`]) {
      const first = await member.client.get(path);
      expect(first.status, path).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag, path).toMatch(/^(W\/)?"[^"]+"$/);
      const again = await member.client.get(path, { headers: { 'If-None-Match': `"other", ${etag}` } });
      expect(again.status, path).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      // a weak comparison: W/"x" names "x"
      expect((await member.client.get(path, { headers: { 'If-None-Match': etag.startsWith('W/') ? etag.slice(2) : `W/${etag}` } })).status).toBe(304);
      expect((await member.client.get(path, { headers: { 'If-None-Match': '"stale"' } })).status).toBe(200);
    }
  });

  it('changes when the answer does', async () => {
    const before = (await member.client.get(noteUrl)).headers.get('etag');
    expect((await member.client.patch(noteUrl, { json: { note: { title: 'Ops', team: 'opsmember', description: 'changed' } } })).status).toBe(200);
    const after = await member.client.get(noteUrl, { headers: { 'If-None-Match': before! } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
  });
});

describe('HEAD', () => {
  it('answers wherever GET does, with the status and headers of GET and no body', async () => {
    for (const path of ['/api/v1/me', '/api/v1/notes', noteUrl, `${noteUrl}/pages`, pageUrl, `${noteUrl}/issues`, '/api/v1/teams', '/healthz']) {
      const get = await raw('GET', path, { Authorization: `Bearer ${member.token}` });
      const head = await raw('HEAD', path, { Authorization: `Bearer ${member.token}` });
      expect(head.status, path).toBe(200);
      expect(head.body.length).toBe(0);
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
      expect(head.headers.etag).toBe(get.headers.etag);
    }
    expect((await raw('HEAD', `${noteUrl}/999999`, { Authorization: `Bearer ${member.token}` })).status).toBe(404);
    expect((await raw('HEAD', '/api/v1/me', {})).status).toBe(401);
  });
});

describe('CORS', () => {
  it('answers the preflight of an allowed origin, and exposes ETag, Link and the RateLimit headers', async () => {
    const preflight = await raw('OPTIONS', '/api/v1/notes', { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    expect(preflight.headers['access-control-allow-headers']).toBe('authorization,content-type');
    const get = await raw('GET', '/api/v1/notes', { Origin: ORIGIN, Authorization: `Bearer ${member.token}` });
    expect(get.headers['access-control-allow-origin']).toBe(ORIGIN);
    const exposed = String(get.headers['access-control-expose-headers']).split(',');
    expect(exposed).toEqual(expect.arrayContaining(['ETag', 'Link', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']));
  });

  it('gives nothing to another origin, nor anything when CORS_ORIGINS is not set', async () => {
    const other = await raw('OPTIONS', '/api/v1/notes', { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'DELETE' });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const plain = await startTestApp({}, { beside: app });
    try {
      const answer = await fetch(`${plain.baseUrl}/api/v1/notes`, { method: 'OPTIONS', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET' } });
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await plain.close();
    }
  });
});

describe('compression', () => {
  it('sends JSON over 1 KiB gzip-compressed to a client that accepts it, the same bytes once decoded', async () => {
    const plain = await raw('GET', pageUrl, { Authorization: `Bearer ${member.token}` });
    const zipped = await raw('GET', pageUrl, { Authorization: `Bearer ${member.token}`, 'Accept-Encoding': 'gzip' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/i);
    expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    const list = await raw('GET', `${noteUrl}/pages`, { Authorization: `Bearer ${member.token}`, 'Accept-Encoding': 'br' });
    expect(list.headers['content-encoding']).toBe('br');
  });
});

describe('sign-in limits, kept in the database like the token budgets', () => {
  const settings = { accessTokenSeconds: 3600, refreshTokenSeconds: 86400, signInAttemptsPerAccount: 2, signInAttemptsPerAddress: 3, signInWindowSeconds: 60, registrationsPerAddress: 20, registrationUnusedHours: 24 };

  it('count per account (case-insensitively) and per address, and report the tighter', async () => {
    const limits = signInLimits(settings);
    const em = app.em();
    expect(await limits.attempt(em, 'Alice', '10.0.0.1')).toMatchObject({ limit: 2, remaining: 1, exceeded: false });
    expect(await limits.attempt(em, 'alice', '10.0.0.2')).toMatchObject({ remaining: 0, exceeded: false });
    expect(await limits.attempt(em, 'ALICE', '10.0.0.3')).toMatchObject({ exceeded: true });
    expect(await limits.attempt(em, 'bob', '10.0.0.1')).toMatchObject({ remaining: 1, exceeded: false });
    expect(await limits.attempt(em, 'carol', '10.0.0.1')).toMatchObject({ remaining: 0, exceeded: false });
    expect(await limits.attempt(em, 'dave', '10.0.0.1')).toMatchObject({ limit: 3, exceeded: true });
    expect(await limits.attempt(em, 'dave', '10.0.0.9')).toMatchObject({ exceeded: false });
    // a second process (its own memory) sees the same counts
    expect(await signInLimits(settings).attempt(em, 'alice', '10.0.0.7')).toMatchObject({ exceeded: true });
  });
});
