// The server and the admin command line as separate processes, the way `make run` and scripts use them: on the
// embedded database (PGlite pass: the CLI reaches it through the running server's socket, or directly when no
// server runs) and on DATABASE_URL (PostgreSQL pass).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/client.ts';
import { createScratchDatabaseUrl } from '../support/database.ts';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../support/processes.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const node = path.join(root, 'node_modules', '.bin', 'node');

let dataDir: string;
let scratch: Awaited<ReturnType<typeof createScratchDatabaseUrl>>;
let env: NodeJS.ProcessEnv;
let server: ServerProcess | undefined;
let baseUrl: string;

type Finished = { status: number | null; stdout: string; stderr: string };

/** Runs a process to the end without blocking the event loop: a spawnSync here would stall the HTTP client's
 * keep-alive timers, so a request after a few seconds of it went out on a connection the server had just closed
 * ("other side closed"). */
function runProcess(args: string[], processEnv: NodeJS.ProcessEnv, input?: string): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { cwd: root, env: processEnv, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

async function adminWith(processEnv: NodeJS.ProcessEnv, ...args: string[]) {
  const result = await runProcess(['src/cli/admin.ts', ...args], processEnv);
  return { ...result, lastLine: result.stdout.trim().split('\n').at(-1) ?? '' };
}

function admin(...args: string[]) {
  return adminWith(env, ...args);
}

/** The line the admin command writes on stderr to say which database it opened. */
function databaseLine(stderr: string): string | undefined {
  return stderr.split('\n').find((line) => line.startsWith('admin: using '));
}

function embeddedEnv(dir: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...rest } = env;
  return { ...rest, DATA_DIR: dir };
}

async function startServer(): Promise<void> {
  server = await startServerProcess(node, ['src/server.ts'], env);
}

const stopServer = (): Promise<number | null> => stopServerProcess(server);

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-cli-'));
  scratch = await createScratchDatabaseUrl();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    PATH: `${path.join(root, 'node_modules', '.bin')}:${process.env.PATH}`,
    HOME: process.env.HOME,
    PORT: String(port),
    PUBLIC_URL: baseUrl,
    DATA_DIR: dataDir,
    ADMIN_USERNAME: 'root-admin',
    LOG_LEVEL: 'warn',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  };
});
afterAll(async () => {
  await stopServer();
  await scratch?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('server and admin command line', () => {
  it('prints a working token for the first user on first start', async () => {
    await startServer();
    const token = /first user "root-admin" created.*\n\s+(nt_\S+)/.exec(server!.output)?.[1];
    expect(token, server!.output).toBeDefined();
    const me = await new ApiClient(baseUrl, token).get('/api/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('root-admin');
  });

  it('says on stderr which database it opened, without a password', async () => {
    const listed = await admin('list-users');
    expect(listed.status).toBe(0);
    if (scratch) {
      const url = new URL(scratch.url);
      expect(databaseLine(listed.stderr)).toBe(`admin: using PostgreSQL at ${url.hostname}:${url.port}${url.pathname}`);
    } else {
      expect(databaseLine(listed.stderr)).toBe(`admin: using embedded database in ${dataDir}, through the running server's socket`);
    }
    expect(listed.stdout).not.toContain('admin: using');
  });

  it('creates users and tokens while the server runs; the token is the last line', async () => {
    expect((await admin('create-user', 'carol', '--name', 'Carol C', '--lang', 'ja')).status).toBe(0);
    const created = await admin('create-token', 'carol', '--scope', 'read', '--expires-in', '7');
    expect(created.status).toBe(0);
    expect(created.lastLine).toMatch(/^nt_[A-Za-z0-9_-]{43}$/);
    const carol = new ApiClient(baseUrl, created.lastLine);
    const me = await carol.get('/api/v1/me');
    expect(me.body).toMatchObject({ username: 'carol', name: 'Carol C', lang: { code: 'ja' } });
    expect((await carol.post('/api/v1/teams', { json: { team: { name: 'by-carol' } } })).status).toBe(403);
    expect((await admin('list-users')).stdout).toMatch(/\tcarol\tCarol C\tja/);
    expect((await admin('revoke-token', created.lastLine)).status).toBe(0);
    expect((await carol.get('/api/v1/me')).status).toBe(401);
  });

  it('sets passwords from standard input and registers OAuth clients, which then get tokens', async () => {
    const short = await runProcess(['src/cli/admin.ts', 'set-password', 'carol'], env, 'short\n');
    expect(short.status).toBe(2);
    expect(short.stderr).toContain('at least 8 characters');
    const set = await runProcess(['src/cli/admin.ts', 'set-password', 'carol'], env, 'carol has a long password\n');
    expect(set.status, set.stderr).toBe(0);
    expect((await runProcess(['src/cli/admin.ts', 'set-password', 'nobody-here'], env, 'whatever-password\n')).status).toBe(1);

    const created = await admin('create-client', 'Notes for iOS', '--redirect-uri', 'notesapp://callback', '--confidential', '--first-party');
    expect(created.status, created.stderr).toBe(0);
    const clientId = /client_id: ([0-9a-f]{32})/.exec(created.stdout)?.[1];
    expect(clientId).toBeDefined();
    const secret = created.lastLine;
    expect(secret).toMatch(/^ns_/);
    const form = new URLSearchParams({ grant_type: 'password', login: 'carol', password: 'carol has a long password', client_id: clientId!, client_secret: secret });
    const token = await fetch(`${baseUrl}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form });
    expect(token.status).toBe(200);
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    expect((await new ApiClient(baseUrl, accessToken).get('/api/v1/me')).body.username).toBe('carol');

    const publicClient = await admin('create-client', 'Desktop', '--redirect-uri', 'http://127.0.0.1:8123/cb', '--redirect-uri', 'desktop://cb', '--public');
    expect(publicClient.status).toBe(0);
    expect(publicClient.stdout).not.toContain('client_secret');
    const agent = await admin('create-client', 'Agent', '--redirect-uri', 'http://127.0.0.1:8124/cb', '--public', '--proposals');
    expect(agent.stdout).toContain('created public, writes proposals client "Agent"');
    const listed = await admin('list-clients');
    expect(listed.stdout).toContain(`${clientId}\tNotes for iOS\tconfidential,first-party\tdirect\t-\tnotesapp://callback`);
    expect(listed.stdout).toMatch(/\tDesktop\tpublic\tdirect\t-\thttp:\/\/127\.0\.0\.1:8123\/cb desktop:\/\/cb/);
    expect(listed.stdout).toMatch(/\tAgent\tpublic\tproposals\t-\thttp:\/\/127\.0\.0\.1:8124\/cb/);

    expect((await admin('create-client', 'No URI')).status).toBe(2);
    expect((await admin('create-client', 'Bad', '--redirect-uri', 'javascript:alert(1)')).status).toBe(2);
    expect((await admin('create-client', 'Both', '--redirect-uri', 'https://a.example/cb', '--public', '--confidential')).status).toBe(2);

    expect((await admin('delete-client', clientId!)).status).toBe(0);
    expect((await new ApiClient(baseUrl, accessToken).get('/api/v1/me')).status).toBe(401);
    expect((await admin('delete-client', clientId!)).status).toBe(1);
  }, 90_000);

  it('refuses bad input with a message and a non-zero status, changing nothing', async () => {
    const taken = await admin('create-user', 'CAROL');
    expect(taken.status).toBe(1);
    expect(taken.stderr).toContain('already taken');
    expect((await admin('create-user', 'notes')).status).toBe(1);
    expect((await admin('create-user', 'bad name')).status).toBe(1);
    expect((await admin('create-token', 'nobody-here')).status).toBe(1);
    expect((await admin('create-token', 'carol', '--scope', 'admin')).status).toBe(2);
    expect((await admin('frobnicate')).status).toBe(2);
    expect((await admin('list-users')).stdout.split('\n').filter((line) => /^\d+\t/.test(line))).toHaveLength(2);
  });

  it('rebuilds the search index with reindex while the server runs', async () => {
    await admin('create-user', 'sam');
    const sam = new ApiClient(baseUrl, (await admin('create-token', 'sam')).lastLine);
    expect((await sam.post('/api/v1/notes', { json: { note: { title: '議事録 reindexed', team: 'sam', slug: 'minutes' } } })).status).toBe(200);
    const found = async () => ((await sam.get('/api/v1/search?q=議事')).body as { title: string }[]).map((note) => note.title);
    // search may lag a write by up to 1 s (the index is a projection of the change log): wait for it, 2 s at most
    for (let waited = 0; waited < 2000 && (await found()).length === 0; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await found()).toEqual(['議事録 reindexed']);
    const rebuilt = await admin('reindex');
    expect(rebuilt.status, rebuilt.stderr).toBe(0);
    expect(rebuilt.lastLine).toMatch(/^reindexed \d+ notes, \d+ pages, \d+ issues, \d+ comments in [\d.]+ s; index table .+, its indexes .+$/);
    expect(await found()).toEqual(['議事録 reindexed']);
  });

  it('another client\'s open transaction never takes the server\'s writes along (embedded: holds them off until it ends)', async () => {
    // PGlite is one session: the server's work must neither run inside another client's open transaction nor wait
    // for it while holding the session (it did: the webhook worker's poll hung `admin reindex` forever). PostgreSQL
    // gives every connection its own session: the server's write goes through at once, outside that transaction.
    const sam = new ApiClient(baseUrl, (await admin('create-token', 'sam')).lastLine);
    const client = scratch
      ? new pg.Client({ connectionString: scratch.url })
      : new pg.Client({ host: dataDir, port: 5432, user: 'postgres', database: 'postgres' });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select count(*) from notes');
      let answered = false;
      const creating = sam.post('/api/v1/notes', { json: { note: { title: 'Written while the admin held a transaction', team: 'sam', slug: 'meanwhile' } } })
        .then((answer) => ((answered = true), answer));
      if (scratch) {
        expect((await creating).status).toBe(200);
      } else {
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(answered).toBe(false);
        // the admin's next statement still runs (it hung before) and does not see the server's write yet
        expect((await client.query('select count(*)::int as n from notes where slug = $1', ['meanwhile'])).rows).toEqual([{ n: 0 }]);
      }
      // the other client's rollback does not take the server's write along
      await client.query('rollback');
      const created = await creating;
      expect(created.status, created.text).toBe(200);
      expect((await client.query('select title from notes where slug = $1', ['meanwhile'])).rows).toEqual([{ title: 'Written while the admin held a transaction' }]);
    } finally {
      await client.end();
    }
  });

  it('stops gracefully on SIGTERM; started on a port that is taken, says so and exits non-zero', async () => {
    expect(await stopServer()).toBe(0);
    const blocker = net.createServer();
    const port = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as net.AddressInfo).port)));
    try {
      const result = await runProcess(['src/server.ts'], { ...env, PORT: String(port) });
      const output = result.stdout + result.stderr;
      expect(result.status, output).toBe(1);
      expect(result.stderr).toContain(`port ${port} is already in use on 127.0.0.1; set PORT`);
      expect(output).not.toContain('listening');
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('the command line works without the server, and the server starts again on the same database', async () => {
    expect(await stopServer()).toBe(0);
    const created = await admin('create-token', 'carol');
    const token = created.lastLine;
    expect(token).toMatch(/^nt_/);
    if (!scratch) expect(databaseLine(created.stderr)).toBe(`admin: using embedded database in ${dataDir}`);
    await startServer();
    expect(server!.output).not.toContain('first user');
    expect((await new ApiClient(baseUrl, token).get('/api/v1/me')).body.username).toBe('carol');
  });
});

describe('admin command line without a database', () => {
  it('refuses every command where DATA_DIR has no database and DATABASE_URL is unset, creating nothing', async () => {
    const missing = path.join(dataDir, 'no-such-dir');
    for (const args of [['list-users'], ['create-user', 'dora'], ['create-token', 'dora'], ['revoke-token', '1']]) {
      const refused = await adminWith(embeddedEnv(missing), ...args);
      expect(refused.status, args.join(' ')).toBe(1);
      expect(refused.stderr).toContain(`no database in ${missing}`);
      expect(refused.stderr).toContain('make run');
      expect(refused.stdout).toBe('');
      expect(existsSync(missing)).toBe(false);
    }
    const empty = path.join(dataDir, 'empty-dir');
    mkdirSync(empty);
    expect((await adminWith(embeddedEnv(empty), 'create-user', 'dora')).status).toBe(1);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('names the PostgreSQL server it tried, never the password, and fails in one line when it does not answer', async () => {
    const port = await freePort();
    const refused = await adminWith({ ...env, DATABASE_URL: `postgresql://someone:s3cret-pw@127.0.0.1:${port}/nowhere` }, 'list-users');
    expect(refused.status).toBe(1);
    expect(databaseLine(refused.stderr)).toBe(`admin: using PostgreSQL at 127.0.0.1:${port}/nowhere`);
    expect(refused.stderr).toContain('ECONNREFUSED');
    expect(refused.stderr).not.toContain('s3cret-pw');
    expect(refused.stderr).not.toContain('    at ');
  });
});
