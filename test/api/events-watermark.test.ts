// The change stream's watermark (event-stream.repository.ts readWatermark), on both databases: the last change id
// handed out, and the transactions appending to the change log. On the embedded database the stream reads the last
// id alone (no appender can be running when its statement runs): that reading must give the same last id as the full
// one, after writes as before them. On PostgreSQL the full reading names a transaction that holds the appenders'
// lock until it ends, and the bound (safe-bound.ts) waits for it. And the named statements the stream prepares on
// its own connection (db/rows.ts preparedQuery) survive PGlite's one session being shared by two connections.
// On PostgreSQL a pass reads the watermark, settles and reads the changes in one statement (streamPass, the SQL
// function change_stream_pass): the changes it answers are read after its last reading, so an appender that ends
// while it settles has its change in the answer, and one still running has not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedQuery } from '../../src/db/rows.ts';
import { readWatermark, streamPass } from '../../src/modules/events/event-stream.repository.ts';
import { insertChange, TAKE_CHANGE_WRITERS_LOCK } from '../../src/modules/events/events.repository.ts';
import { SafeBound } from '../../src/modules/events/safe-bound.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { databaseKind } from '../support/database.ts';
import { makePage } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario<'written'>;

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app, { notes: { written: {} } });
});
afterAll(async () => {
  await app?.close();
});

const storedLast = async (): Promise<number> =>
  Number((await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id);

describe('readWatermark', () => {
  it('the last id alone and the full reading agree, and follow the writes', async () => {
    const before = await readWatermark(app.em());
    expect(await readWatermark(app.em(), 'write', true)).toEqual(before);
    expect(before.running.size).toBe(0);
    await makePage(app, s.notes.written, s.manager, { title: 'Watermarked' });
    const after = await readWatermark(app.em());
    expect(after.last).toBeGreaterThan(before.last);
    expect(after.last).toBe(await storedLast());
    expect(await readWatermark(app.em(), 'write', true)).toEqual(after);
  });

  it.runIf(databaseKind === 'postgres')('on PostgreSQL, a transaction holding the appenders\' lock holds the bound back until it ends', async () => {
    const bound = new SafeBound();
    await app.database.orm.em.fork().transactional(async (em) => {
      await em.execute(`select ${TAKE_CHANGE_WRITERS_LOCK}`);
      const held = await readWatermark(app.em());
      expect(held.running.size).toBe(1);
      bound.observe(held);
      expect(bound.pending).toBe(true);
      expect(bound.value).toBeUndefined();
    });
    bound.observe(await readWatermark(app.em()));
    expect(bound.pending).toBe(false);
    expect(bound.value).toBe(await storedLast());
  });
});

describe.runIf(databaseKind === 'postgres')('streamPass (one statement a pass, PostgreSQL)', () => {
  const note = () => s.notes.written;
  const append = (em: Parameters<typeof insertChange>[0], title: string) => insertChange(em, {
    type: 'note.updated', actorId: s.manager.user.id, clientId: null, teamId: note().team.id, noteId: note().id,
    subjectId: note().id, payload: { note_id: note().id, changed: [title], actor: { id: s.manager.user.id, username: s.manager.user.username } },
  });
  const pass = (after: number, settleMs: number) =>
    streamPass(app.em(), { after, limit: 500, users: [s.manager.user.id], settleMs, stepMs: 2 }, 'read');

  it('answers the changes after `after` up to its reading, with their context, when no one appends', async () => {
    const after = await storedLast();
    await app.database.orm.em.fork().transactional((em) => append(em, 'quiet'));
    const read = await pass(after, 50);
    expect(read.first.running.size).toBe(0);
    expect(read.final.last).toBe(await storedLast());
    expect(read.changes.map((change) => Number(change.id))).toEqual([await storedLast()]);
    expect(read.changes[0]!.payload).toMatchObject({ note_id: note().id, changed: ['quiet'] });
    expect(read.context.notes).toEqual([expect.objectContaining({ id: note().id, team_id: note().team.id })]);
    expect(read.context.memberships).toEqual([{ team_id: note().team.id, user_id: s.manager.user.id }]);
    const bound = new SafeBound();
    bound.observe(read.first);
    bound.observe(read.final);
    expect(bound.value).toBe(read.final.last);
  });

  it('waits for an appender it saw to end, then answers its change, read after the reading that saw it end', async () => {
    const after = await storedLast();
    let answered = false;
    let running: ReturnType<typeof pass> | undefined;
    const started = performance.now();
    await app.database.orm.em.fork().transactional(async (em) => {
      await append(em, 'settled');
      // the pass starts while the appender holds the lock, and the appender commits 150 ms later, within the settle
      running = pass(after, 5000).finally(() => (answered = true));
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(answered).toBe(false);
    });
    const passed = await running!;
    expect(performance.now() - started).toBeLessThan(4000);
    expect(passed.first.running.size).toBe(1);
    expect(passed.final.running.size).toBe(0);
    const bound = new SafeBound();
    bound.observe(passed.first);
    bound.observe(passed.final);
    expect(bound.value).toBe(await storedLast());
    expect(passed.changes.map((change) => Number(change.id))).toEqual([await storedLast()]);
  });

  it('gives up the settle after settleMs: the running appender holds the bound back and its change is not read', async () => {
    const after = await storedLast();
    const bound = new SafeBound();
    bound.observe(await readWatermark(app.em()));
    await app.database.orm.em.fork().transactional(async (em) => {
      await append(em, 'held');
      const started = performance.now();
      const read = await pass(after, 60);
      expect(performance.now() - started).toBeGreaterThanOrEqual(55);
      expect(read.first.running.size).toBe(1);
      expect(read.final.running).toEqual(read.first.running);
      expect(read.changes).toEqual([]);
      bound.observe(read.first);
      bound.observe(read.final);
      expect(bound.value).toBe(after);
    });
    const read = await pass(after, 60);
    bound.observe(read.first);
    bound.observe(read.final);
    expect(bound.value).toBe(await storedLast());
    expect(read.changes).toHaveLength(1);
  });
});

describe('preparedQuery', () => {
  it('prepares a name again on another connection of the same session (PGlite is one session)', async () => {
    const text = 'select count(*)::int as n from changes where id <= $1';
    const last = await storedLast();
    const onWrite = await preparedQuery<{ n: number }>(app.em(), 'watermark_test_count', text, [last]);
    // the change stream's connection: on PGlite the same session, where the name is already prepared
    const onRead = await preparedQuery<{ n: number }>(app.em(), 'watermark_test_count', text, [last], 'read');
    expect(onRead).toEqual(onWrite);
    expect(onWrite[0]!.n).toBeGreaterThan(0);
    // and back: the first connection still counts the name as its own and binds it, to the statement the second
    // prepared again (same name, same text)
    expect(await preparedQuery<{ n: number }>(app.em(), 'watermark_test_count', text, [last])).toEqual(onWrite);
  });
});
