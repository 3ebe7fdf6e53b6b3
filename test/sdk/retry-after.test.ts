// The SDK's retries and `Retry-After` (issue 43): a wait up to the client's `maxRetryWaitMs` (a minute unless set) is
// waited and the request sent again; a longer one is not waited at all, and the call throws at once a NotesApiError
// carrying the wait. Over HTTP: the service's own rate limit (RATE_LIMIT_PER_HOUR) gives a real 429 whose
// Retry-After is the rest of the hour; for the waits no test can make the service send (2 s, a date, garbage), a small
// front server answers the first requests with the 429 or 503 it is told to and passes the rest to the service.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { createClient, createNote, events, getMe, listNotes, NotesApiError, type NotesClientOptions } from '../../sdk/src/index.ts';
import { retryAfterMs } from '../../sdk/src/retry-after.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeUser, type Actor } from '../support/factories.ts';

const BUDGET = 4;
let app: TestApp;
let front: Server;
let frontUrl: string;

/** What the front server answers to the next requests (one each, in order) before it passes requests on. */
type Refusal = { status: 429 | 503; retryAfter?: string; problem?: boolean };
let refusals: Refusal[] = [];
/** Every request the front server saw: when, and what it answered. */
let seen: { at: number; method: string; path: string; status: number }[] = [];

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_HOUR: String(BUDGET) });
  front = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const record = { at: performance.now(), method: request.method!, path: request.url!, status: 0 };
        seen.push(record);
        const refusal = refusals.shift();
        if (refusal) {
          record.status = refusal.status;
          const headers: Record<string, string> = refusal.retryAfter === undefined ? {} : { 'Retry-After': refusal.retryAfter };
          if (refusal.problem === false) {
            response.writeHead(refusal.status, { ...headers, 'Content-Type': 'text/plain' }).end('slow down');
            return;
          }
          const code = refusal.status === 429 ? 'rate_limited' : 'shutting_down';
          response.writeHead(refusal.status, { ...headers, 'Content-Type': 'application/problem+json' });
          response.end(JSON.stringify({ type: 'about:blank', title: 'refused', status: refusal.status, detail: 'the front server refused', code, request_id: 'front-1' }));
          return;
        }
        // passed on to the service as it came
        const headers = new Headers();
        for (const [name, value] of Object.entries(request.headers)) if (name !== 'host' && typeof value === 'string') headers.set(name, value);
        const answer = await fetch(`${app.baseUrl}${request.url}`, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
        record.status = answer.status;
        const body = Buffer.from(await answer.arrayBuffer());
        const sent: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) sent[name] = value;
        });
        response.writeHead(answer.status, sent).end(body);
      })().catch((error: unknown) => response.writeHead(502).end(String(error)));
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => front?.close(resolve));
  await app?.close();
});
beforeEach(() => {
  refusals = [];
  seen = [];
});

/** A client of the front server for a new user (each has its own budget of BUDGET requests this hour). */
async function frontClient(options: Partial<NotesClientOptions> = {}): Promise<{ actor: Actor; client: ReturnType<typeof createClient> }> {
  const actor = await makeUser(app);
  return { actor, client: createClient({ baseUrl: frontUrl, token: actor.token, backoffMs: 5, ...options }) };
}

/** The call's error (it must throw) and how long it took. */
async function failure(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await call().then(() => undefined, (thrown: unknown) => thrown);
  expect(error, 'the call should have thrown').toBeDefined();
  return { error, ms: performance.now() - started };
}

describe('a Retry-After longer than maxRetryWaitMs', () => {
  it('surfaces at once: the service\'s own 429 of a spent hourly budget (Retry-After: the rest of the hour)', async () => {
    const actor = await makeUser(app);
    // spend the token's budget
    let status = 200;
    for (let i = 0; i <= BUDGET && status !== 429; i += 1) {
      status = (await fetch(`${app.baseUrl}/api/v1/me`, { headers: { Authorization: `Bearer ${actor.token}` } })).status;
    }
    expect(status).toBe(429);
    const attempts: string[] = [];
    const client = createClient({
      baseUrl: app.baseUrl, token: actor.token, backoffMs: 5,
      fetch: (input, init) => (attempts.push((input as Request).method), fetch(input, init)),
    });
    const before = await app.em().count(Note, {});

    const read = await failure(() => getMe({ client }));
    expect(read.ms).toBeLessThan(2000);
    expect(read.error).toBeInstanceOf(NotesApiError);
    const error = read.error as NotesApiError;
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(error.requestId).toMatch(/\S/);
    // the service counts down the rest of its hour window: far more than a minute, at most an hour
    expect(error.retryAfterMs).toBeGreaterThan(60_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(3_600_000);
    expect(error.message).toMatch(/Retry-After: \d+ s/);

    // a POST is refused the same way, once, and nothing is written
    const write = await failure(() => createNote({ client, body: { note: { title: 'Later', team: actor.user.username } } }));
    expect(write.ms).toBeLessThan(2000);
    expect(write.error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(attempts).toEqual(['GET', 'POST']);
    expect(await app.em().count(Note, {})).toBe(before);
  });

  it('surfaces at once with Retry-After: 3600 (delta-seconds), sent once', async () => {
    const { client } = await frontClient();
    refusals = [{ status: 429, retryAfter: '3600' }];
    const { error, ms } = await failure(() => getMe({ client }));
    expect(ms).toBeLessThan(2000);
    expect(error).toBeInstanceOf(NotesApiError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterMs: 3_600_000, requestId: 'front-1' });
    expect(seen.map((request) => request.status)).toEqual([429]);
  });

  it('surfaces at once with an HTTP-date two hours ahead, carrying what is left until then', async () => {
    const { client } = await frontClient();
    refusals = [{ status: 429, retryAfter: new Date(Date.now() + 2 * 3_600_000).toUTCString() }];
    const { error, ms } = await failure(() => listNotes({ client }));
    expect(ms).toBeLessThan(2000);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    // the date has whole seconds: a little under two hours is left
    expect((error as NotesApiError).retryAfterMs).toBeGreaterThan(2 * 3_600_000 - 10_000);
    expect((error as NotesApiError).retryAfterMs).toBeLessThanOrEqual(2 * 3_600_000);
    expect(seen).toHaveLength(1);
  });

  it('surfaces at once for a 503 of a GET too, with the problem\'s own code', async () => {
    const { client } = await frontClient();
    refusals = [{ status: 503, retryAfter: '600' }];
    const { error, ms } = await failure(() => getMe({ client }));
    expect(ms).toBeLessThan(2000);
    expect(error).toMatchObject({ status: 503, code: 'shutting_down', retryAfterMs: 600_000 });
    expect(seen).toHaveLength(1);
  });

  it('is rate_limited for a 429 without problem details (a proxy\'s)', async () => {
    const { client } = await frontClient();
    refusals = [{ status: 429, retryAfter: '900', problem: false }];
    const { error, ms } = await failure(() => getMe({ client }));
    expect(ms).toBeLessThan(2000);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterMs: 900_000 });
    expect(seen).toHaveLength(1);
  });

  it('ends the change stream at once instead of waiting to reconnect', async () => {
    const { client } = await frontClient();
    refusals = [{ status: 429, retryAfter: '3600' }];
    const { error, ms } = await failure(async () => {
      for await (const event of events(client)) return event;
    });
    expect(ms).toBeLessThan(2000);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterMs: 3_600_000 });
    expect(seen.map((request) => request.path)).toEqual(['/api/v1/events']);
  });
});

describe('a Retry-After up to maxRetryWaitMs', () => {
  it('is waited, and the request sent again (Retry-After: 1)', async () => {
    const { actor, client } = await frontClient();
    refusals = [{ status: 429, retryAfter: '1' }];
    const started = performance.now();
    const { data: me } = await getMe({ client });
    expect(me.username).toBe(actor.user.username);
    expect(seen.map((request) => request.status)).toEqual([429, 200]);
    // the second request came after the second asked for, not after the 5 ms backoff
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(900);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('is waited in its HTTP-date form (two seconds ahead)', async () => {
    const { actor, client } = await frontClient();
    refusals = [{ status: 429, retryAfter: new Date(Date.now() + 2000).toUTCString() }];
    const { data: me } = await getMe({ client });
    expect(me.username).toBe(actor.user.username);
    expect(seen.map((request) => request.status)).toEqual([429, 200]);
    // whole seconds: between one and two seconds were left when it came
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(500);
  });

  it('is carried by the error when the retries are spent', async () => {
    const { client } = await frontClient({ retries: 1 });
    refusals = [{ status: 429, retryAfter: '0' }, { status: 429, retryAfter: '0' }];
    const { error } = await failure(() => getMe({ client }));
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterMs: 0 });
    expect(seen.map((request) => request.status)).toEqual([429, 429]);
  });
});

describe('the maxRetryWaitMs option', () => {
  it('lowered below the wait: Retry-After: 1 surfaces at once', async () => {
    const { client } = await frontClient({ maxRetryWaitMs: 500 });
    refusals = [{ status: 429, retryAfter: '1' }];
    const { error, ms } = await failure(() => getMe({ client }));
    expect(ms).toBeLessThan(900);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterMs: 1000 });
    expect(seen).toHaveLength(1);
  });

  it('raised above the wait: Retry-After: 3600 is waited (until the caller aborts)', async () => {
    const { client } = await frontClient({ maxRetryWaitMs: 2 * 3_600_000 });
    refusals = [{ status: 429, retryAfter: '3600' }];
    const { error, ms } = await failure(() => getMe({ client, signal: AbortSignal.timeout(700) }));
    // it was waiting the hour, not refusing: the caller's abort ended it, and no second request was sent
    expect(error).not.toBeInstanceOf(NotesApiError);
    expect((error as Error).name).toBe('TimeoutError');
    expect(ms).toBeGreaterThanOrEqual(650);
    expect(seen).toHaveLength(1);
  });

  it('raised above the default: Retry-After: 90 is waited (the default, a minute, would refuse it)', async () => {
    const waiting = await frontClient({ maxRetryWaitMs: 120_000 });
    refusals = [{ status: 429, retryAfter: '90' }];
    const waited = await failure(() => getMe({ client: waiting.client, signal: AbortSignal.timeout(500) }));
    expect((waited.error as Error).name).toBe('TimeoutError');

    const refusing = await frontClient();
    refusals = [{ status: 429, retryAfter: '90' }];
    const refused = await failure(() => getMe({ client: refusing.client }));
    expect(refused.error).toMatchObject({ code: 'rate_limited', retryAfterMs: 90_000 });
    expect(refused.ms).toBeLessThan(2000);
  });

  it('refuses a negative or non-number maximum', () => {
    expect(() => createClient({ baseUrl: frontUrl, maxRetryWaitMs: -1 })).toThrow(RangeError);
    expect(() => createClient({ baseUrl: frontUrl, maxRetryWaitMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('an unreadable Retry-After', () => {
  it.each(['soon', '-5', 'Mon, later', '1e3', ''])('%j is as if none came: the backoff is waited and the request sent again', async (value) => {
    const { actor, client } = await frontClient();
    refusals = [{ status: 429, retryAfter: value }];
    const started = performance.now();
    const { data: me } = await getMe({ client });
    expect(me.username).toBe(actor.user.username);
    expect(seen.map((request) => request.status)).toEqual([429, 200]);
    // the 5 ms backoff, not a wait read from the header
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('reads delta-seconds and the three HTTP-date forms, and nothing else', () => {
    const inAnHour = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
    const imf = inAnHour.toUTCString(); // Sun, 06 Nov 1994 08:49:37 GMT
    const [day, date, month, year, time] = imf.split(' ');
    const longDays: Record<string, string> = { Mon: 'Monday', Tue: 'Tuesday', Wed: 'Wednesday', Thu: 'Thursday', Fri: 'Friday', Sat: 'Saturday', Sun: 'Sunday' };
    const rfc850 = `${longDays[day!.slice(0, 3)]}, ${date}-${month}-${year!.slice(2)} ${time} GMT`;
    const asctime = `${day!.slice(0, 3)} ${month} ${date!.replace(/^0/, ' ')} ${time} ${year}`;
    const table: [string | null, number | undefined][] = [
      ['120', 120_000], [' 5 ', 5000], ['0', 0], ['1.5', 1500],
      [null, undefined], ['', undefined], ['-5', undefined], ['soon', undefined], ['0x10', undefined], ['Infinity', undefined], ['Mon, later', undefined], ['2024-01-01', undefined],
      ['Sun, 06 Nov 1994 08:49:37 GMT', 0], // a date past: no wait
    ];
    for (const [value, expected] of table) expect([value, retryAfterMs(value)]).toEqual([value, expected]);
    // the asctime form names no zone: it is read as UTC, as RFC 9110 says, whatever the machine's zone
    for (const form of [imf, rfc850, asctime]) {
      const read = retryAfterMs(form)!;
      expect(read, form).toBeGreaterThan(3_590_000);
      expect(read, form).toBeLessThanOrEqual(3_600_000 + 1000);
    }
  });
});
