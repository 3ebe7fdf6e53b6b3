// streamEvents under load: what a stream delivers while writers race (on PostgreSQL really in parallel, so change ids
// commit out of their order), compared with the stored change log and the JSON form. Ids strictly increase on a
// stream and the events of one page come in commit order (its versions increasing, each once); a client that
// disconnects and resumes by Last-Event-ID, three times while 200 changes are written, receives each exactly once.
// Who receives what: events-permissions.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { diagnose, openEventStream, readJsonEvents, type EventStream } from '../support/event-stream.ts';
import { makePage, notePath } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario<'ordered' | 'resumed'>;
const streams: EventStream[] = [];

beforeAll(async () => {
  app = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1' });
  s = await makeScenario(app, { notes: { ordered: {}, resumed: { isPrivate: true } } });
});
// each test's streams are closed after it: a token may hold only five open
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()));
});
afterAll(async () => {
  await Promise.all(streams.map((stream) => stream.close()));
  await app?.close();
});

async function open(token: string, options: Parameters<typeof openEventStream>[1] = {}) {
  const stream = await openEventStream(app.baseUrl, { token, ...options });
  streams.push(stream);
  expect(stream.status, stream.body).toBe(200);
  return stream;
}

const lastChangeId = async (): Promise<string> =>
  (await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id;

/** The ids of the stored changes after `after`, in id order. */
async function storedIdsAfter(after: string): Promise<number[]> {
  const rows = await app.em().execute<{ id: string }[]>('select id::text as id from changes where id > ? order by changes.id', [after]);
  return rows.map((row) => Number(row.id));
}

const increasing = (ids: number[]) => ids.every((id, i) => i === 0 || id > ids[i - 1]!);

describe('streamEvents: ordering', () => {
  it('ids strictly increase and each page\'s events come in commit order, under parallel writers', async () => {
    const before = await lastChangeId();
    const stream = await open(s.member.token, { lastEventId: before });
    const base = await notePath(app, s.notes.ordered);
    const pages = [];
    for (let i = 0; i < 3; i += 1) pages.push(await makePage(app, s.notes.ordered, s.manager, { title: `Ordered ${i}` }));
    // two writers per page, ten writes each, all at once: each page gets versions 2..21 in some interleaving
    const writers = pages.flatMap((page) => [s.member, s.manager].map((actor) => async () => {
      for (let k = 0; k < 10; k += 1) {
        const answer = await actor.client.put(`${base}/${page.id}`, { json: { page: { content: `<p>${actor.user.username} ${k}</p>` } } });
        expect(answer.status, answer.text).toBe(200);
      }
    }));
    await Promise.all(writers.map((write) => write()));
    const stored = await storedIdsAfter(before);
    expect(stored).toHaveLength(3 + 60);
    await stream.readEvents(stored.length, 15_000);
    const ids = stream.changes.map((change) => change.id);
    expect(ids, diagnose(ids, stored)).toEqual(stored);
    expect(increasing(ids)).toBe(true);
    for (const page of pages) {
      const versions = stream.changes.filter((change) => change.page?.id === page.id).map((change) => change.page.version);
      expect(versions, `page ${page.id}`).toEqual(Array.from({ length: 21 }, (_, k) => k + 1));
    }
    // the stored versions were written in that order too: version n's change has a lower id than version n + 1's
    const byVersion = await app.em().execute<{ page_id: number; version: number; id: string }[]>(
      `select (payload->>'page_id')::int as page_id, (payload->>'version')::int as version, id::text as id
         from changes where id > ? order by page_id, version`, [before],
    );
    for (const page of pages) {
      const rows = byVersion.filter((row) => row.page_id === page.id).map((row) => Number(row.id));
      expect(increasing(rows), `page ${page.id}: ${rows.join(',')}`).toBe(true);
    }
    // a second stream from the same point gets the same sequence
    const again = await open(s.reader.token, { lastEventId: before });
    await again.readEvents(stored.length, 10_000);
    const againIds = again.changes.map((change) => change.id);
    expect(againIds, diagnose(againIds, stored)).toEqual(stored);
  }, 60_000);
});

describe('streamEvents: resuming', () => {
  it('a client that resumes by Last-Event-ID three times while 200 changes are written receives each exactly once', async () => {
    const before = await lastChangeId();
    const pages = [];
    for (let i = 0; i < 4; i += 1) pages.push(await makePage(app, s.notes.resumed, s.manager, { title: `Lane ${i}` }));
    const start = await lastChangeId();
    const base = await notePath(app, s.notes.resumed);
    let writing = true;
    // four writers at once, 50 changes each, one page each
    const writer = Promise.all(pages.map(async (page, lane) => {
      for (let k = 0; k < 50; k += 1) {
        const answer = await (lane % 2 === 0 ? s.member : s.manager).client.put(`${base}/${page.id}`, { json: { page: { content: `<p>lane ${lane} write ${k}</p>` } } });
        expect(answer.status, answer.text).toBe(200);
      }
    })).finally(() => {
      writing = false;
    });

    const received: number[] = [];
    const connections: { resumedAfter: string; got: number; whileWriting: boolean }[] = [];
    let lastSeen = start;
    // three connections that go away after some events (the next resumes after the last complete one), then a last
    for (const leaveAfter of [30, 40, 50]) {
      const stream = await open(s.reader.token, { lastEventId: lastSeen });
      await stream.readEvents(leaveAfter, 20_000);
      await stream.close();
      const whileWriting = writing;
      received.push(...stream.changes.map((change) => change.id));
      connections.push({ resumedAfter: lastSeen, got: stream.changes.length, whileWriting });
      if (stream.lastEventId !== '') lastSeen = stream.lastEventId;
      expect(lastSeen).toBe(String(received.at(-1) ?? start));
    }
    await writer;
    const stored = await storedIdsAfter(start);
    expect(stored).toHaveLength(200);
    const last = await open(s.reader.token, { lastEventId: lastSeen });
    await last.waitUntil((stream) => received.length + stream.changes.length >= stored.length, 20_000);
    // nothing more than what is stored comes, given a moment
    await last.waitUntil((stream) => received.length + stream.changes.length > stored.length, 300);
    received.push(...last.changes.map((change) => change.id));
    connections.push({ resumedAfter: lastSeen, got: last.changes.length, whileWriting: false });
    console.log(`resume: ${JSON.stringify(connections)}`);

    const diagnosis = diagnose(received, stored);
    expect(new Set(received).size, `no duplicates: ${diagnosis}`).toBe(received.length);
    expect(received, diagnosis).toEqual(stored);
    // the JSON form from the same point holds the same changes, 100 at most per page
    const json = await readJsonEvents(s.reader.client, { since: start });
    const jsonIds = json.items.map((event) => event.id);
    expect(jsonIds, `the JSON form: ${diagnose(jsonIds, stored)}`).toEqual(stored);
    expect(json.pages.map((page) => page.body.length)).toEqual([100, 100, 0]);
    // every lane's versions 2..51 arrived in order
    const all = [...(await readJsonEvents(s.reader.client, { since: before })).items];
    for (const page of pages) {
      expect(all.filter((event) => event.page.id === page.id).map((event) => event.page.version)).toEqual(Array.from({ length: 51 }, (_, k) => k + 1));
    }
  }, 120_000);
});

describe('streamEvents: resuming on a server that just started', () => {
  it('a stream resuming by Last-Event-ID on a fresh server (as after a restart) gets what it missed at once, then what follows', async () => {
    const pages = [];
    const before = await lastChangeId();
    for (let i = 0; i < 5; i += 1) pages.push(await makePage(app, s.notes.ordered, s.member, { title: `Before the restart ${i}` }));
    const missed = await storedIdsAfter(before);
    expect(missed).toHaveLength(5);
    // a second server on this database, its change stream not yet used: the first stream it opens resumes
    const restarted = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1' }, { beside: app });
    try {
      const stream = await openEventStream(restarted.baseUrl, { token: s.reader.token, lastEventId: before });
      streams.push(stream);
      expect(stream.status).toBe(200);
      await stream.readEvents(missed.length, 5000);
      expect(stream.changes.map((change) => change.id), 'the changes written before the stream opened').toEqual(missed);
      const next = await makePage(app, s.notes.ordered, s.member, { title: 'After the restart' });
      expect(await stream.waitForChange((change) => change.page?.id === next.id, 5000)).toBeDefined();
      expect(stream.changes.map((change) => change.id)).toEqual(await storedIdsAfter(before));
    } finally {
      await Promise.all(streams.splice(0).map((stream) => stream.close()));
      await restarted.close();
    }
  });
});
