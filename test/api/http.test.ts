// The request flow every operation shares: problem details, media types, sizes, methods, suffixes, system routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedBudget } from '../../src/http/rate-limit.ts';
import { Team } from '../../src/modules/teams/team.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let alice: Actor;

beforeAll(async () => {
  app = await startTestApp({ LIMIT_REQUEST_BODY_BYTES: '4096', RATE_LIMIT_PER_HOUR: '1000' });
  alice = await makeUser(app, 'alice');
});
afterAll(async () => app?.close());

describe('problem details', () => {
  it('answers malformed JSON with 400 problem+json and changes nothing', async () => {
    const answer = await alice.client.post('/api/v1/teams', { raw: { body: '{"team": {"name": "x"', contentType: 'application/json' } });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(answer.body).toMatchObject({ status: 400, code: 'malformed_body', title: 'Bad Request' });
    expect(answer.body.type).toBe('about:blank');
    expect(answer.body.request_id).toBeTruthy();
    expect(answer.body).not.toHaveProperty('stack');
  });

  it('names the failing field with a JSON pointer', async () => {
    const answer = await alice.client.post('/api/v1/teams', { json: { team: { name: { first: 'x' } } } });
    expect(answer.status).toBe(400);
    expect(answer.body.errors.some((error: { pointer?: string }) => error.pointer === '/team/name')).toBe(true);
  });

  it('answers a malformed multipart body with 400', async () => {
    const note = await makeNote(app, 'alice', alice.user, { slug: 'uploads' });
    const body = '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc';
    const answer = await alice.client.post(`/api/v1/alice/${note.id}/attachments`, { raw: { body, contentType: 'multipart/form-data; boundary=xyz' } });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('malformed_body');
  });

  it('answers an unknown media type with 415', async () => {
    const answer = await alice.client.post('/api/v1/teams', { raw: { body: 'name=x', contentType: 'text/plain' } });
    expect(answer.status).toBe(415);
    expect(answer.body.code).toBe('unsupported_media_type');
  });

  it('answers an oversized body with 413 and stores nothing', async () => {
    const answer = await alice.client.post('/api/v1/teams', { json: { team: { name: 'big' }, padding: 'x'.repeat(5000) } });
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('payload_too_large');
    expect(await app.em().count(Team, { name: 'big' })).toBe(0);
  });

  it('answers a wrong method with 405 and an unknown path with 404', async () => {
    const wrongMethod = await alice.client.post('/api/v1/me');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.code).toBe('method_not_allowed');
    const unknown = await alice.client.get('/api/v1/no/such/path/here/at/all');
    expect(unknown.status).toBe(404);
    expect((await anonymous(app).get('/nothing-here-at-all/x/y/z')).status).toBe(404);
  });

  it('keeps a sane incoming request id and makes one otherwise', async () => {
    const kept = await alice.client.get('/api/v1/me', { headers: { 'X-Request-Id': 'trace-12345678' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-12345678');
    const made = await alice.client.get('/api/v1/me', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('rate limit', () => {
  it('sends RateLimit headers on every answer', async () => {
    const answer = await alice.client.get('/api/v1/me');
    expect(answer.headers.get('ratelimit-limit')).toBe('1000');
    expect(Number(answer.headers.get('ratelimit-remaining'))).toBeLessThan(1000);
    expect(Number(answer.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
  });

  it('answers 429 with Retry-After past the budget', async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_HOUR: '3' });
    try {
      const bob = await makeUser(limited, 'bob');
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await bob.client.get('/api/v1/me')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const answer = await bob.client.get('/api/v1/me');
      expect(answer.body.code).toBe('rate_limited');
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe('the budget\'s leases', () => {
  async function burst(actor: Actor, requests: number): Promise<void> {
    for (let done = 0; done < requests; done += 50) {
      const statuses = await Promise.all(Array.from({ length: 50 }, async () => (await actor.client.get('/api/v1/me')).status));
      expect(statuses.every((status) => status === 200)).toBe(true);
    }
  }
  async function used(on: TestApp, actor: Actor): Promise<number> {
    const rows = await on.em().execute<{ used: number }[]>(`select used from rate_limits r join tokens t on r.key = 'token:' || t.id where t.user_id = ?`, [actor.user.id]);
    return Number(rows[0]!.used);
  }

  it('grow for a token spending them fast, never past 1% of what is left; a small budget keeps leases of 1%', async () => {
    const large = await startTestApp({ RATE_LIMIT_PER_HOUR: '1000000' }, { countQueries: true });
    try {
      // the budget itself, spent in-process: each lease of 50 is spent in far less than 100 ms, however loaded the machine
      const budget = new SharedBudget(1_000_000, 3600, { maxLease: 50 });
      const em = large.em();
      const before = large.rateLimitLeases();
      for (let done = 0; done < 2000; done += 50) {
        const verdicts = await Promise.all(Array.from({ length: 50 }, () => budget.spend(em, 'test:fast')));
        expect(verdicts.every((verdict) => !verdict.exceeded)).toBe(true);
      }
      const leases = large.rateLimitLeases() - before;
      // 40 leases of 50 without growth (50 are waiting at a time); fewer, larger ones with it
      expect(leases).toBeGreaterThan(0);
      expect(leases).toBeLessThan(40);
      // what is leased and not yet spent is at most 1% of the budget (10,000)
      const rows = await large.em().execute<{ used: number }[]>(`select used from rate_limits where key = 'test:fast'`);
      expect(Number(rows[0]!.used) - 2000).toBeLessThanOrEqual(10_000);
    } finally {
      await large.close();
    }
    // this file's app: 1,000 an hour, so a lease is at most 10 beyond what is waiting (50 at once here)
    const dave = await makeUser(app, 'dave');
    await burst(dave, 200);
    expect((await used(app, dave)) - 200).toBeLessThanOrEqual(50);
  });
});

describe('system routes', () => {
  it('answers /healthz and /readyz without a token', async () => {
    expect((await anonymous(app).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await anonymous(app).get('/readyz')).body).toEqual({ status: 'ready' });
  });

  it('serves the bundled OpenAPI document and the API reference', async () => {
    const document = await anonymous(app).get('/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toMatch(/^3\.1/);
    const docs = await anonymous(app).get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toContain('text/html');
  });

  it('serves avatars as SVG, the same for the same id', async () => {
    const first = await anonymous(app).get('/avatars/notes/7.svg');
    expect(first.status).toBe(200);
    expect(first.text).toMatch(/^<svg/);
    expect((await anonymous(app).get('/avatars/notes/7.svg')).text).toBe(first.text);
    expect((await anonymous(app).get('/avatars/things/7.svg')).status).toBe(404);
  });
});
