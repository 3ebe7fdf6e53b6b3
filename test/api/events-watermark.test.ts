// The change stream's watermark (event-stream.repository.ts readWatermark), on both databases: the last change id
// handed out, and the transactions appending to the change log. On the embedded database the stream reads the last
// id alone (no appender can be running when its statement runs): that reading must give the same last id as the full
// one, after writes as before them. On PostgreSQL the full reading names a transaction that holds the appenders'
// lock until it ends, and the bound (safe-bound.ts) waits for it. And the named statements the stream prepares on
// its own connection (db/rows.ts preparedQuery) survive PGlite's one session being shared by two connections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedQuery } from '../../src/db/rows.ts';
import { readWatermark } from '../../src/modules/events/event-stream.repository.ts';
import { TAKE_CHANGE_WRITERS_LOCK } from '../../src/modules/events/events.repository.ts';
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
