// No answer can exhaust the server: the worst case of every list that carries long text, built within the documented
// limits, against the server as `make run` starts it (scripts/serve.sh: a separate process with its heap ceiling),
// whose peak resident memory while it serves them is read from the kernel.
//
// The worst case: a public note with a 64 KiB description; a page of 1 MiB with 20 children of 1 MiB each; 30
// versions of that page, each rewriting all of it (every diff deletes and inserts 1 MiB); 100 comments of 64 KiB on
// the page, on the note and on an issue with a 64 KiB description, written by another user who mentions the owner (so
// the owner gets 200 notifications, and the activity log holds them all); 100 more notes and 100 more issues with
// 64 KiB descriptions. Before the embeds were bounded, the page comment list alone answered ~200 MB and the server
// died at its heap limit; before the lists of long texts were cut at LIMIT_LIST_TEXT_BYTES, they answered 13-27 MB
// each and four at once took the server past its memory goal.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/client.ts';
import { createScratchDatabaseUrl, databaseKind } from '../support/database.ts';
import { freePort, projectRoot as root, startServerProcess, stopServerProcess, type ServerProcess } from '../support/processes.ts';
import { RSS_GOAL_MB } from '../../scripts/lib/bench-goals.ts';

const MiB = 1024 * 1024;
const KiB = 1024;
const NOTE = '/api/v1/sizes/worst';
const CHILDREN = 20;
const VERSIONS = 30;
const COMMENTS = 100;
const MORE = 100;
// make bench's memory goal, which the server must stay under while it serves these answers four at a time, every
// 1 MiB page at once, and eight 1 MiB page writes at once. What holds it there: the text being built into answers at
// once has one budget (src/http/answer-gate.ts), and the heap's ceiling is sized for that budget (scripts/serve.sh;
// docs/speed.md, Memory, has the figures).
const RSS_GOAL = RSS_GOAL_MB[databaseKind === 'postgres' ? 'postgres' : 'pglite'] * MiB;
// the long text one page of results may carry (LIMIT_LIST_TEXT_BYTES, default)
const LIST_TEXT_BYTES = 4 * MiB;
// what an answer adds to the text its pages of results are cut by (estimated from stored sizes): users, headings,
// links, the HTML of descriptions, an object embedded in every item, a note embedded twice in an item (a log entry's
// note and its comment's)
const AROUND = 2 * MiB;

const run = promisify(execFile);
const METRICS_TOKEN = 'answer-size-metrics-token-0123456789';
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

/**
 * The server's peak resident memory (VmHWM) since `resetPeak`, in bytes. The kernel resets the peak on a write of
 * "5" to /proc/<pid>/clear_refs (Linux 4.0 on), so the start-up (the embedded database's own peak) is not counted,
 * as make bench samples only its load rounds.
 */
function peakResidentBytes(): number {
  const status = readFileSync(`/proc/${server!.child.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function resetPeak(): void {
  writeFileSync(`/proc/${server!.child.pid}/clear_refs`, '5');
}

/** An answer's size on the wire (no compression asked for) and its parsed body. */
async function measured(client: ApiClient, target: string, query: Record<string, string> = {}) {
  const answer = await client.get(target, { query, headers: { 'Accept-Encoding': 'identity' } });
  expect(answer.status, answer.text.slice(0, 500)).toBe(200);
  return { bytes: Buffer.byteLength(answer.text), body: answer.body, headers: answer.headers };
}

/**
 * Every page of results of a list, following `Link: rel="next"` from `target`: each answer's size, and the items
 * of all of them. Each answer holds at most `limit` bytes, X-Total-Count is the same on every page, and no item
 * comes twice.
 */
async function readList(target: string, limit: number): Promise<{ items: { id: number }[]; answers: number[]; total: number }> {
  const items: { id: number }[] = [];
  const answers: number[] = [];
  const totals = new Set<number>();
  let next: string | undefined = `${env.PUBLIC_URL}${target}`;
  while (next) {
    const url = new URL(next);
    const { bytes, body, headers } = await measured(owner, url.pathname, Object.fromEntries(url.searchParams));
    answers.push(bytes);
    expect(bytes, `${url.pathname}${url.search}`).toBeLessThan(limit);
    totals.add(Number(headers.get('x-total-count')));
    items.push(...body);
    next = /<([^>]+)>; rel="next"/.exec(headers.get('link') ?? '')?.[1];
    expect(answers.length, 'one page of results per item at most').toBeLessThanOrEqual(1000);
  }
  expect(totals.size, 'X-Total-Count is the same on every page of results').toBe(1);
  expect(new Set(items.map((item) => item.id)).size, 'no item comes twice').toBe(items.length);
  return { items, answers, total: [...totals][0]! };
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
    METRICS_TOKEN,
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
  for (let i = 0; i < MORE; i += 1) {
    await ok(owner.post('/api/v1/notes', { json: { note: { title: `More ${i}`, team: 'sizes', description: text(64 * KiB, `note ${i}`) } } }));
    await ok(owner.post(`${NOTE}/issues`, { json: { issue: { title: `More ${i}`, description: text(64 * KiB, `issue ${i}`) } } }));
  }
}, 600_000);

afterAll(async () => {
  await stopServerProcess(server, 'SIGKILL');
  await scratch?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

// Each read walks every page of a worst-case list of many MiB against a server process (11-14 s on PGlite with the
// machine quiet): a minute each, so a loaded machine (CI's other files) does not make a pass a timeout.
describe('the worst case of every list that carries long text', { timeout: 60_000 }, () => {
  it('a comment embeds its page without the page\'s text, and the comments come in pages of at most LIMIT_LIST_TEXT_BYTES', async () => {
    const { items, answers, total } = await readList(`${NOTE}/${pageId}/comments?per_page=100`, LIST_TEXT_BYTES + AROUND);
    expect(total).toBe(COMMENTS);
    expect(items).toHaveLength(COMMENTS);
    expect(answers.length).toBeGreaterThan(1);
    const first = items[0] as { page?: object };
    expect(first.page).not.toHaveProperty('content');
    expect(first.page).not.toHaveProperty('children');
    expect(JSON.stringify(items)).not.toMatch(/(page|child \d+) line/);
  });

  it('note and issue comments, notes, issues, notifications and the activity log come in pages of at most LIMIT_LIST_TEXT_BYTES, none skipped', async () => {
    for (const [target, count] of [
      [`${NOTE}/comments?per_page=100`, COMMENTS],
      [`${NOTE}/issues/${issueIndex}/comments?per_page=100`, COMMENTS],
      ['/api/v1/notes?per_page=100', MORE + 1],
      ['/api/v1/teams/sizes/notes?per_page=100', MORE + 1],
      [`${NOTE}/issues?per_page=100`, MORE + 1],
    ] as const) {
      const { items, answers, total } = await readList(target, LIST_TEXT_BYTES + AROUND);
      expect(total, target).toBe(count);
      expect(items, target).toHaveLength(count);
      expect(answers.length, target).toBeGreaterThan(1);
      expect(JSON.stringify(items)).not.toMatch(/(page|child \d+) line/);
    }
    // the search: every note has a 64 KiB description, so a page of results holds fewer than the 100 asked for (the
    // index is kept by the server's projection worker just after each write: waited for, 30 s at most)
    for (let waited = 0; ; waited += 250) {
      const { headers } = await measured(owner, '/api/v1/search', { q: 'lorem', per_page: '1' });
      if (headers.get('x-total-count') === String(MORE + 1) || waited > 30_000) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const found = await readList('/api/v1/search?q=lorem&per_page=100', LIST_TEXT_BYTES + AROUND);
    expect(found.total).toBe(MORE + 1);
    expect(found.items).toHaveLength(MORE + 1);
    expect(found.answers.length).toBeGreaterThan(1);
    // the owner hears of every comment (mentioned in each, and the author of the page, the note and the issue)
    const notifications = await readList('/api/v1/notifications?state=all&per_page=100', LIST_TEXT_BYTES + AROUND);
    expect(notifications.items.length).toBe(notifications.total);
    expect(notifications.total).toBeGreaterThanOrEqual(2 * COMMENTS);
    expect(notifications.answers.length).toBeGreaterThan(1);
    // the log holds every write above (and the team, the notes, the pages): read to the end, it holds the comments
    const log = await readList('/api/v1/logs?per_page=100', LIST_TEXT_BYTES + AROUND);
    expect(log.items.length).toBe(log.total);
    expect(log.items.filter((entry) => (entry as { type?: string }).type === 'comment')).toHaveLength(3 * COMMENTS);
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

  it('the page list of 21 pages of 1 MiB comes in pages of results of at most LIMIT_LIST_TEXT_BYTES, until last_page', async () => {
    const seen: number[] = [];
    for (let page = 1; ; page += 1) {
      const { bytes, body } = await measured(owner, `${NOTE}/pages`, { page: String(page) });
      expect(bytes).toBeLessThan(LIST_TEXT_BYTES + AROUND);
      expect(body.pages.length).toBeGreaterThan(0);
      seen.push(...body.pages.map((item: { id: number }) => item.id));
      if (body.last_page) break;
      expect(page).toBeLessThan(CHILDREN + 1);
    }
    expect(seen).toHaveLength(CHILDREN + 1);
    expect(new Set(seen).size).toBe(CHILDREN + 1);
    // past the end: no pages, and the last page of results
    const { body } = await measured(owner, `${NOTE}/pages`, { page: '100' });
    expect(body).toMatchObject({ pages: [], last_page: true });
  });

  it('the history of 30 versions of 1 MiB with 2 MiB diffs comes in pages of at most LIMIT_LIST_TEXT_BYTES, none skipped', async () => {
    // a page of results holds versions up to the budget, or one version that is larger alone
    const { items, answers, total } = await readList(`${NOTE}/${pageId}/histories?per_page=100`, LIST_TEXT_BYTES + 4 * MiB);
    expect(total).toBe(VERSIONS + 1);
    expect(answers.length).toBeGreaterThan(1);
    expect(items.map((version) => (version as unknown as { index: number }).index)).toEqual(Array.from({ length: VERSIONS + 1 }, (_, i) => VERSIONS + 1 - i));
  });

  // a server started afresh, 33 large answers and eight 1 MiB writes: 27 s on PostgreSQL and past 30 s on PGlite here
  it('serving the largest of them four at a time, every large page at once, then eight 1 MiB page writes at once, the server stays up and under make bench\'s memory goal', { timeout: 120_000 }, async () => {
    const targets = [
      `${NOTE}/${pageId}/comments?per_page=100`, `${NOTE}/comments?per_page=100`, `${NOTE}/issues/${issueIndex}/comments?per_page=100`,
      '/api/v1/notifications?per_page=100', '/api/v1/logs?per_page=100', `${NOTE}/${pageId}`, `${NOTE}/pages`,
      `${NOTE}/${pageId}/histories?per_page=100`, `${NOTE}/issues?per_page=100`, '/api/v1/notes?per_page=100',
      `/api/v1/search?q=lorem&per_page=100`,
    ];
    // measured on a server that has served nothing else: the writes above leave garbage of their own in the heap
    // (collected lazily, up to the heap's ceiling), which says nothing about what an answer costs
    await stopServerProcess(server);
    server = await startServerProcess('bash', ['scripts/serve.sh'], env);
    // on PGlite the start holds ~500 MB more for about two seconds whatever the data (V8 optimizing the embedded
    // database's largest WebAssembly function: docs/speed.md, Memory): measured apart, then the peak is reset once the
    // resident memory has settled (within 5 % over a second, 15 s at most)
    const residentBytes = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server!.child.pid}/status`, 'utf8'))![1]) * 1024;
    for (let waited = 0, last = residentBytes(); waited < 15_000; waited += 1000) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const now = residentBytes();
      if (waited >= 1000 && Math.abs(now - last) < 0.05 * last) break;
      last = now;
    }
    const starting = peakResidentBytes();
    console.log(`answer-size: peak resident memory of the server as it started: ${(starting / MiB).toFixed(0)} MiB (${databaseKind}), settled at ${(residentBytes() / MiB).toFixed(0)} MiB`);
    resetPeak();
    // what the server printed, when it stops answering (a heap exhausted says so on its standard error)
    const died = (error: unknown) => {
      throw new Error(`${String(error)}; server exit ${server!.child.exitCode} ${server!.child.signalCode}; its last output:\n${server!.output.slice(-3000)}`);
    };
    for (let round = 0; round < 3; round += 1) {
      for (let i = 0; i < targets.length; i += 4) {
        // as browsers and most clients ask: compressed
        const statuses = await Promise.all(targets.slice(i, i + 4).map(async (target) => (await owner.get(target, { headers: { 'Accept-Encoding': 'gzip, br' } }).catch(died)).status));
        expect(statuses.every((status) => status === 200), String(statuses)).toBe(true);
      }
    }
    // every page of 1 MiB at once (below a page of results each, above the gate's threshold: they share its budget)
    const pages = [pageId, ...((await measured(owner, `${NOTE}/${pageId}`)).body.children as { id: number }[]).map((child) => child.id)];
    const pageStatuses = await Promise.all(pages.map(async (id) => (await owner.get(`${NOTE}/${id}`, { headers: { 'Accept-Encoding': 'gzip, br' } }).catch(died)).status));
    expect(pageStatuses).toEqual(Array(CHILDREN + 1).fill(200));
    const reads = peakResidentBytes();
    // the caches now hold what they may; eight writers replace the whole of eight 1 MiB pages at once
    const children = (await measured(owner, `${NOTE}/${pageId}`)).body.children as { id: number }[];
    const writes = await Promise.all(children.slice(0, 8).map((child, i) => owner.put(`${NOTE}/${child.id}`, { json: { page: { content: text(MiB, `rewrite ${i}`) } } }).catch(died)));
    expect(writes.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(server!.child.exitCode).toBeNull();
    const peak = peakResidentBytes();
    console.log(`answer-size: peak resident memory of the server: ${(reads / MiB).toFixed(0)} MiB over the reads, ${(peak / MiB).toFixed(0)} MiB with the writes (${databaseKind}; make bench's goal < ${RSS_GOAL / MiB})`);
    expect(peak, `peak resident memory ${(peak / MiB).toFixed(0)} MiB`).toBeLessThan(RSS_GOAL);
    // the heap's ceiling keeps at least twice what was alive at the worst moment (HEAP_LIMIT_MB, scripts/serve.sh)
    const metrics = await (await fetch(`${owner.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    const [limit, peakLive, refused] = [gauge('notes_heap_limit_bytes'), gauge('notes_heap_live_peak_bytes'), gauge('notes_memory_refusals')];
    console.log(`answer-size: heap ceiling ${(limit / MiB).toFixed(0)} MiB, peak live heap ${(peakLive / MiB).toFixed(0)} MiB: headroom ${(limit / peakLive).toFixed(1)}x; ${refused} refused (${databaseKind})`);
    expect(peakLive).toBeGreaterThan(0);
    expect(limit / peakLive, 'heap headroom').toBeGreaterThanOrEqual(2);
    expect(refused).toBe(0);
  });
});
