// The change stream (streamEvents, GET /api/v1/events): its two forms and its input. The live form (server-sent
// events: `retry`, then `id`/`event`/`data` per change, heartbeats, never compressed) starts now unless told where to
// resume; the JSON form pages through the kept log with `Link: rel="next"` carrying the last id. Resuming by
// `Last-Event-ID` or `since` (since wins) gives only later ids; a resume point older than the log keeps gets one
// `truncated` event first. Bad input answers 400 (unknown type: `invalid_event_type`), unknown teams and notes 404,
// no token 401. Filters, permissions, ordering under load and limits: events-delivery.test.ts and
// events-filters.test.ts; several processes: events-processes.test.ts.
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { pruneChangeLog } from '../../src/modules/events/retention.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { diagnose, openEventStream, nextSince, readJsonEvents, type EventStream } from '../support/event-stream.ts';
import { makeNote, makePage, makeUser, uniqueName } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario<'open'>;
const streams: EventStream[] = [];

beforeAll(async () => {
  app = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1' });
  s = await makeScenario(app, { notes: { open: {} } });
});
// each test's streams are closed after it: a token may hold only five open
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()));
});
afterAll(async () => {
  await Promise.all(streams.map((stream) => stream.close()));
  await app?.close();
});

/** Opens a stream that afterAll closes, whatever the test's outcome. */
async function open(token: string | undefined, options: Parameters<typeof openEventStream>[1] = {}) {
  const stream = await openEventStream(app.baseUrl, { ...(token ? { token } : {}), ...options });
  streams.push(stream);
  return stream;
}

/** The highest change id stored so far. */
const lastChangeId = async (): Promise<number> =>
  Number((await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id);

let pages = 0;
/** A new page in the scenario's public note, by the member; its id. */
async function writePage(): Promise<number> {
  pages += 1;
  return (await makePage(app, s.notes.open, s.member, { title: `Page ${pages}`, content: `<p>body ${pages}</p>` })).id;
}

describe('streamEvents: who may call', () => {
  it('answers 401 without a token or with an unknown one, in either form', async () => {
    for (const accept of ['text/event-stream', 'application/json']) {
      const none = await open(undefined, { accept });
      expect([none.status, none.headers.get('content-type')], accept).toEqual([401, expect.stringContaining('application/problem+json')]);
      const unknown = await open('nt_not-a-token-at-all', { accept });
      expect(unknown.status, accept).toBe(401);
      expect(unknown.ended).toBe(true);
    }
  });

  it('takes a read-scope token, and a token in ?access_token= (what EventSource can send)', async () => {
    const before = await lastChangeId();
    const pageId = await writePage();
    const json = await s.reader.client.get('/api/v1/events', { query: { format: 'json', since: String(before) } });
    expect(json.status, json.text).toBe(200);
    expect(json.body.map((event: any) => [event.type, event.page?.id])).toEqual([['page.created', pageId]]);
    const jsonByQuery = await s.reader.client.get('/api/v1/events', { query: { format: 'json', since: String(before) }, tokenInQuery: true });
    expect(jsonByQuery.body.map((event: any) => event.page?.id)).toEqual([pageId]);
    // the next page's link does not carry the token
    expect(jsonByQuery.headers.get('link')).not.toContain('access_token');
    const byQuery = await open(s.reader.token, { tokenInQuery: true, lastEventId: String(before) });
    expect(byQuery.status).toBe(200);
    expect(await byQuery.waitForChange((event) => event.page?.id === pageId, 5000)).toMatchObject({ type: 'page.created' });
  });
});

describe('streamEvents: the live form', () => {
  it('answers an uncompressed, uncached event stream that starts with retry: 2000', async () => {
    const stream = await open(s.member.token, { headers: { 'Accept-Encoding': 'gzip, deflate, br' } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toContain('no-cache');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');
    expect(stream.headers.get('content-encoding')).toBeNull();
    expect(await stream.waitUntil((it) => it.raw.length > 0, 5000)).toBe('met');
    expect(stream.raw.startsWith('retry: 2000\n\n'), JSON.stringify(stream.raw.slice(0, 40))).toBe(true);
    expect(stream.retries).toEqual([2000]);
  });

  it('sends a heartbeat comment every EVENTS_HEARTBEAT_SECONDS (1 here)', async () => {
    const stream = await open(s.member.token);
    const started = Date.now();
    expect(await stream.waitUntil((it) => it.comments.filter((comment) => comment === 'heartbeat').length >= 2, 5000)).toBe('met');
    // two heartbeats a second apart: neither sent at once only, nor much slower than asked
    expect(Date.now() - started).toBeLessThan(4500);
    expect(stream.raw).toContain(': heartbeat\n\n');
    expect(stream.events).toEqual([]);
  });

  it('without Last-Event-ID or since, starts now: only changes made after it opened', async () => {
    await writePage();
    const before = await lastChangeId();
    const stream = await open(s.member.token);
    expect(await stream.waitUntil((it) => it.retries.length > 0, 5000)).toBe('met');
    const pageId = await writePage();
    const event = await stream.waitForChange((change) => change.page?.id === pageId, 5000);
    expect(event).toMatchObject({ type: 'page.created', page: { id: pageId, version: 1 } });
    expect(stream.changes.map((change) => change.id).every((id: number) => id > before)).toBe(true);
    expect(stream.changes[0]).toEqual(event);
  });

  it('frames each change as id, event and one line of data, the id and type being the change\'s own', async () => {
    const before = await lastChangeId();
    const first = await writePage();
    const second = await writePage();
    const stream = await open(s.member.token, { lastEventId: String(before) });
    await stream.readEvents(2, 5000);
    expect(stream.events.map((event) => [event.event, event.json?.page?.id])).toEqual([['page.created', first], ['page.created', second]]);
    for (const event of stream.events) {
      expect(event.id).toBe(String(event.json.id));
      expect(event.event).toBe(event.json.type);
      expect(stream.raw).toContain(`id: ${event.id}\nevent: ${event.event}\ndata: ${event.data}\n\n`);
    }
  });

  it('answers the stream for ?format=event-stream whatever Accept says', async () => {
    const before = await lastChangeId();
    const pageId = await writePage();
    for (const accept of [null, 'application/json']) {
      const stream = await open(s.member.token, { accept, query: { format: 'event-stream', since: String(before) } });
      expect([stream.status, stream.headers.get('content-type')], String(accept)).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
      expect(await stream.waitForChange((change) => change.page?.id === pageId, 5000), String(accept)).toBeDefined();
      await stream.close();
    }
  });

  it('resumes after Last-Event-ID or since, and since wins when both are given', async () => {
    const before = await lastChangeId();
    const ids = [await writePage(), await writePage(), await writePage()];
    const all = (await readJsonEvents(s.member.client, { since: String(before) })).items;
    expect(all.map((event) => event.page.id)).toEqual(ids);
    const byHeader = await open(s.member.token, { lastEventId: String(all[0].id) });
    await byHeader.readEvents(2, 5000);
    expect(byHeader.changes.map((change) => change.id)).toEqual([all[1].id, all[2].id]);
    const both = await open(s.member.token, { lastEventId: String(all[0].id), query: { since: String(all[1].id) } });
    await both.readEvents(1, 5000);
    // nothing but the third arrives, even given time for a wrong one
    expect(await both.waitUntil((it) => it.events.length > 1, 700)).toBe('timeout');
    expect(both.changes.map((change) => change.id)).toEqual([all[2].id]);
  });
});

/** A connection to the server written and read as bytes: what the wire carries, with no HTTP client between. */
function rawConnection(baseUrl: string) {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  let received = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (data: Buffer) => {
    received = Buffer.concat([received, data]);
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => {});
  return {
    send: (text: string) => socket.write(text),
    text: () => received.toString('latin1'),
    closed: () => closed,
    until: async (met: () => boolean, ms = 5000) => {
      const deadline = Date.now() + ms;
      while (!met() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return met();
    },
    close: () => socket.destroy(),
  };
}

async function until(met: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!met() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return met();
}

/** The body of a chunked answer, read chunk by chunk (RFC 9112 7.1); `complete`: its last chunk came. */
function dechunk(body: string): { data: string; complete: boolean; rest: string } {
  let data = '';
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) return { data, complete: false, rest: '' };
    const size = Number.parseInt(body.slice(at, lineEnd), 16);
    expect(Number.isNaN(size), `a chunk size line: ${JSON.stringify(body.slice(at, lineEnd + 2))}`).toBe(false);
    if (size === 0) {
      expect(body.slice(lineEnd, lineEnd + 4)).toBe('\r\n\r\n');
      return { data, complete: true, rest: body.slice(lineEnd + 4) };
    }
    if (body.length < lineEnd + 2 + size + 2) return { data, complete: false, rest: '' };
    data += body.slice(lineEnd + 2, lineEnd + 2 + size);
    expect(body.slice(lineEnd + 2 + size, lineEnd + 4 + size), 'a chunk ends with CRLF').toBe('\r\n');
    at = lineEnd + 4 + size;
  }
}

// The two ways a stream's socket is written: by the writer process (the default) and by the server itself
for (const fanOut of ['process', 'inline'] as const) {
  describe(`streamEvents: on the wire, EVENTS_FAN_OUT=${fanOut} (the events are written to the socket, not through the response)`, () => {
    let wire: TestApp;
    let ws: Scenario<'open'>;
    beforeAll(async () => {
      wire = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1', EVENTS_FAN_OUT: fanOut });
      ws = await makeScenario(wire, { notes: { open: {} } });
    });
    afterAll(async () => wire?.close());

    const request = (path: string, token: string, version: string) =>
      `GET ${path} HTTP/${version}\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`;
    const last = async (): Promise<number> =>
      Number((await wire.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id);
    const write = async (title: string): Promise<number> => (await makePage(wire, ws.notes.open, ws.member, { title })).id;

    it('HTTP/1.1: each set of events is a chunk, heartbeats too; a stream that ends sends the last chunk', async () => {
      const owner = await makeUser(wire, uniqueName('wire'));
      const { token, secret } = await issueToken(wire.em(), owner.user, { scope: 'read' });
      const before = await last();
      const first = await write('Wire 1');
      const connection = rawConnection(wire.baseUrl);
      try {
        connection.send(request(`/api/v1/events?since=${before}&types=page.created`, secret, '1.1'));
        const body = () => connection.text().slice(connection.text().indexOf('\r\n\r\n') + 4);
        expect(await connection.until(() => dechunk(body()).data.includes(`"page":{"id":${first},`))).toBe(true);
        const head = connection.text().slice(0, connection.text().indexOf('\r\n\r\n'));
        expect(head).toMatch(/^HTTP\/1\.1 200 /);
        expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
        // who writes the socket now (the handover follows the answer's first bytes, which the client may read first)
        if (fanOut === 'process') expect(await until(() => wire.events.handedOver === 1)).toBe(true);
        else expect(wire.events.handedOver).toBe(0);
        // a change made now, and heartbeats, come as chunks of their own after the first ones
        const second = await write('Wire 2');
        expect(await connection.until(() => dechunk(body()).data.includes(`"page":{"id":${second},`) && dechunk(body()).data.includes(': heartbeat\n\n'))).toBe(true);
        const { data } = dechunk(body());
        expect(data.startsWith('retry: 2000\n\n'), JSON.stringify(data.slice(0, 30))).toBe(true);
        expect(data.match(/^event: page\.created$/gm)).toHaveLength(2);
        // the token revoked: the stream ends with the last chunk
        expect((await owner.client.delete(`/api/v1/me/tokens/${token.id}`)).status).toBe(204);
        expect(await connection.until(() => dechunk(body()).complete)).toBe(true);
        if (fanOut === 'process') {
          // the writer process then closes the connection (the server no longer holds it)
          expect(await connection.until(() => connection.closed())).toBe(true);
        } else {
          // the server's own connection serves the next request
          expect(connection.closed()).toBe(false);
          connection.send('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
          expect(await connection.until(() => /HTTP\/1\.1 200 /.test(dechunk(body()).rest) && connection.closed())).toBe(true);
        }
        expect(await connection.until(() => wire.events.open === 0 && wire.events.handedOver === 0)).toBe(true);
      } finally {
        connection.close();
      }
    });

    it('HTTP/1.0: the events as they are, no chunks; a client that goes away closes its stream', async () => {
      const before = await last();
      const pageId = await write('Wire 3');
      const connection = rawConnection(wire.baseUrl);
      try {
        connection.send(request(`/api/v1/events?since=${before}`, ws.member.token, '1.0'));
        expect(await connection.until(() => connection.text().includes(`"page":{"id":${pageId},`))).toBe(true);
        const [head, body] = connection.text().split('\r\n\r\n') as [string, string];
        expect(head).toMatch(/^HTTP\/1\.1 200 /);
        expect(head.toLowerCase()).not.toContain('transfer-encoding');
        expect(body.startsWith('retry: 2000\n\n'), JSON.stringify(body.slice(0, 30))).toBe(true);
        expect(body).toMatch(/\nevent: page\.created\ndata: \{[^\n]*\}\n\n/);
        expect(wire.events.open).toBe(1);
      } finally {
        connection.close();
      }
      expect(await connection.until(() => wire.events.open === 0 && wire.events.handedOver === 0)).toBe(true);
    });

    if (fanOut === 'process') {
      it('a writer process that dies ends its streams (their clients resume); the next stream forks a new one', async () => {
        const before = await last();
        const doomed = await openEventStream(wire.baseUrl, { token: ws.member.token, query: { since: String(before) } });
        try {
          expect(await doomed.waitUntil((it) => it.retries.length > 0, 5000)).toBe('met');
          expect(await until(() => wire.events.handedOver === 1)).toBe(true);
          const pid = wire.events.writerPid!;
          expect(pid).toBeGreaterThan(0);
          process.kill(pid, 'SIGKILL');
          expect(await doomed.waitForEnd(5000), 'the stream ended with its writer').toBe(true);
          expect(await until(() => wire.events.open === 0)).toBe(true);
        } finally {
          await doomed.close();
        }
        // resumed after the last id it had, it gets what came since, through a new writer process
        const pageId = await write('Wire after');
        const resumed = await openEventStream(wire.baseUrl, { token: ws.member.token, query: { since: String(before) } });
        try {
          expect(await resumed.waitForChange((change) => change.page?.id === pageId, 5000)).toBeDefined();
          expect(await until(() => wire.events.handedOver === 1)).toBe(true);
          expect(wire.events.writerPid).not.toBe(undefined);
        } finally {
          await resumed.close();
        }
      });
    }
  });
}

describe('streamEvents: the JSON form', () => {
  it('answers an array for ?format=json, Accept: application/json, no Accept, and ?format=json beside Accept: text/event-stream', async () => {
    const before = await lastChangeId();
    const pageId = await writePage();
    const query = { since: String(before) };
    const answers = [
      await s.member.client.get('/api/v1/events', { query: { ...query, format: 'json' } }),
      await s.member.client.get('/api/v1/events', { query, headers: { Accept: 'application/json' } }),
      await s.member.client.get('/api/v1/events', { query, headers: { Accept: '*/*' } }),
      await s.member.client.get('/api/v1/events', { query: { ...query, format: 'json' }, headers: { Accept: 'text/event-stream' } }),
    ];
    for (const answer of answers) {
      expect([answer.status, answer.headers.get('content-type')]).toEqual([200, expect.stringContaining('application/json')]);
      expect(answer.body.map((event: any) => [event.type, event.page?.id])).toEqual([['page.created', pageId]]);
    }
  });

  it('pages oldest first through Link: rel="next" carrying the last id, the same since once empty', async () => {
    const before = await lastChangeId();
    const ids: number[] = [];
    for (let i = 0; i < 7; i += 1) ids.push(await writePage());
    const { items, pages } = await readJsonEvents(s.member.client, { since: String(before), per_page: '3' });
    expect(pages.map((page) => page.body.length)).toEqual([3, 3, 1, 0]);
    expect(items.map((event) => event.page.id)).toEqual(ids);
    const eventIds = items.map((event) => event.id);
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    expect(pages.map((page) => nextSince(page.headers.get('link')))).toEqual([eventIds[2], eventIds[5], eventIds[6], eventIds[6]].map(String));
    // the stored rows, in id order, are what the pages held
    const stored = await app.em().execute<{ id: string }[]>('select id::text as id from changes where id > ? order by changes.id', [before]);
    expect(stored.map((row) => Number(row.id))).toEqual(eventIds);
  });

  it('keeps ids in numeric order where they gain a digit (9 to 10, 99 to 100), in both forms', async () => {
    const before = await lastChangeId();
    // write until the ids cross the next power of ten
    const power = 10 ** String(before + 1).length;
    while ((await lastChangeId()) <= power + 1) await writePage();
    const stored = (await app.em().execute<{ id: string }[]>('select id::text as id from changes where id > ? order by changes.id', [before]))
      .map((row) => Number(row.id));
    expect(stored).toContain(power);
    const { items } = await readJsonEvents(s.member.client, { since: String(before), per_page: '7' });
    const jsonIds = items.map((event) => event.id);
    expect(jsonIds, `the JSON form: ${diagnose(jsonIds, stored)}`).toEqual(stored);
    const stream = await open(s.member.token, { lastEventId: String(before) });
    await stream.readEvents(stored.length, 5000);
    const streamIds = stream.changes.map((change) => change.id);
    expect(streamIds, `the stream: ${diagnose(streamIds, stored)}`).toEqual(stored);
  });

  it('without since, starts from the start of the kept log, with no truncated item', async () => {
    await writePage();
    await writePage();
    const fromStart = (await readJsonEvents(s.member.client, {})).items;
    const fromZero = (await readJsonEvents(s.member.client, { since: '0' })).items;
    expect(fromStart.length).toBeGreaterThanOrEqual(2);
    expect(fromStart).toEqual(fromZero);
    expect(fromStart.some((event) => event.type === 'truncated')).toBe(false);
    const oldest = Number((await app.em().execute<{ id: string }[]>(
      `select min(id)::text as id from changes where type = 'page.created'`))[0]!.id);
    expect(fromStart.map((event) => event.id)).toContain(oldest);
  });

  it('answers an empty array and the same since for a since past the end', async () => {
    const answer = await s.member.client.get('/api/v1/events', { query: { format: 'json', since: '999999999999999' } });
    expect([answer.status, answer.body]).toEqual([200, []]);
    expect(nextSince(answer.headers.get('link'))).toBe('999999999999999');
  });
});

describe('streamEvents: bad input', () => {
  it('answers 400 for a since that is negative, too large, or not a whole number, in either form', async () => {
    for (const since of ['-1', '1000000000000000', '99999999999999999999', 'abc', '1.5']) {
      for (const accept of ['application/json', 'text/event-stream']) {
        const answer = await open(s.member.token, { accept, query: { since } });
        expect([answer.status, answer.headers.get('content-type')], `since=${since}, ${accept}`)
          .toEqual([400, expect.stringContaining('application/problem+json')]);
      }
    }
  });

  it('answers 400 for a Last-Event-ID that is not an id', async () => {
    for (const lastEventId of ['junk', '-5', '12abc', '1.0', '9999999999999999']) {
      for (const accept of ['application/json', 'text/event-stream']) {
        const answer = await open(s.member.token, { accept, lastEventId });
        expect(answer.status, `Last-Event-ID: ${lastEventId}, ${accept}`).toBe(400);
      }
    }
  });

  it('answers 400 invalid_event_type for a type that is not a ChangeEvent type', async () => {
    for (const types of ['page.exploded', 'page.updated,nonsense', 'membership.added', 'truncated', 'PAGE.UPDATED']) {
      for (const accept of ['application/json', 'text/event-stream']) {
        const answer = await open(s.member.token, { accept, query: { types } });
        expect([answer.status, answer.bodyJson?.code], `types=${types}, ${accept}`).toEqual([400, 'invalid_event_type']);
      }
    }
  });

  it('answers 400 for per_page out of 1..100 and an unknown format', async () => {
    for (const query of [{ per_page: '0' }, { per_page: '101' }, { per_page: 'x' }, { format: 'xml' }] as Record<string, string>[]) {
      const answer = await s.member.client.get('/api/v1/events', { query });
      expect(answer.status, JSON.stringify(query)).toBe(400);
    }
  });

  it('answers 404 for an unknown team or note, and for a note the caller may not read, in either form', async () => {
    const hidden = await makeNote(app, s.team, s.manager.user, { slug: 'hidden-bad-input', isPrivate: true });
    const cases: [string, Record<string, string>][] = [
      [s.member.token, { team: 'no-such-team' }],
      [s.member.token, { note: `${s.team.name}/no-such-note` }],
      [s.member.token, { note: `no-such-team/${s.notes.open.slug}` }],
      [s.outsider.token, { note: `${s.team.name}/${hidden.slug}` }],
    ];
    for (const [token, query] of cases) {
      for (const accept of ['application/json', 'text/event-stream']) {
        const answer = await open(token, { accept, query });
        expect(answer.status, `${JSON.stringify(query)}, ${accept}`).toBe(404);
      }
    }
    // the same note for a member of its team is found
    expect((await open(s.member.token, { accept: 'application/json', query: { note: `${s.team.name}/${hidden.slug}` } })).status).toBe(200);
  });
});

describe('streamEvents: a resume point older than the log keeps', () => {
  let old: TestApp;
  let oldScenario: Scenario<'kept'>;

  beforeAll(async () => {
    old = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1' });
    oldScenario = await makeScenario(old, { notes: { kept: {} } });
  });
  afterAll(async () => old?.close());

  it('prunes only what is past retention, then answers one truncated event with oldest_id first, in both forms', async () => {
    const { member, notes } = oldScenario;
    const written: number[] = [];
    for (let i = 0; i < 6; i += 1) written.push((await makePage(old, notes.kept, member, { title: `Old ${i}` })).id);
    const rows = await old.em().execute<{ id: string }[]>(`select id::text as id from changes where type = 'page.created' order by changes.id`);
    const ids = rows.map((row) => Number(row.id));
    expect(ids).toHaveLength(6);
    // the first four are 40 days old; the projections have passed them
    await old.settle();
    await old.em().execute(`update changes set occurred_at = now() - interval '40 days' where id <= ?`, [ids[3]]);
    const [{ count }] = await old.em().execute<{ count: string }[]>('select count(*)::text as count from changes where id <= ?', [ids[3]]) as [{ count: string }];
    expect(await pruneChangeLog(old.em(), 30)).toBe(Number(count));
    const kept = await old.em().execute<{ id: string }[]>('select id::text as id from changes order by changes.id');
    const oldestKept = Number(kept[0]!.id);
    expect(oldestKept).toBe(ids[4]);

    // the JSON form: since a pruned id
    const json = await member.client.get('/api/v1/events', { query: { format: 'json', since: String(ids[1]) } });
    expect(json.status, json.text).toBe(200);
    expect(json.body[0]).toEqual({ type: 'truncated', oldest_id: oldestKept });
    expect(json.body.slice(1).map((event: any) => [event.type, event.page?.id])).toEqual([['page.created', written[4]], ['page.created', written[5]]]);

    // the live form: since a pruned id, by Last-Event-ID
    const stream = await openEventStream(old.baseUrl, { token: member.token, lastEventId: String(ids[2]) });
    try {
      await stream.readEvents(3, 5000);
      expect(stream.events[0]).toMatchObject({ event: 'truncated', json: { type: 'truncated', oldest_id: oldestKept } });
      expect(JSON.parse(stream.events[0]!.data)).toEqual({ type: 'truncated', oldest_id: oldestKept });
      expect(stream.events.slice(1).map((event) => [event.event, Number(event.id), event.json.page.id]))
        .toEqual([['page.created', ids[4], written[4]], ['page.created', ids[5], written[5]]]);
    } finally {
      await stream.close();
    }

    // from the oldest kept event on, nothing was lost: no truncated event
    const fromKept = await member.client.get('/api/v1/events', { query: { format: 'json', since: String(oldestKept) } });
    expect(fromKept.body.map((event: any) => event.type)).toEqual(['page.created']);
    const streamFromKept = await openEventStream(old.baseUrl, { token: member.token, query: { since: String(oldestKept) } });
    try {
      await streamFromKept.readEvents(1, 5000);
      expect(await streamFromKept.waitUntil((it) => it.events.length > 1, 500)).toBe('timeout');
      expect(streamFromKept.events.map((event) => [event.event, Number(event.id)])).toEqual([['page.created', ids[5]]]);
    } finally {
      await streamFromKept.close();
    }
  });
});
