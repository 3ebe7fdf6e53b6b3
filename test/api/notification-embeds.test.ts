// Notifications and log entries about requests embed the request with each page's diff: a page of results of either
// list ends where its text, those diffs counted, reaches LIMIT_LIST_TEXT_BYTES (as the comment lists are cut by their
// bodies, test/api/answer-size.test.ts), so a list of requests with large diffs is answered in pieces, none skipped.
// Here the limit is its smallest (64 KiB) and each request's diff ~40 KiB.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { ApiClient } from '../support/client.ts';
import { forkedRunbook } from '../support/forks.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

const KiB = 1024;
const LIMIT = 64 * KiB;
// what an answer carries besides the counted text: per item its note (with team and users), user and headings
const AROUND = 48 * KiB;
const REQUESTS = 6;

let app: TestApp;
let cast: Scenario;

/** Every page of results of `path`, each answer's size and items. */
async function readAll(client: ApiClient, path: string) {
  const items: { id: number; type?: string; request?: { pages: { diff: string }[] } }[] = [];
  const sizes: number[] = [];
  let total = 0;
  for (let page = 1; page < 50; page += 1) {
    const answer = await client.get(path, { query: { page: String(page), per_page: '100' } });
    expect(answer.status, answer.text).toBe(200);
    total = Number(answer.headers.get('x-total-count'));
    if (answer.body.length === 0) break;
    sizes.push(Buffer.byteLength(answer.text));
    items.push(...answer.body);
    if (items.length >= total) break;
  }
  return { items, sizes, total };
}

beforeAll(async () => {
  app = await startTestApp({ LIMIT_LIST_TEXT_BYTES: String(LIMIT) });
  cast = await makeScenario(app, { team: 'reviewers' });
  const runbook = await forkedRunbook(app, cast);
  for (let i = 0; i < REQUESTS; i += 1) {
    const content = Array.from({ length: 400 }, (_, line) => `<p>proposal ${i} line ${line} with words enough</p>`).join('\n');
    const version = await runbook.editFork(runbook.forkDeploy, content);
    await runbook.request([version]);
  }
}, 120_000);
afterAll(async () => app?.close());

describe('lists embedding requests', () => {
  it('notifications about requests come in pages of at most LIMIT_LIST_TEXT_BYTES of text, diffs counted, none skipped', async () => {
    const { items, sizes, total } = await readAll(cast.manager.client, '/api/v1/notifications?state=all');
    const requests = items.filter((item) => item.type === 'request');
    expect(requests).toHaveLength(REQUESTS);
    expect(requests[0]!.request!.pages[0]!.diff.length).toBeGreaterThan(20 * KiB);
    expect(items).toHaveLength(total);
    expect(new Set(items.map((item) => item.id)).size).toBe(total);
    expect(sizes.length).toBeGreaterThan(1);
    for (const size of sizes) expect(size).toBeLessThan(LIMIT + AROUND);
  });

  it('the activity log about requests does the same', async () => {
    const { items, sizes, total } = await readAll(cast.manager.client, '/api/v1/logs');
    expect(items.filter((item) => item.type === 'request').length).toBeGreaterThanOrEqual(REQUESTS);
    expect(items).toHaveLength(total);
    expect(sizes.length).toBeGreaterThan(1);
    for (const size of sizes) expect(size).toBeLessThan(LIMIT + AROUND);
  });
});
