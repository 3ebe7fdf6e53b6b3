// The hot reads answered ahead of express (src/http/hot-reads.ts, hotReadListener) give what the app gives the same
// read: every header, the log line and the measure; a read compression would change, and every read while CORS is on,
// is answered by the app's own layer, from memory too.
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, notePath } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

const METRICS_TOKEN = 'metrics-token-for-the-hot-read-test';
const ORIGIN = 'https://app.example';
let app: TestApp;
let s: Scenario;
const lines: string[] = [];

beforeAll(async () => {
  app = await startTestApp(
    { METRICS_TOKEN, LOG_LEVEL: 'info' },
    { countQueries: true, logTo: { write: (line: string) => void lines.push(line) } },
  );
  s = await makeScenario(app);
});
afterAll(async () => app?.close());

type Raw = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

/** A GET with exactly these headers (fetch would add Accept-Encoding). */
function get(path: string, headers: Record<string, string>, on = app): Promise<Raw> {
  return new Promise((resolve, reject) => {
    http.get(`${on.baseUrl}${path}`, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** The headers that differ between two answers of the same read: the date, the request's id, the budget left. */
const VARYING = new Set(['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset']);
function comparable(headers: http.IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !VARYING.has(name)).sort(([a], [b]) => a.localeCompare(b)));
}

async function pageUrl(content: string, on = app, scenario = s): Promise<string> {
  const note = await makeNote(on, scenario.team, scenario.manager.user, {});
  const page = await makePage(on, note, scenario.member, { title: 'Hot', content });
  return `${await notePath(on, note)}/${page.id}`;
}

/** Reads `url` whole (the `.json` form goes through the router and the operation), then hot, counting statements. */
async function wholeThenHot(url: string, headers: Record<string, string>, on = app): Promise<{ whole: Raw; hot: Raw; statements: number }> {
  const whole = await get(`${url}.json`, headers, on);
  await get(url, headers, on); // kept by the operation
  let hot!: Raw;
  const statements = await on.countQueries(async () => {
    hot = await get(url, headers, on);
  });
  return { whole, hot, statements };
}

function metricCount(text: string, operation: string, status: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`http_requests_total{operation="${operation}",method="GET",status="${status}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('hot reads ahead of express', () => {
  it('answer with every header the app gives the same read, with no statement, whether or not the client accepts an encoding', async () => {
    const url = await pageUrl('<p>short</p>');
    const bearer = { Authorization: `Bearer ${s.member.token}` };
    for (const headers of [bearer, { ...bearer, 'Accept-Encoding': 'gzip, br' }]) {
      const { whole, hot, statements } = await wholeThenHot(url, headers);
      expect(statements).toBe(0);
      expect(hot.status).toBe(200);
      expect(hot.body.equals(whole.body)).toBe(true);
      expect(comparable(hot.headers)).toEqual(comparable(whole.headers));
      expect(Number(hot.headers['ratelimit-remaining'])).toBeLessThan(Number(whole.headers['ratelimit-remaining']));
      expect(hot.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      // 304: the same as the app's, which has no Vary (compression leaves an answer without a content type alone)
      const conditional = { ...headers, 'If-None-Match': String(hot.headers.etag) };
      const [wholeUnchanged, hotUnchanged] = [await get(`${url}.json`, conditional), await get(url, conditional)];
      expect(hotUnchanged.status).toBe(304);
      expect(wholeUnchanged.status).toBe(304);
      expect(comparable(hotUnchanged.headers)).toEqual(comparable(wholeUnchanged.headers));
    }
    const accepting = (await wholeThenHot(url, { ...bearer, 'Accept-Encoding': 'gzip' })).hot;
    expect(accepting.headers.vary).toBe('Accept-Encoding');
  });

  it('leave a read compression would change, and every read while CORS is on, to the app, which answers them from memory the same', async () => {
    const long = `<p>${'a long paragraph of text. '.repeat(80)}</p>`;
    const url = await pageUrl(long);
    const bearer = { Authorization: `Bearer ${s.member.token}` };
    const gzip = await wholeThenHot(url, { ...bearer, 'Accept-Encoding': 'gzip' });
    expect(gzip.statements).toBe(0);
    expect(gzip.hot.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.hot.body).equals(gunzipSync(gzip.whole.body))).toBe(true);
    expect(comparable(gzip.hot.headers)).toEqual(comparable(gzip.whole.headers));
    // with CORS on, cors adds its headers to every answer, with an Origin or without
    const withCors = await startTestApp({ CORS_ORIGINS: ORIGIN }, { countQueries: true });
    try {
      const scenario = await makeScenario(withCors);
      const corsUrl = await pageUrl('<p>short</p>', withCors, scenario);
      const corsBearer = { Authorization: `Bearer ${scenario.member.token}` };
      for (const headers of [corsBearer, { ...corsBearer, Origin: ORIGIN }]) {
        const cors = await wholeThenHot(corsUrl, headers, withCors);
        expect(cors.statements).toBe(0);
        expect(cors.hot.headers.vary).toBe('Origin');
        expect(cors.hot.headers['access-control-allow-origin']).toBe(headers === corsBearer ? undefined : ORIGIN);
        expect(cors.hot.body.equals(cors.whole.body)).toBe(true);
        expect(comparable(cors.hot.headers)).toEqual(comparable(cors.whole.headers));
      }
    } finally {
      await withCors.close();
    }
  });

  it('take a lease of the budget when this process\'s is spent, as many times as it takes: every read answered', async () => {
    const url = await pageUrl('<p>leased</p>');
    const bearer = { Authorization: `Bearer ${s.member.token}` };
    await get(url, bearer);
    const leases = app.rateLimitLeases();
    const statuses = new Map<number, number>();
    const remaining: number[] = [];
    for (let round = 0; round < 10; round += 1) {
      for (const answer of await Promise.all(Array.from({ length: 25 }, () => get(url, bearer)))) {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        remaining.push(Number(answer.headers['ratelimit-remaining']));
      }
    }
    expect([...statuses]).toEqual([[200, 250]]);
    // 250 reads of a lease of at most 50 each: several leases taken, from the one budget the API spends
    expect(app.rateLimitLeases() - leases).toBeGreaterThanOrEqual(2);
    expect(Math.min(...remaining)).toBeLessThanOrEqual(5000 - 250);
  });

  it('are logged and measured as the app logs and measures a request', async () => {
    const url = await pageUrl('<p>measured</p>');
    const bearer = { Authorization: `Bearer ${s.member.token}` };
    const metrics = async () => (await get('/metrics', { Authorization: `Bearer ${METRICS_TOKEN}` })).body.toString();
    await get(url, bearer);
    await get(url, bearer);
    const before = metricCount(await metrics(), 'getPage', '200');
    lines.length = 0;
    const hot = await Promise.all([1, 2, 3].map(() => get(url, { ...bearer, 'X-Request-Id': `trace-${Math.random().toString(36).slice(2, 12)}` })));
    expect(metricCount(await metrics(), 'getPage', '200')).toBe(before + 3);
    const logged = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((line) => line.message === 'request' && line.request?.url === url);
    expect(logged.map((line) => line.request_id).sort()).toEqual(hot.map((answer) => answer.headers['x-request-id']).sort());
    for (const line of logged) {
      expect(line).toMatchObject({ level: 'info', res: { status: 200 }, operation_id: 'getPage', user_id: s.member.user.id });
      expect(line.request.headers.authorization).toBe('[Redacted]');
    }
  });
});
