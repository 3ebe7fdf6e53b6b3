// kill -9 during writes: the server, started as `make run` starts it (scripts/serve.sh), takes a stream of page PUTs
// and issue creations from several concurrent clients and is killed with SIGKILL in the middle of it, a few times,
// then restarted on the same data (DATA_DIR on the PGlite pass, DATABASE_URL on the PostgreSQL pass). Every write a
// client saw acknowledged (a 2xx) must be there afterwards: the page holds the last acknowledged content (or one sent
// after it whose answer the kill cut off), every acknowledged issue exists with its title, and the note's issue
// indexes have no gaps. The database must open clean: the server starts, answers, and has no migration to apply.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/client.ts';
import { createScratchDatabaseUrl } from '../support/database.ts';
import { freePort, projectRoot as root, startServerProcess, stopServerProcess, type ServerProcess } from '../support/processes.ts';

const KILLS = Number(process.env.CRASH_KILLS ?? 3);
const CLIENTS = 4;
const NOTE = '/api/v1/crashers/ledger';

let dataDir: string;
let scratch: Awaited<ReturnType<typeof createScratchDatabaseUrl>>;
let env: NodeJS.ProcessEnv;
let server: ServerProcess | undefined;
let baseUrl: string;
let adminToken: string | undefined;

/** Starts the server as `make run` does and waits until it answers; returns what it printed while starting. */
async function startServer(): Promise<string> {
  server = await startServerProcess('bash', ['scripts/serve.sh'], env);
  return server.output;
}

const kill = async (signal: NodeJS.Signals): Promise<void> => void (await stopServerProcess(server, signal));

type Acknowledged = { pages: Map<number, { acked?: string; sent?: string }>; issues: Map<number, string>; writes: number };

/** One client: alternately a PUT of its page and a new issue, until `stop` says so or the connection dies. */
async function writer(client: ApiClient, id: number, pageId: number, acknowledged: Acknowledged, round: number, stop: { now: boolean }): Promise<void> {
  const page = acknowledged.pages.get(pageId)!;
  for (let k = 0; !stop.now; k += 1) {
    try {
      if (k % 2 === 0) {
        // a word of its own, which the search index (a projection of the change log) must come to hold
        const content = `<p>client ${id} round ${round} write ${k} crash${id}r${round}w${k}</p>`;
        page.sent = content;
        const answer = await client.put(`${NOTE}/${pageId}`, { json: { page: { content } } });
        if (answer.status >= 200 && answer.status < 300) {
          page.acked = content;
          acknowledged.writes += 1;
        } else {
          throw new Error(`PUT answered ${answer.status}: ${answer.text}`);
        }
      } else {
        const title = `client ${id} round ${round} issue ${k}`;
        const answer = await client.post(`${NOTE}/issues`, { json: { issue: { title } } });
        if (answer.status >= 200 && answer.status < 300) {
          acknowledged.issues.set(answer.body.index, title);
          acknowledged.writes += 1;
        } else {
          throw new Error(`POST answered ${answer.status}: ${answer.text}`);
        }
      }
    } catch (error) {
      if (error instanceof Error && error.message.includes('answered')) throw error;
      if (process.env.CRASH_DEBUG) console.log(error);
      return; // the connection died with the server: this write is not acknowledged
    }
  }
}

/** Every issue of the note, read through the API. */
async function allIssues(client: ApiClient): Promise<Map<number, string>> {
  const issues = new Map<number, string>();
  for (let page = 1; ; page += 1) {
    const answer = await client.get(`${NOTE}/issues`, { query: { state: 'all', per_page: '100', page: String(page) } });
    expect(answer.status, answer.text).toBe(200);
    for (const issue of answer.body as { index: number; title: string }[]) issues.set(issue.index, issue.title);
    if ((answer.body as unknown[]).length < 100) return issues;
  }
}

/** Whether the search finds `pageId` by `word` within two seconds (the projection's lag after a restart). */
async function foundSoon(client: ApiClient, word: string, pageId: number): Promise<boolean> {
  for (const deadline = Date.now() + 2000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const answer = await client.get(`/api/v1/search?q=${word}`);
    expect(answer.status, answer.text).toBe(200);
    if ((answer.body as { matches: { page_id?: number }[] }[]).some((note) => note.matches.some((match) => match.page_id === pageId))) return true;
  }
  return false;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-crash-'));
  scratch = await createScratchDatabaseUrl();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    PATH: `${path.join(root, 'node_modules', '.bin')}:${process.env.PATH}`,
    HOME: process.env.HOME,
    PORT: String(port),
    PUBLIC_URL: baseUrl,
    DATA_DIR: dataDir,
    ADMIN_USERNAME: 'crash-admin',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_HOUR: '10000000',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  };
});
afterAll(async () => {
  await kill('SIGKILL');
  await scratch?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('kill -9 during a stream of writes', () => {
  it(`loses no acknowledged write over ${KILLS} kills, and the database opens clean each time`, async () => {
    const first = await startServer();
    const token = /first user "crash-admin" created.*\n\s+(nt_\S+)/.exec(first)?.[1];
    expect(token, first).toBeDefined();
    adminToken = token;
    const setup = new ApiClient(baseUrl, token);
    expect((await setup.post('/api/v1/teams', { json: { team: { name: 'crashers' } } })).status).toBe(200);
    expect((await setup.post('/api/v1/notes', { json: { note: { title: 'Ledger', team: 'crashers', slug: 'ledger' } } })).status).toBe(200);
    const acknowledged: Acknowledged = { pages: new Map(), issues: new Map(), writes: 0 };
    const pageIds: number[] = [];
    for (let i = 0; i < CLIENTS; i += 1) {
      const page = await setup.post(`${NOTE}/pages`, { json: { page: { title: `Page ${i}`, content: '<p>start</p>' } } });
      expect(page.status, page.text).toBe(200);
      pageIds.push(page.body.id);
      acknowledged.pages.set(page.body.id, { acked: '<p>start</p>' });
    }

    let lost = 0;
    for (let round = 1; round <= KILLS; round += 1) {
      const stop = { now: false };
      // a client of its own each (its own connections), all at once
      const writers = pageIds.map((pageId, i) => writer(new ApiClient(baseUrl, token), i, pageId, acknowledged, round, stop));
      // killed once the round has a few acknowledged writes, at a random moment after that
      const target = acknowledged.writes + 10 + Math.floor(Math.random() * 30);
      const deadline = Date.now() + 20_000;
      while (acknowledged.writes < target && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      await kill('SIGKILL');
      stop.now = true;
      await Promise.all(writers);

      const startedAt = Date.now();
      const restarted = await startServer();
      if (process.env.CRASH_DEBUG) console.log(`round ${round}: ${acknowledged.writes} writes so far, restart took ${Date.now() - startedAt} ms`);
      expect(restarted, 'a restart applies no migration').not.toContain('migrations applied');
      const client = new ApiClient(baseUrl, token);
      expect((await client.get('/readyz')).status).toBe(200);
      for (const [pageId, { acked, sent }] of acknowledged.pages) {
        const page = await client.get(`${NOTE}/${pageId}`);
        expect(page.status, page.text).toBe(200);
        // the last acknowledged content, or the one sent after it that the kill cut the answer of
        if (page.body.content !== acked && page.body.content !== sent) lost += 1;
        acknowledged.pages.get(pageId)!.acked = page.body.content;
      }
      // the search index, projected from the change log after commit, catches up after the kill: each page is found
      // by the word of the content it holds now
      for (const [pageId, { acked }] of acknowledged.pages) {
        const word = /crash\d+r\d+w\d+/.exec(acked ?? '')?.[0];
        if (word && !(await foundSoon(client, word, pageId))) lost += 1;
      }
      const stored = await allIssues(client);
      for (const [index, title] of acknowledged.issues) if (stored.get(index) !== title) lost += 1;
      const indexes = [...stored.keys()].sort((a, b) => a - b);
      expect(indexes, 'issue indexes are gapless').toEqual(indexes.map((_, i) => i + 1));
    }
    console.log(`[crash] ${scratch ? 'PostgreSQL' : 'PGlite'}: ${KILLS} kills, ${acknowledged.writes} acknowledged writes, ${lost} lost`);
    expect(acknowledged.writes).toBeGreaterThan(KILLS * CLIENTS);
    expect(lost).toBe(0);
    await kill('SIGTERM');
  }, 240_000);

  it('a change committed but not yet projected when the server is killed is projected when it starts again', async () => {
    // a process that leaves the projections to others (PROJECTION_WORKER=false): its changes wait in the log
    server = await startServerProcess('bash', ['scripts/serve.sh'], { ...env, PROJECTION_WORKER: 'false' });
    const client = new ApiClient(baseUrl, adminToken);
    const page = await client.post(`${NOTE}/pages`, { json: { page: { title: 'Waiting', content: '<p>unprojectedokapi</p>' } } });
    expect(page.status, page.text).toBe(200);
    expect(await foundSoon(client, 'unprojectedokapi', page.body.id), 'not projected while no worker runs').toBe(false);
    await kill('SIGKILL');
    await startServer();
    expect(await foundSoon(client, 'unprojectedokapi', page.body.id), 'projected by the restarted server').toBe(true);
    await kill('SIGTERM');
  }, 60_000);
});
