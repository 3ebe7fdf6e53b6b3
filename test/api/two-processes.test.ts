// Two server processes on one PostgreSQL behave as one service (issue 12): each is `node src/server.ts` as
// scripts/serve.sh starts it, with its own pool, change feed and memory. Driven at once through both: issues
// created concurrently in one note get gapless, unique indexes; a token's hourly budget is shared (N + k requests
// split across both: exactly N succeed); a page written through one is read through the other with the write.
// PostgreSQL pass only: the embedded database (PGlite) belongs to one process; on the PGlite pass the last test here
// checks that a second server on its DATA_DIR is refused instead.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { User } from '../../src/modules/users/user.entity.ts';
import { ApiClient } from '../support/client.ts';
import { createScratchDatabaseUrl, databaseKind } from '../support/database.ts';
import { freePort, projectRoot as root, startServerProcess, startService, stopServerProcess, type ServiceProcess } from '../support/processes.ts';

const node = path.join(root, 'node_modules', '.bin', 'node');
const LIMIT = 120;

type Server = ServiceProcess;

const startServer = (databaseUrl: string, dataDir: string): Promise<Server> => startService(databaseUrl, dataDir, { RATE_LIMIT_PER_HOUR: String(LIMIT) });

const stopServer = (server: Server | undefined) => stopServerProcess(server);

describe.skipIf(databaseKind !== 'postgres')('two server processes on one PostgreSQL (PostgreSQL pass only: PGlite is one process)', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabaseUrl>>;
  let dataDir: string;
  let a: Server | undefined;
  let b: Server | undefined;
  let database: Database;
  let viaA: ApiClient;
  let viaB: ApiClient;

  beforeAll(async () => {
    scratch = await createScratchDatabaseUrl();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-two-'));
    // one after the other: the first migrates the fresh database and creates the first user
    a = await startServer(scratch!.url, dataDir);
    b = await startServer(scratch!.url, dataDir);
    const token = /first user "admin" created.*\n\s+(nt_\S+)/.exec(a.output)?.[1];
    expect(token, a.output).toBeDefined();
    viaA = new ApiClient(a.baseUrl, token);
    viaB = new ApiClient(b.baseUrl, token);
    database = await openDatabase({ databaseUrl: scratch!.url });
    expect((await viaA.post('/api/v1/notes', { form: { 'note[title]': 'Shared', 'note[team]': 'admin', 'note[slug]': 'shared' } })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([stopServer(a), stopServer(b)]);
    await database?.close();
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('issues created at once through both get the indexes 1..n, each once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? viaA : viaB).post('/api/v1/admin/shared/issues', { form: { 'issue[title]': `Issue ${i}` } })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const indexes = answers.map((answer) => answer.body.index as number).sort((x, y) => x - y);
    expect(indexes).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const stored = await database.orm.em.fork().execute<{ index: number }[]>('select index from issues order by index');
    expect(stored.map((row) => Number(row.index))).toEqual(indexes);
  });

  it('a page written through one is read with the write through the other, every time', async () => {
    const created = await viaA.post('/api/v1/admin/shared/pages', { json: { page: { title: 'Both', content: '<p>v0</p>' } } });
    expect(created.status).toBe(200);
    const url = `/api/v1/admin/shared/${created.body.id}`;
    for (let round = 1; round <= 20; round += 1) {
      // read twice through B first: the second is a hot read, answered from B's memory
      await viaB.get(url);
      const before = await viaB.get(url);
      expect(before.body.content).toBe(`<p>v${round - 1}</p>`);
      const written = await viaA.patch(url, { json: { page: { content: `<p>v${round}</p>` } } });
      expect(written.status).toBe(200);
      const read = await viaB.get(url, { headers: { 'If-None-Match': before.headers.get('etag')! } });
      expect(read.status).toBe(200);
      expect(read.body.content).toBe(`<p>v${round}</p>`);
      expect(read.headers.get('etag')).toBe(written.headers.get('etag'));
    }
    // a token revoked through A no longer reads through B, not even what B keeps for it
    const em = database.orm.em.fork();
    const { secret, token } = await issueToken(em, await em.findOneOrFail(User, { username: 'admin' }), { scope: 'read' });
    const reader = new ApiClient(b!.baseUrl, secret);
    expect((await reader.get(url)).status).toBe(200);
    expect((await reader.get(url)).status).toBe(200);
    expect((await viaA.delete(`/api/v1/me/tokens/${token.id}`)).status).toBe(204);
    expect((await reader.get(url)).status).toBe(401);
  });

  it(`a token's budget of ${LIMIT} an hour is shared: ${LIMIT + 15} requests across both, exactly ${LIMIT} answered`, async () => {
    const em = database.orm.em.fork();
    const { secret, token } = await issueToken(em, await em.findOneOrFail(User, { username: 'admin' }), { scope: 'read' });
    const clients = [new ApiClient(a!.baseUrl, secret), new ApiClient(b!.baseUrl, secret)];
    const statuses: number[] = [];
    for (let batch = 0; batch < 5; batch += 1) {
      const answers = await Promise.all(Array.from({ length: (LIMIT + 15) / 5 }, (_, i) => clients[i % 2]!.get('/api/v1/me')));
      statuses.push(...answers.map((answer) => answer.status));
      const limited = answers.find((answer) => answer.status === 429);
      if (limited) {
        expect(limited.body).toMatchObject({ status: 429, code: 'rate_limited' });
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(limited.headers.get('ratelimit-remaining')).toBe('0');
      }
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(15);
    const [row] = await em.execute<{ used: number }[]>('select used from rate_limits where key = ?', [`token:${token.id}`]);
    expect(Number(row!.used)).toBe(LIMIT);
  });
});

// The embedded database's counterpart: its DATA_DIR belongs to one process, so a second server on it is refused with
// a message and exit status 1 (src/db/database.ts, DatabaseInUseError), and the first goes on serving.
describe.skipIf(databaseKind !== 'pglite')('a second server on one embedded DATA_DIR (PGlite pass only)', () => {
  it('is refused with a message and exit status 1, and the first goes on serving', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-two-'));
    const start = async () => {
      const port = await freePort();
      const env = {
        PATH: `${path.join(root, 'node_modules', '.bin')}:${process.env.PATH}`, HOME: process.env.HOME, NODE_ENV: 'test',
        PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, DATA_DIR: dataDir, LOG_LEVEL: 'warn',
      };
      return { port, env };
    };
    let first: Server | undefined;
    try {
      const one = await start();
      first = Object.assign(await startServerProcess(node, ['src/server.ts'], one.env), { baseUrl: `http://127.0.0.1:${one.port}` });
      const two = await start();
      const second = spawnSync(node, ['src/server.ts'], { cwd: root, env: two.env, encoding: 'utf8', timeout: 60_000 });
      expect(second.status, second.stdout + second.stderr).toBe(1);
      expect(second.stdout + second.stderr).toContain(`another server is already running on ${dataDir}`);
      expect((await fetch(`${first.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await stopServer(first);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
