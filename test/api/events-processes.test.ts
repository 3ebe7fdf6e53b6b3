// streamEvents across server processes on one PostgreSQL (PostgreSQL pass only: the embedded database belongs to one
// process). This test's server (A) and a second server process (B) on its database: a change written through one
// reaches a stream held on the other, and the delay from the write's answer to the event's arrival is measured over
// 50 writes (p99 logged, asserted under 1 s: the 200 ms goal is `make bench`'s). Writers on both at once: a stream on
// each process delivers every stored change once, ids increasing. A change whose transaction commits late is still
// delivered in its place, on both, and to a JSON poller.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertChange } from '../../src/modules/events/events.repository.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { databaseKind, type TestDatabase } from '../support/database.ts';
import { diagnose, nextSince, openEventStream, readJsonEvents, type EventStream } from '../support/event-stream.ts';
import { makeNote, makePage, notePath } from '../support/factories.ts';
import { freePort, projectRoot, startServerProcess, stopServerProcess, type ServerProcess } from '../support/processes.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

const WRITES = 50;

describe.skipIf(databaseKind !== 'postgres')('streamEvents across two server processes (PostgreSQL pass only)', () => {
  let app: TestApp;
  let s: Scenario<'shared'>;
  let second: ServerProcess | undefined;
  let secondUrl: string;
  let dataDir: string;
  const streams: EventStream[] = [];

  beforeAll(async () => {
    app = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1' });
    s = await makeScenario(app, { notes: { shared: { isPrivate: true } } });
    const port = await freePort();
    secondUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-events-'));
    second = await startServerProcess(path.join(projectRoot, 'node_modules', '.bin', 'node'), ['src/server.ts'], {
      PATH: `${path.join(projectRoot, 'node_modules', '.bin')}:${process.env.PATH}`,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      PORT: String(port),
      PUBLIC_URL: secondUrl,
      DATA_DIR: dataDir,
      DATABASE_URL: (app.database as TestDatabase).url!,
      LOG_LEVEL: 'warn',
      EVENTS_HEARTBEAT_SECONDS: '1',
    });
  }, 120_000);

  // each test's streams are closed after it: a token may hold only five open
  afterEach(async () => {
    await Promise.all(streams.splice(0).map((stream) => stream.close()));
  });
  afterAll(async () => {
    await Promise.all(streams.map((stream) => stream.close()));
    await stopServerProcess(second);
    await app?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const lastChangeId = async (): Promise<string> =>
    (await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id;
  const storedIdsAfter = async (after: string): Promise<number[]> =>
    (await app.em().execute<{ id: string }[]>('select id::text as id from changes where id > ? order by changes.id', [after])).map((row) => Number(row.id));

  async function open(baseUrl: string, token: string, since?: string) {
    const stream = await openEventStream(baseUrl, { token, ...(since ? { query: { since } } : {}) });
    streams.push(stream);
    expect(stream.status, stream.body).toBe(200);
    expect(await stream.waitUntil((it) => it.retries.length > 0, 5000)).toBe('met');
    return stream;
  }

  type Delay = { fromAnswer: number; fromSend: number };

  /**
   * Writes the page WRITES times through `writer`, one at a time; for each, the time from the write's answer (0 when
   * the event came first) and from its request's sending to the event's arrival on `stream`.
   */
  async function delays(writer: ApiClient, stream: EventStream, url: string): Promise<Delay[]> {
    const measured: Delay[] = [];
    for (let i = 0; i < WRITES; i += 1) {
      const sent = performance.now();
      const answer = await writer.put(url, { json: { page: { content: `<p>write ${i}</p>` } } });
      const answered = performance.now();
      expect(answer.status, answer.text).toBe(200);
      const [pageId, version] = [answer.body.id as number, answer.body.version as number];
      const received = await stream.waitForChange((change) => change.page?.id === pageId && change.page.version === version, 5000);
      expect(received, `write ${i} (version ${version}) reached the stream`).toBeDefined();
      const arrival = stream.events.find((event) => event.json?.id === received.id)!.receivedAt;
      measured.push({ fromAnswer: Math.max(0, arrival - answered), fromSend: arrival - sent });
    }
    return measured;
  }

  const percentile = (values: number[], p: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  };

  it('a change written through one process reaches a stream held on the other, well within a second', async () => {
    const note = s.notes.shared;
    const page = await makePage(app, note, s.member, { title: 'Across processes' });
    const url = `${await notePath(app, note)}/${page.id}`;
    const onB = await open(secondUrl, s.reader.token);
    const onA = await open(app.baseUrl, s.reader.token);
    const aToB = await delays(s.member.client, onB, url);
    const bToA = await delays(new ApiClient(secondUrl, s.member.token), onA, url);
    const report = (name: string, delays: Delay[]) => {
      const [answer, send] = [delays.map((delay) => delay.fromAnswer), delays.map((delay) => delay.fromSend)];
      return `${name} over ${delays.length} writes: from the answer p50 ${percentile(answer, 50).toFixed(1)} ms, p99 ${percentile(answer, 99).toFixed(1)} ms, `
        + `max ${Math.max(...answer).toFixed(1)} ms (from the request's sending: p50 ${percentile(send, 50).toFixed(1)} ms, p99 ${percentile(send, 99).toFixed(1)} ms)`;
    };
    console.log(`a write's event on the other process's stream: ${report('A to B', aToB)}; ${report('B to A', bToA)}`);
    expect(percentile(aToB.map((delay) => delay.fromAnswer), 99)).toBeLessThan(1000);
    expect(percentile(bToA.map((delay) => delay.fromAnswer), 99)).toBeLessThan(1000);
    // each stream got every write of the page, through either process, versions in order (the last write's event
    // was awaited on A's stream only: it may come on B's a pass later)
    for (const [name, stream] of [['A', onA], ['B', onB]] as const) {
      await stream.waitForChange((change) => change.page?.id === page.id && change.page.version === 2 * WRITES + 1, 5000);
      const versions = stream.changes.filter((change) => change.page?.id === page.id).map((change) => change.page.version);
      const expected = Array.from({ length: 2 * WRITES }, (_, k) => k + 2);
      expect(versions, `the versions on ${name}'s stream: ${diagnose(versions, expected)}`).toEqual(expected);
    }
  }, 120_000);

  it('writers on both processes at once: a stream on each delivers every stored change once, ids increasing (3 rounds)', async () => {
    for (let round = 0; round < 3; round += 1) {
      const note = await makeNote(app, s.team, s.manager.user, { slug: `both-ways-${round}` });
      const pages = [await makePage(app, note, s.manager, { title: 'One' }), await makePage(app, note, s.manager, { title: 'Two' })];
      const base = await notePath(app, note);
      const since = await lastChangeId();
      const onA = await open(app.baseUrl, s.member.token, since);
      const onB = await open(secondUrl, s.member.token, since);
      await Promise.all([s.member.client, new ApiClient(secondUrl, s.manager.token), s.manager.client, new ApiClient(secondUrl, s.member.token)].map(async (client, lane) => {
        for (let k = 0; k < 25; k += 1) {
          const answer = await client.put(`${base}/${pages[lane % 2]!.id}`, { json: { page: { content: `<p>lane ${lane} write ${k}</p>` } } });
          expect(answer.status, answer.text).toBe(200);
        }
      }));
      const stored = await storedIdsAfter(since);
      expect(stored).toHaveLength(100);
      for (const [name, stream] of [['A', onA], ['B', onB]] as const) {
        await stream.readEvents(stored.length, 10_000);
        const ids = stream.changes.map((change) => change.id);
        expect(ids, `round ${round}, the stream on ${name}: ${diagnose(ids, stored)}`).toEqual(stored);
        for (const page of pages) {
          expect(stream.changes.filter((change) => change.page.id === page.id).map((change) => change.page.version), `${name}, page ${page.id}`)
            .toEqual(Array.from({ length: 50 }, (_, k) => k + 2));
        }
        await stream.close();
      }
    }
  }, 120_000);

  // Last in this file: it holds a transaction open for up to a couple of seconds, which (the horizon being the
  // server's) holds back every stream of the PostgreSQL server meanwhile; the latency above is measured before it.
  // It shows the loss only while no transaction that started after it ends (a quiet server: other test files running
  // on the same server at the moment can hide it).
  it('a change whose transaction commits late is delivered in its place on both processes, and to a JSON poller', async () => {
    const note = s.notes.shared;
    const before = await lastChangeId();
    // both servers have answered before (their change streams know where the log stands): this test is about the
    // late commit alone, not about a server's first stream
    for (const client of [s.member.client, new ApiClient(secondUrl, s.member.token)]) {
      expect((await client.get('/api/v1/events', { query: { format: 'json', since: before } })).status).toBe(200);
    }
    const onA = await open(app.baseUrl, s.member.token, before);
    const onB = await open(secondUrl, s.member.token, before);
    // a writer's transaction that has appended its change (its id is taken) and has not committed yet
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    let taken!: () => void;
    const appended = new Promise<void>((resolve) => (taken = resolve));
    const writer = app.em().transactional(async (tx) => {
      await insertChange(tx, {
        type: 'note.updated', actorId: s.manager.user.id, clientId: null, teamId: s.team.id, noteId: note.id, subjectId: note.id,
        payload: { note_id: note.id, changed: ['description'], actor: { id: s.manager.user.id, username: s.manager.user.username } },
      });
      taken();
      await committed;
    });
    await appended;
    const late = Number((await app.em().execute<{ id: string }[]>(
      `select (case when is_called then last_value else last_value - 1 end)::text as id from changes_id_seq`))[0]!.id);
    // a poller asks meanwhile: the JSON form answers what is safe to answer, without the uncommitted change
    const meanwhile = await s.member.client.get('/api/v1/events', { query: { format: 'json', since: before } });
    expect(meanwhile.status).toBe(200);
    expect(meanwhile.body.map((event: any) => event.id)).not.toContain(late);
    commit();
    await writer;
    const sentinel = await makePage(app, note, s.member, { title: 'After the late one' });
    const stored = await storedIdsAfter(before);
    for (const [name, stream] of [['A', onA], ['B', onB]] as const) {
      expect(await stream.waitForChange((change) => change.page?.id === sentinel.id, 5000), name).toBeDefined();
      const ids = stream.changes.map((change) => change.id);
      expect(ids, `the stream on ${name}, the late change ${late}: ${diagnose(ids, stored)}`).toEqual(stored);
      expect(stream.changes[0]).toMatchObject({ id: late, type: 'note.updated', note: { id: note.id }, changed: ['description'] });
    }
    // a poller that follows the meanwhile answer's Link misses nothing either
    const polled = [
      ...meanwhile.body.map((event: any) => event.id as number),
      ...(await readJsonEvents(s.member.client, { since: nextSince(meanwhile.headers.get('link'))! })).items.map((event) => event.id as number),
    ];
    expect(polled, `following Link: ${diagnose(polled, stored)}`).toEqual(stored);
  }, 60_000);

  it('a transaction held open that appends nothing to the change log holds no event back, on either process', async () => {
    const note = s.notes.shared;
    const page = await makePage(app, note, s.member, { title: 'Beside a long transaction' });
    const url = `${await notePath(app, note)}/${page.id}`;
    const onA = await open(app.baseUrl, s.reader.token);
    const onB = await open(secondUrl, s.reader.token);
    // as a projection indexing pages, or a tool's long transaction: it has a transaction id and has written, but
    // appends no change (before, the stream waited for every transaction running on the server)
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let begun!: () => void;
    const running = new Promise<void>((resolve) => (begun = resolve));
    const other = app.em().transactional(async (tx) => {
      await tx.execute('update projection_cursors set updated_at = now() where name = ?', ['search']);
      begun();
      await finished;
    });
    await running;
    try {
      const answer = await s.member.client.put(url, { json: { page: { content: '<p>while another transaction runs</p>' } } });
      expect(answer.status, answer.text).toBe(200);
      const version = answer.body.version as number;
      for (const [name, stream] of [['A', onA], ['B', onB]] as const) {
        const started = performance.now();
        const received = await stream.waitForChange((change) => change.page?.id === page.id && change.page.version === version, 1500);
        expect(received, `the event on ${name} while the other transaction runs (waited ${Math.round(performance.now() - started)} ms)`).toBeDefined();
      }
      // a poller is answered it as well, without waiting for the other transaction
      const polled = await s.reader.client.get('/api/v1/events', { query: { format: 'json', since: String(Number((await storedIdsAfter('0')).at(-1)) - 1) } });
      expect(polled.status).toBe(200);
      expect(polled.body.map((event: any) => event.page?.version)).toContain(version);
    } finally {
      finish();
      await other;
    }
  }, 60_000);
});
