// Page reads and lists against a big note on the embedded database, as ratios against a baseline measured in the
// same run: reading a root page (baseline) vs a page 32 levels deep, and listing page 1 vs page 500 of a
// 10,000-page note. Run with `make bench`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { migrate, openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/http/logger.ts';
import { issueToken } from '../src/modules/auth/tokens.ts';
import { createUser } from '../src/modules/users/users.service.ts';

const RUNS = 15;
const database = await openDatabase({});
await migrate(database.orm);
const em = database.orm.em.fork();
const user = await createUser(em, { username: 'bench' });
const { secret } = await issueToken(em, user, { scope: 'write' });
await em.execute(`insert into notes (team_id, user_id, slug, title, created_at, updated_at)
  select id, ${user.id}, 'big', 'Big note', now(), now() from teams where name = 'bench'`);
const noteId = (await em.execute<{ id: number }[]>(`select id from notes where slug = 'big'`))[0]!.id;
// 10,000 pages: 100 top-level pages with 99 children each (10,000), plus a chain 32 levels deep under the first one
await em.execute(`insert into pages (note_id, parent_id, position, title, content, is_cover, created_at, updated_at)
  select ${noteId}, null, g, 'top ' || g, repeat('<p>content</p>', 50), g = 1, now(), now() from generate_series(1, 100) g`);
await em.execute(`insert into pages (note_id, parent_id, position, title, content, created_at, updated_at)
  select ${noteId}, p.id, g, p.title || ' child ' || g, repeat('<p>content</p>', 50), now(), now()
    from pages p cross join generate_series(1, 99) g where p.note_id = ${noteId} and p.parent_id is null`);
let parent = (await em.execute<{ id: number }[]>(`select id from pages where note_id = ${noteId} and position = 1 and parent_id is null`))[0]!.id;
const root = parent;
for (let depth = 2; depth <= 32; depth += 1) {
  parent = (await em.execute<{ id: number }[]>(
    `insert into pages (note_id, parent_id, position, title, content, created_at, updated_at)
     values (${noteId}, ${parent}, 1000, 'depth ${depth}', 'deep', now(), now()) returning id`))[0]!.id;
}
const deepest = parent;
const count = (await em.execute<{ n: string }[]>(`select count(*) as n from pages where note_id = ${noteId}`))[0]!.n;

const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const config = loadConfig({ NODE_ENV: 'production', PUBLIC_URL: baseUrl, LOG_LEVEL: 'silent' });
server.on('request', buildApp({ config, orm: database.orm, logger: createLogger('silent') }));

async function median(path: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = performance.now();
    const response = await fetch(baseUrl + path, { headers: { Authorization: `Bearer ${secret}` } });
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
    await response.arrayBuffer();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
}

const base = '/api/v1/bench/big';
const baseline = await median(`${base}/${root}`);
const cases: [string, string][] = [
  ['read a page 32 levels deep', `${base}/${deepest}`],
  ['list page 1 (tree order)', `${base}/pages`],
  ['list page 500 of 10,000 (tree order)', `${base}/pages?page=500`],
  ['list page 500 of 10,000 (by title)', `${base}/pages?page=500&order=title`],
];
console.log(`note with ${count} pages; median of ${RUNS} requests each`);
console.log(`baseline: read a top-level page             ${baseline.toFixed(1).padStart(7)} ms  ratio 1.0`);
for (const [label, path] of cases) {
  const time = await median(path);
  console.log(`${label.padEnd(43)} ${time.toFixed(1).padStart(7)} ms  ratio ${(time / baseline).toFixed(1)}`);
}
server.close();
await database.close();
