// No answer can exhaust the server: the worst case of every list that embeds or carries text, built within the
// documented limits, against the server as `make run` starts it (scripts/serve.sh: a separate process with its heap
// ceiling), whose peak resident memory is read from the kernel afterwards.
//
// The worst case: a public note with a 64 KiB description; a page of 1 MiB with 20 children of 1 MiB each; 30
// versions of that page, each rewriting all of it (every diff deletes and inserts 1 MiB); 100 comments of 64 KiB on
// the page, on the note and on an issue with a 64 KiB description, written by another user who mentions the owner (so
// the owner gets 200 notifications, and the activity log holds them all). Before the embeds were bounded, the page
// comment list alone answered ~200 MB and the server died at its heap limit.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/client.ts';
import { createScratchDatabaseUrl, databaseKind } from '../support/database.ts';
import { freePort, projectRoot as root, startServerProcess, stopServerProcess, type ServerProcess } from '../support/processes.ts';

const MiB = 1024 * 1024;
const KiB = 1024;
const NOTE = '/api/v1/sizes/worst';
const CHILDREN = 20;
const VERSIONS = 30;
const COMMENTS = 100;
// The server's peak resident memory while it serves these answers, four at a time, must stay under this ceiling. It
// is NOT yet `make bench`'s goal (250 MB on PostgreSQL, 400 MB on PGlite): these reads peak at about 320-390 MB and 740
// MB today (four answers of 14-28 MB held at once as text and bytes; on PGlite the WebAssembly heap grows for rows of
// 1 MiB and does not shrink). The ceiling keeps what holds from getting worse; before the embeds were bounded the
// server died at its heap limit on the first of these lists.
const RSS_CEILING = databaseKind === 'postgres' ? 448 * MiB : 900 * MiB;
// what one answer of stored text may carry (LIMIT_LIST_TEXT_BYTES, default)
const LIST_TEXT_BYTES = 4 * MiB;
// one item of a comment, notification or log list at most: a 64 KiB comment, and two 64 KiB descriptions (a note's,
// an issue's) as source and as HTML, with users and headings around them
const ITEM_BOUND = 64 * KiB * 5 + 16 * KiB;

const run = promisify(execFile);
let dataDir: string;
let scratch: Awaited<ReturnType<typeof createScratchDatabaseUrl>>;
let env: NodeJS.ProcessEnv;
let server: ServerProcess | undefined;
let owner: ApiClient;
let other: ApiClient;
let pageId: number;
let issueIndex: number;

/** Text of `bytes` ASCII bytes in lines of HTML, different for every `seed`, so that versions differ in every line. */
function text(bytes: number, seed: string): string {
  const line = (n: number) => `<p>${seed} line ${n} lorem ipsum dolor sit amet consectetur adipiscing</p>\n`;
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n += 1) {
    const next = line(n);
    lines.push(next);
    size += next.length;
  }
  return lines.join('').slice(0, bytes);
}

async function ok(answer: Promise<{ status: number; text: string; body: any }>): Promise<any> {
  const done = await answer;
  expect(done.status, done.text.slice(0, 500)).toBe(200);
  return done.body;
}

/** The server's peak resident memory since it started (VmHWM), in bytes. */
function peakResidentBytes(): number {
  const status = readFileSync(`/proc/${server!.child.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** An answer's size on the wire (no compression asked for) and its parsed body. */
async function measured(client: ApiClient, target: string, query: Record<string, string> = {}) {
  const answer = await client.get(target, { query });
  expect(answer.status, answer.text.slice(0, 500)).toBe(200);
  return { bytes: Buffer.byteLength(answer.text), body: answer.body, headers: answer.headers };
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-sizes-'));
  scratch = await createScratchDatabaseUrl();
  const port = await freePort();
  env = {
    PATH: `${path.join(root, 'node_modules', '.bin')}:${process.env.PATH}`,
    HOME: process.env.HOME,
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    ADMIN_USERNAME: 'sizes-owner',
    LOG_LEVEL: 'warn',
    // as `make bench` runs the server whose memory goals this checks
    NODE_ENV: 'production',
    RATE_LIMIT_PER_HOUR: '10000000',
    WEBHOOK_WORKER: 'false',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  };
  // first start: the owner and its token; then, with the server stopped (the embedded database has one user at a
  // time), the other user and its token through the admin command line
  server = await startServerProcess('bash', ['scripts/serve.sh'], env);
  const ownerToken = /first user "sizes-owner" created.*\n\s+(nt_\S+)/.exec(server.output)?.[1];
  expect(ownerToken, server.output).toBeDefined();
  await stopServerProcess(server);
  const admin = (...args: string[]) => run(path.join(root, 'node_modules', '.bin', 'node'), ['src/cli/admin.ts', ...args], { cwd: root, env });
  await admin('create-user', 'sizes-other');
  const otherToken = /\n(nt_\S+)/.exec((await admin('create-token', 'sizes-other')).stdout)?.[1];
  expect(otherToken).toBeDefined();
  server = await startServerProcess('bash', ['scripts/serve.sh'], env);
  const baseUrl = env.PUBLIC_URL!;
  owner = new ApiClient(baseUrl, ownerToken);
  other = new ApiClient(baseUrl, otherToken);

  await ok(owner.post('/api/v1/teams', { json: { team: { name: 'sizes' } } }));
  await ok(owner.post('/api/v1/notes', { json: { note: { title: 'Worst', team: 'sizes', slug: 'worst', description: text(64 * KiB, 'description') } } }));
  pageId = (await ok(owner.post(`${NOTE}/pages`, { json: { page: { title: 'Big', content: text(MiB, 'page') } } }))).id;
  for (let i = 0; i < CHILDREN; i += 1) {
    await ok(owner.post(`${NOTE}/pages`, { json: { page: { title: `Child ${i}`, content: text(MiB, `child ${i}`), parent: pageId } } }));
  }
  for (let v = 0; v < VERSIONS; v += 1) {
    await ok(owner.put(`${NOTE}/${pageId}`, { json: { page: { content: text(MiB, `version ${v}`) } } }));
  }
  issueIndex = (await ok(owner.post(`${NOTE}/issues`, { json: { issue: { title: 'Big issue', description: text(64 * KiB, 'issue') } } }))).index;
  const comment = (target: string, i: number) => ok(other.post(target, { json: { comment: { comment: text(64 * KiB, `comment ${i}`) }, mentions: ['sizes-owner'] } }));
  for (let i = 0; i < COMMENTS; i += 1) {
    await comment(`${NOTE}/${pageId}/comments`, i);
    await comment(`${NOTE}/comments`, i);
    await comment(`${NOTE}/issues/${issueIndex}/comments`, i);
  }
  // the reads are measured on a server that has served nothing else: the writes above leave garbage of their own in
  // the heap (collected lazily, up to the heap's ceiling), which says nothing about what an answer costs
  await stopServerProcess(server);
  server = await startServerProcess('bash', ['scripts/serve.sh'], env);
}, 600_000);

afterAll(async () => {
  await stopServerProcess(server, 'SIGKILL');
  await scratch?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the worst case of every list that carries text', () => {
  it('a comment embeds its page without the page\'s text, so 100 comments on a 1 MiB page stay small', async () => {
    const { bytes, body } = await measured(owner, `${NOTE}/${pageId}/comments`, { per_page: '100' });
    expect(body).toHaveLength(COMMENTS);
    expect(body[0].page).not.toHaveProperty('content');
    expect(body[0].page).not.toHaveProperty('children');
    expect(JSON.stringify(body)).not.toMatch(/(page|child \d+) line/);
    // 100 comments of 64 KiB, each with the page's heading and its note (a 64 KiB description): no page text
    expect(bytes).toBeLessThan(COMMENTS * ITEM_BOUND);
  });

  it('note and issue comments, notifications and the activity log stay within their items\' own text', async () => {
    for (const [target, query] of [
      [`${NOTE}/comments`, { per_page: '100' }],
      [`${NOTE}/issues/${issueIndex}/comments`, { per_page: '100' }],
      ['/api/v1/notifications', { per_page: '100' }],
      ['/api/v1/logs', { per_page: '100' }],
    ] as const) {
      const { bytes, body } = await measured(owner, target, query);
      expect(body.length, target).toBe(100);
      // each item: a comment of 64 KiB, and at most two 64 KiB descriptions (the note's, an issue's) with their HTML
      expect(bytes, target).toBeLessThan(100 * ITEM_BOUND);
      expect(JSON.stringify(body)).not.toMatch(/(page|child \d+) line/);
    }
  });

  it('a page with 20 children of 1 MiB carries its own text only', async () => {
    const { bytes, body } = await measured(owner, `${NOTE}/${pageId}`);
    expect(body.children).toHaveLength(CHILDREN);
    expect(body.children[0]).not.toHaveProperty('content');
    expect(body.children[0]).not.toHaveProperty('note');
    expect(JSON.stringify(body)).not.toMatch(/child \d+ line/);
    // its own text, its note once, 20 headings
    expect(bytes).toBeLessThan(MiB + 512 * KiB);
  });

  it('the page list carries at most 20 pages, each with its own text only', async () => {
    const { bytes, body } = await measured(owner, `${NOTE}/pages`);
    expect(body.pages).toHaveLength(20);
    // 20 pages of 1 MiB, each with its note (a 64 KiB description) and the headings of its relatives
    expect(bytes).toBeLessThan(20 * (MiB + 256 * KiB));
  });

  it('the history of 30 versions of 1 MiB with 2 MiB diffs comes in pages of at most LIMIT_LIST_TEXT_BYTES, none skipped', async () => {
    const seen: number[] = [];
    let target: string | undefined = `${env.PUBLIC_URL}${NOTE}/${pageId}/histories?per_page=100`;
    let answers = 0;
    let largest = 0;
    while (target) {
      const url = new URL(target);
      const { bytes, body, headers } = await measured(owner, url.pathname, Object.fromEntries(url.searchParams));
      answers += 1;
      largest = Math.max(largest, bytes);
      expect(Number(headers.get('x-total-count'))).toBe(VERSIONS + 1);
      seen.push(...body.map((version: { index: number }) => version.index));
      target = /<([^>]+)>; rel="next"/.exec(headers.get('link') ?? '')?.[1];
      expect(answers).toBeLessThanOrEqual(VERSIONS + 1);
    }
    expect(seen).toEqual(Array.from({ length: VERSIONS + 1 }, (_, i) => VERSIONS + 1 - i));
    expect(answers).toBeGreaterThan(1);
    // a page of results holds versions up to the budget, or one version that is larger alone
    expect(largest).toBeLessThan(LIST_TEXT_BYTES + 4 * MiB);
  });

  it('serving all of them, four at a time, the server stays up and under its memory ceiling', async () => {
    const targets = [
      `${NOTE}/${pageId}/comments?per_page=100`, `${NOTE}/comments?per_page=100`, `${NOTE}/issues/${issueIndex}/comments?per_page=100`,
      '/api/v1/notifications?per_page=100', '/api/v1/logs?per_page=100', `${NOTE}/${pageId}`, `${NOTE}/pages`,
      `${NOTE}/${pageId}/histories?per_page=100`, `${NOTE}/issues?per_page=100`, `/api/v1/search?q=lorem&per_page=100`,
    ];
    for (let round = 0; round < 3; round += 1) {
      for (let i = 0; i < targets.length; i += 4) {
        const statuses = await Promise.all(targets.slice(i, i + 4).map(async (target) => (await owner.get(target)).status));
        expect(statuses.every((status) => status === 200), String(statuses)).toBe(true);
      }
    }
    expect(server!.child.exitCode).toBeNull();
    const peak = peakResidentBytes();
    console.log(`answer-size: peak resident memory of the server over every read above: ${(peak / MiB).toFixed(0)} MiB (${databaseKind})`);
    expect(peak, `peak resident memory ${(peak / MiB).toFixed(0)} MiB`).toBeLessThan(RSS_CEILING);
  });
});
