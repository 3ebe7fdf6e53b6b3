// Live documents shared by two server processes through Redis (REDIS_URL; src/modules/live/coordination.ts), with
// headless clients: one on each process edits one page; each sees the other's typing, the saved version holds both
// once and names both; an API write through one process shows on both; the owner process stopping leaves the other
// to save. PostgreSQL pass only (PGlite is one process), with the Redis server scripts/run-tests.sh starts
// (TEST_REDIS_URL); the browser form of this is test/browser/live-two-processes.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { createUser } from '../../src/modules/users/users.service.ts';
import type { TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { createScratchDatabaseUrl, databaseKind } from '../support/database.ts';
import { connectLive, type LiveClient } from '../support/live.ts';
import { startService, stopServerProcess, type ServiceProcess } from '../support/processes.ts';

const redisUrl = process.env.TEST_REDIS_URL;
type Server = ServiceProcess;

const startServer = (databaseUrl: string, dataDir: string): Promise<Server> =>
  startService(databaseUrl, dataDir, { REDIS_URL: redisUrl, LIVE_SAVE_PAUSE_MS: '300', LIVE_SAVE_MAX_MS: '1500', LIVE_RECHECK_MS: '500' });

describe.skipIf(databaseKind !== 'postgres' || (!redisUrl && !process.env.CI))('live documents on two processes through Redis (PostgreSQL pass, with Redis)', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabaseUrl>>;
  let dataDir: string;
  let a: Server | undefined;
  let b: Server | undefined;
  let database: Database;
  let admin: ApiClient;
  let secondToken: string;
  let secondName: string;
  const clients: LiveClient[] = [];
  const live = (server: Server, name: string, token: string) => {
    const client = connectLive({ baseUrl: server.baseUrl } as TestApp, name, { token });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    expect(redisUrl, 'TEST_REDIS_URL: the Redis server scripts/run-tests.sh starts').toBeDefined();
    scratch = await createScratchDatabaseUrl();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-live-redis-'));
    a = await startServer(scratch!.url, dataDir);
    b = await startServer(scratch!.url, dataDir);
    const token = /first user "admin" created.*\n\s+(nt_\S+)/.exec(a.output)?.[1];
    expect(token, a.output).toBeDefined();
    admin = new ApiClient(a.baseUrl, token);
    database = await openDatabase({ databaseUrl: scratch!.url });
    expect((await admin.post('/api/v1/notes', { json: { note: { title: 'Shared', team: 'admin', slug: 'shared' } } })).status).toBe(200);
    // a second person, a member of the admin's team
    const em = database.orm.em.fork();
    const second = await createUser(em, { username: 'second', name: 'Second Person' });
    secondName = second.username;
    secondToken = (await issueToken(em, second, { scope: 'write' })).secret;
    expect((await admin.post('/api/v1/teams/admin/users', { json: { username: 'second', role: 'member' } })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all([stopServerProcess(a), stopServerProcess(b)]);
    await database?.close();
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function stored(id: number): Promise<{ content: string; version: number }> {
    const answer = await admin.get(`/api/v1/admin/shared/${id}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body;
  }

  it('one client on each process: each sees the other\'s typing, the version holds both once and names both', async () => {
    const created = await admin.post('/api/v1/admin/shared/pages', { json: { page: { title: 'Together', content: '<p>top</p><p>bottom</p>' } } });
    expect(created.status, created.text).toBe(200);
    const name = `admin/shared/${created.body.id}`;
    const onA = live(a!, name, admin.token!);
    const onB = live(b!, name, secondToken);
    await Promise.all([onA.ready, onB.ready]);
    expect([onA.html(), onB.html()]).toEqual(['<p>top</p><p>bottom</p>', '<p>top</p><p>bottom</p>']);
    onA.write('<p>top from A</p><p>bottom</p>');
    onB.write('<p>top</p><p>bottom from B</p>');
    await onA.until((html) => html === '<p>top from A</p><p>bottom from B</p>');
    await onB.until((html) => html === '<p>top from A</p><p>bottom from B</p>');
    await expect.poll(async () => (await stored(created.body.id)).content, { timeout: 10_000 }).toBe('<p>top from A</p><p>bottom from B</p>');
    const history = await admin.get(`/api/v1/admin/shared/${created.body.id}/histories`);
    const newest = (history.body as { index: number; user: { username: string }; co_authors?: { username: string }[] }[]).sort((x, y) => y.index - x.index)[0]!;
    expect([newest.user.username, ...(newest.co_authors ?? []).map((user) => user.username)].sort()).toEqual(['admin', secondName].sort());
  });

  it('an API write through one process shows on both, their typing kept, and is held once', async () => {
    const created = await admin.post('/api/v1/admin/shared/pages', { json: { page: { title: 'Written', content: '<p>one</p><p>two</p>' } } });
    const name = `admin/shared/${created.body.id}`;
    const onA = live(a!, name, admin.token!);
    const onB = live(b!, name, secondToken);
    await Promise.all([onA.ready, onB.ready]);
    onB.write('<p>one typed</p><p>two</p>');
    await onA.until((html) => html.includes('one typed'));
    const viaB = new ApiClient(b!.baseUrl, admin.token);
    const written = await viaB.put(`/api/v1/admin/shared/${created.body.id}`, { json: { page: { content: '<p>one</p><p>two</p><p>three from the API</p>', base_version: 1 } } });
    expect(written.status, written.text).toBe(200);
    const want = '<p>one typed</p><p>two</p><p>three from the API</p>';
    await onA.until((html) => html === want);
    await onB.until((html) => html === want);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect([onA.html(), onB.html()]).toEqual([want, want]);
    await expect.poll(async () => (await stored(created.body.id)).content, { timeout: 10_000 }).toBe(want);
  });

  it('the owner process stopping: the other takes over and saves what is typed on it', async () => {
    const created = await admin.post('/api/v1/admin/shared/pages', { json: { page: { title: 'Handover', content: '<p>start</p>' } } });
    const name = `admin/shared/${created.body.id}`;
    const onA = live(a!, name, admin.token!);
    await onA.ready;
    // A opened it first: A owns it
    const onB = live(b!, name, secondToken);
    await onB.ready;
    await stopServerProcess(a);
    a = undefined;
    onB.write('<p>start, then B alone</p>');
    await expect.poll(async () => (await new ApiClient(b!.baseUrl, secondToken).get(`/api/v1/admin/shared/${created.body.id}`)).body.content, { timeout: 15_000 }).toBe('<p>start, then B alone</p>');
  });
});
