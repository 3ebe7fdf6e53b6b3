// The change log (migration 0015, src/modules/events/change-log.ts): every write appends its domain events in its own
// transaction, with who made it (and through which app), where, about what, and thin data, never content; a write
// that is refused leaves nothing. Its projections (the search index, the webhooks' outbox) follow after commit from
// durable cursors: nothing is passed over when transactions commit out of the order their rows were numbered in
// (the PostgreSQL pass races parallel writers), and two workers never apply one change twice.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { createLogger } from '../../src/http/logger.ts';
import { projectOnce, ProjectionWorker } from '../../src/modules/events/projections.ts';
import { ApiClient } from '../support/client.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createScratchDatabaseUrl, databaseKind, openSecondConnection, type TestDatabase } from '../support/database.ts';
import { makeNote, makePage, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { makeClient } from '../support/oauth.ts';

let app: TestApp;
let manager: Actor;

type Change = { id: string; type: string; actor_id: number; client_id: number | null; team_id: number | null; note_id: number | null; subject_id: number; payload: Record<string, unknown> };

const changesAfter = async (id: string): Promise<Change[]> =>
  (await app.em().execute<Change[]>('select id::text as id, type, actor_id, client_id, team_id, note_id, subject_id, payload from changes where id > ? order by id', [id]))
    .map((row) => ({ ...row, payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload }));
const lastChange = async (): Promise<string> => (await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id;
/** The last change in the order projections apply them: (tx, id), which is not always the highest id (migration 0015). */
const lastApplicable = async (): Promise<string> =>
  (await app.em().execute<{ id: string }[]>('select coalesce((select id from changes order by tx desc, id desc limit 1), 0)::text as id'))[0]!.id;
const cursor = async (name: string) => (await app.em().execute<{ change_id: string }[]>('select change_id::text as change_id from projection_cursors where name = ?', [name]))[0]!.change_id;

beforeAll(async () => {
  app = await startTestApp();
  manager = await makeUser(app, 'logger');
  await makeTeam(app, 'logged', [{ user: manager.user, role: 'manager' }]);
});
afterAll(async () => app?.close());

describe('the change log', () => {
  it('holds one row per event of a write, in its transaction: type, actor, team, note, subject and ids, never content', async () => {
    const before = await lastChange();
    const note = (await manager.client.post('/api/v1/notes', { json: { note: { title: 'Logged note', team: 'logged', slug: 'ledger', description: 'secret words' } } })).body;
    const page = (await manager.client.post('/api/v1/logged/ledger/pages', { json: { page: { title: 'First', content: '<p>private content</p>' } } })).body;
    expect((await manager.client.put(`/api/v1/logged/ledger/${page.id}`, { json: { page: { content: '<p>more private content</p>' } } })).status).toBe(200);
    const changes = await changesAfter(before);
    expect(changes.map((change) => [change.type, change.actor_id, change.client_id, change.note_id, change.subject_id])).toEqual([
      ['note.created', manager.user.id, null, note.id, note.id],
      ['page.created', manager.user.id, null, note.id, page.id],
      ['page.updated', manager.user.id, null, note.id, page.id],
    ]);
    expect(new Set(changes.map((change) => change.team_id)).size).toBe(1);
    expect(changes[2]!.payload).toEqual({ note_id: note.id, page_id: page.id, changed: ['content'], version: 2, actor: { id: manager.user.id, username: 'logger' } });
    expect(JSON.stringify(changes)).not.toMatch(/secret|private|Logged note|First/);
  });

  it('records the app a change came through', async () => {
    const client = await makeClient(app);
    const { token, secret } = await issueToken(app.em(), manager.user, { scope: 'write' });
    await app.em().execute('update tokens set client_id = ? where id = ?', [client.rowId, token.id]);
    const before = await lastChange();
    expect((await new ApiClient(app.baseUrl, secret).post('/api/v1/notes', { json: { note: { title: 'Through an app', team: 'logged' } } })).status).toBe(200);
    expect((await changesAfter(before)).map((change) => [change.type, change.client_id])).toEqual([['note.created', client.rowId]]);
  });

  it('keeps nothing of a write that is refused or rolled back', async () => {
    const note = await makeNote(app, 'logged', manager.user, { slug: 'refusals' });
    const page = await makePage(app, note, manager, { title: 'Stays', content: '<p>a</p>' });
    const before = await lastChange();
    // a move under itself is refused inside the transaction, after the page was locked
    expect((await manager.client.put(`/api/v1/logged/refusals/${page.id}`, { json: { page: { parent: page.id, content: '<p>b</p>' } } })).status).toBe(422);
    expect((await manager.client.post('/api/v1/logged/refusals/pages', { json: { page: { title: '' } } })).status).toBe(400);
    expect(await changesAfter(before)).toEqual([]);
  });

  it('has projections that move their cursor to the end, and apply each change once', async () => {
    const note = await makeNote(app, 'logged', manager.user, { slug: 'projected' });
    const page = await makePage(app, note, manager, { title: 'Projected', content: '<p>zebra</p>' });
    for (const word of ['yak', 'xerus', 'wombat']) {
      expect((await manager.client.put(`/api/v1/logged/projected/${page.id}`, { json: { page: { content: `<p>${word}</p>` } } })).status).toBe(200);
    }
    const end = await lastApplicable();
    expect(Number(await cursor('search'))).toBeLessThan(Number(end));
    await app.settle();
    expect(await cursor('search')).toBe(end);
    expect(await cursor('webhooks')).toBe(end);
    // the document holds the last write, applied once for the four changes of the page
    const [document] = await app.em().execute<{ body: string }[]>(`select body from search_documents where kind = 'page' and object_id = ?`, [page.id]);
    expect(document!.body).toBe('wombat');
    // nothing more to apply: the next run applies no row
    const worker = new ProjectionWorker(app.em(), createLogger('silent'));
    await worker.settle();
    expect(await cursor('search')).toBe(end);
  });

  it('passes over a change that fails alone three times, and applies the others', async () => {
    const note = await makeNote(app, 'logged', manager.user, { slug: 'poisoned' });
    const [good, bad, later] = await Promise.all(['good', 'bad', 'later'].map((title) => makePage(app, note, manager, { title, content: '<p>x</p>' })));
    const applied: number[] = [];
    const projection = {
      name: 'test-poisoned',
      apply: async (_em: unknown, rows: readonly { subject_id: number | null }[]) => {
        if (rows.some((row) => row.subject_id === bad!.id)) throw new Error('this change cannot be applied');
        applied.push(...rows.map((row) => row.subject_id!));
      },
    };
    // a new projection starts at the end of the log
    expect(await projectOnce(app.em(), projection)).toBe('busy');
    for (const page of [good!, bad!, later!]) {
      expect((await manager.client.put(`/api/v1/logged/poisoned/${page.id}`, { json: { page: { content: '<p>y</p>' } } })).status).toBe(200);
    }
    const logged: unknown[] = [];
    const log = { ...createLogger('silent'), error: (...args: unknown[]) => void logged.push(args) } as unknown as ReturnType<typeof createLogger>;
    const outcomes: (number | 'busy' | 'failed')[] = [];
    // runs until the later change is applied; a run that finds its rows held back (0: a transaction of this database
    // still running holds the horizon) changes nothing and is not counted
    for (const deadline = Date.now() + 10_000; !applied.includes(later!.id) && Date.now() < deadline;) {
      const outcome = await projectOnce(app.em(), projection, log).catch(() => 'failed' as const);
      if (outcome === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      else outcomes.push(outcome);
    }
    // the good change, then the bad one twice, passed over on its third run, then the later one
    expect(outcomes).toEqual([1, 'failed', 'failed', 1, 1]);
    expect(applied).toEqual([good!.id, later!.id]);
    expect(logged).toHaveLength(1);
  });

  it.runIf(databaseKind === 'postgres')('passes over no change of transactions that commit out of order: 40 parallel writers, two workers racing', async () => {
    const note = await makeNote(app, 'logged', manager.user, { slug: 'raced' });
    const pages = await Promise.all(Array.from({ length: 8 }, (_, i) => makePage(app, note, manager, { title: `Raced ${i}`, content: '<p>start</p>' })));
    await app.settle();
    const second = await openSecondConnection(app.database);
    const other = new ProjectionWorker(second.orm.em.fork(), createLogger('silent'));
    const workers = new ProjectionWorker(app.em(), createLogger('silent'));
    let running = true;
    // two workers project while the writes commit, as two processes would
    const loops = [workers, other].map(async (worker) => {
      while (running) {
        await worker.settle();
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    });
    const last = new Map<number, string>();
    try {
      await Promise.all(Array.from({ length: 40 }, async (_, i) => {
        const page = pages[i % pages.length]!;
        const word = `w${i}raced`;
        const answer = await manager.client.put(`/api/v1/logged/raced/${page.id}`, { json: { page: { content: `<p>${word}</p>` } } });
        expect(answer.status).toBe(200);
        last.set(page.id, word);
      }));
      running = false;
      await Promise.all(loops);
      await workers.settle();
    } finally {
      running = false;
      await second.close();
    }
    expect(await cursor('search')).toBe(await lastApplicable());
    // each page's document holds the content its page has now
    const rows = await app.em().execute<{ id: number; content: string; body: string }[]>(
      `select p.id, p.content, d.body from pages p join search_documents d on d.kind = 'page' and d.object_id = p.id where p.note_id = ?`, [note.id]);
    expect(rows).toHaveLength(8);
    for (const row of rows) expect(`<p>${row.body}</p>`).toBe(row.content);
  });

  it.runIf(databaseKind === 'postgres')('is held back by a transaction of its own database still running, not by one of another database', async () => {
    const note = await makeNote(app, 'logged', manager.user, { slug: 'horizon' });
    await app.settle();
    const seen: string[] = [];
    const projection = { name: 'test-horizon', apply: async (_em: unknown, rows: readonly { id: string }[]) => void seen.push(...rows.map((row) => row.id)) };
    expect(await projectOnce(app.em(), projection)).toBe('busy'); // starts at the end of the log
    const scratch = (await createScratchDatabaseUrl())!;
    const elsewhere = new pg.Client({ connectionString: scratch.url });
    const here = new pg.Client({ connectionString: (app.database as TestDatabase).url });
    await Promise.all([elsewhere.connect(), here.connect()]);
    try {
      // a transaction of another database on the same server, with an id, left running
      await elsewhere.query('begin');
      await elsewhere.query('create table held (x int)');
      const page = await makePage(app, note, manager, { title: 'After the other database began' });
      expect(await projectOnce(app.em(), projection)).toBeGreaterThan(0);
      const created = async (pageId: number) =>
        (await app.em().execute<{ id: string }[]>(`select id::text as id from changes where type = 'page.created' and subject_id = ?`, [pageId]))[0]!.id;
      expect(seen).toContain(await created(page.id));

      // a transaction of this database with an id, left running: what commits after it began waits for it
      await here.query('begin');
      await here.query('select pg_current_xact_id()');
      const later = await makePage(app, note, manager, { title: 'After this database began' });
      expect(await projectOnce(app.em(), projection)).toBe(0);
      await here.query('rollback');
      expect(await projectOnce(app.em(), projection)).toBeGreaterThan(0);
      expect(seen).toContain(await created(later.id));
    } finally {
      await here.query('rollback').catch(() => undefined);
      await elsewhere.query('rollback').catch(() => undefined);
      await Promise.all([here.end(), elsewhere.end()]);
      await app.em().execute(`delete from projection_cursors where name = 'test-horizon'`);
      await scratch.drop();
    }
  });

  it.runIf(databaseKind === 'postgres')('a projection that another process holds is skipped, not waited for', async () => {
    const second = await openSecondConnection(app.database);
    try {
      await app.em().transactional(async (tx) => {
        await tx.execute(`select 1 from projection_cursors where name = 'search' for update`);
        const applied: unknown[] = [];
        expect(await projectOnce(second.orm.em.fork(), { name: 'search', apply: async (_em, rows) => void applied.push(...rows) })).toBe('busy');
        expect(applied).toEqual([]);
      });
    } finally {
      await second.close();
    }
  });
});
