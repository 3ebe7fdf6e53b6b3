// The `history` case of `make bench` (scripts/bench-http.ts): a note of 1,000 pages (100 top-level pages with 9
// children each) with 50 versions each, one a day for 50 days, and every child moved to another parent 25 days ago,
// seeded with set-based SQL (the tree history's rows backdated as the triggers of migration 0022 would have written
// them). Then the whole note is read page of results by page of results (listPages until `last_page`), as it is now
// and as it was 30 days ago (`?at=`), one request at a time; the goal (issue 23): reading it at a past moment costs
// within 3x of reading it now. Both cost a fixed number of statements whatever the note's size (the tree then is one
// statement, the contents of a page of results one more: src/modules/pages/history.ts).
import type pg from 'pg';

export const HISTORY_PAGES = 1000;
export const HISTORY_VERSIONS = 50;
/** Reading the note at a past moment ÷ reading it now, whole walks, median of the rounds. */
export const HISTORY_RATIO_GOAL = 3;
/** Importing the export of that note, from the upload to the job done, seconds (issue 23: under a minute). */
export const IMPORT_SECONDS_GOAL = 60;

export type HistorySeed = { path: string; at: string; seedSeconds: number };

export async function seedHistory(sql: pg.Client, team: string): Promise<HistorySeed> {
  const started = performance.now();
  const day = `interval '1 day'`;
  const now = `date_trunc('second', now())`;
  const note = (await sql.query<{ id: number; user_id: number }>(
    `insert into notes (team_id, user_id, slug, title, description, created_at, updated_at)
     select t.id, m.user_id, 'history', 'History', 'A note with a long history', ${now} - 52 * ${day}, ${now}
       from teams t join memberships m on m.team_id = t.id and m.role = 'manager'
      where t.name = $1 order by m.id limit 1
     returning id, user_id`, [team])).rows[0]!;
  await sql.query(`insert into pages (note_id, parent_id, position, title, content, version_sequence, created_at, updated_at)
    select $1, null, g, 'Chapter ' || g, '', ${HISTORY_VERSIONS}, ${now} - 51 * ${day}, ${now} - ${day} from generate_series(1, 100) g`, [note.id]);
  await sql.query(`insert into pages (note_id, parent_id, position, title, content, version_sequence, created_at, updated_at)
    select $1, p.id, g, p.title || '.' || g, '', ${HISTORY_VERSIONS}, ${now} - 51 * ${day}, ${now} - ${day}
      from pages p cross join generate_series(1, 9) g where p.note_id = $1 and p.parent_id is null`, [note.id]);
  // version k of every page on day k (the last one yesterday), about 1 KB of text each; the page holds its last
  await sql.query(`insert into page_versions (page_id, note_id, index, title, content, diff, user_id, created_at)
    select p.id, $1, k, p.title, repeat('<p>Version ' || k || ' of page ' || p.id || ': some text of the page.</p>', 20), null, $2,
           ${now} - (${HISTORY_VERSIONS} + 1 - k) * ${day}
      from pages p cross join generate_series(1, ${HISTORY_VERSIONS}) k where p.note_id = $1`, [note.id, note.user_id]);
  await sql.query(`update pages p set content = v.content from page_versions v
    where v.page_id = p.id and v.index = ${HISTORY_VERSIONS} and p.note_id = $1`, [note.id]);
  // the triggers wrote each page's place at the seed's time: backdate it to the page's creation, then move every
  // child under the next chapter 25 days ago (the triggers write that row too; it is backdated the same way)
  await sql.query(`update page_places set since = ${now} - 51 * ${day} where note_id = $1`, [note.id]);
  await sql.query(`update pages c set parent_id = (select n.id from pages n join pages o on o.id = c.parent_id
      where n.note_id = $1 and n.parent_id is null and n.position = o.position % 100 + 1)
    where c.note_id = $1 and c.parent_id is not null`, [note.id]);
  await sql.query(`update page_places set since = ${now} - 25 * ${day} where note_id = $1 and since > ${now} - 25 * ${day}`, [note.id]);
  const [counts] = (await sql.query<{ pages: string; versions: string; places: string }>(`select
      (select count(*) from pages where note_id = $1) as pages, (select count(*) from page_versions where note_id = $1) as versions,
      (select count(*) from page_places where note_id = $1) as places`, [note.id])).rows;
  const expected = `${HISTORY_PAGES}/${HISTORY_PAGES * HISTORY_VERSIONS}/${HISTORY_PAGES + 900}`;
  if (`${counts!.pages}/${counts!.versions}/${counts!.places}` !== expected) {
    throw new Error(`seeding the history: expected pages/versions/places ${expected}, got ${counts!.pages}/${counts!.versions}/${counts!.places}`);
  }
  // Statistics for the planner (PostgreSQL's autovacuum would gather them in time; the embedded database has none,
  // and the server never analyzes these tables). The sample is 3,000 rows (target 10), not 30,000: on the embedded
  // database ANALYZE holds its sample (whole rows, ~1 KB each here) in PGlite's WebAssembly memory, which never
  // shrinks, so the default sample added 50 MB to the server's RSS for the rest of the run, from the benchmark's own
  // setup.
  await sql.query('begin');
  await sql.query('set local default_statistics_target = 10');
  await sql.query('analyze pages, page_versions, page_places');
  await sql.query('commit');
  const at = new Date((await sql.query<{ at: Date | string }>(`select ${now} - 30 * ${day} as at`)).rows[0]!.at).toISOString();
  return { path: `/api/v1/${team}/history/pages`, at, seedSeconds: (performance.now() - started) / 1000 };
}

export type Walk = { milliseconds: number; firstMilliseconds: number; requests: number; pages: number; failures: number };

/** Reads every page of results of `path` (with `query`), one request after the other. */
async function walk(baseUrl: string, token: string, path: string, query: string): Promise<Walk> {
  const started = performance.now();
  let requests = 0;
  let pages = 0;
  let failures = 0;
  let firstMilliseconds = 0;
  for (let page = 1; page <= 1000; page += 1) {
    const response = await fetch(`${baseUrl}${path}?page=${page}${query}`, { headers: { Authorization: `Bearer ${token}` } });
    requests += 1;
    if (page === 1) firstMilliseconds = performance.now() - started;
    if (response.status !== 200) {
      failures += 1;
      await response.arrayBuffer();
      break;
    }
    const body = (await response.json()) as { pages: unknown[]; last_page: boolean };
    pages += body.pages.length;
    if (body.last_page) break;
  }
  return { milliseconds: performance.now() - started, firstMilliseconds, requests, pages, failures };
}

/** Whole walks now and at the moment, alternated, `rounds` times after one of each to warm up: medians. */
export async function timeHistoryWalks(baseUrl: string, token: string, seed: HistorySeed, rounds: number): Promise<{ now: Walk; then: Walk }> {
  const nows: Walk[] = [];
  const thens: Walk[] = [];
  for (let round = -1; round < rounds; round += 1) {
    // a moment not read before in each round (a second apart): the walk pays for reading the tree then once, as a
    // client reading the note at a new moment does (it is kept in memory for the walk's later pages)
    const at = new Date(Date.parse(seed.at) + (round + 1) * 1000).toISOString();
    const now = await walk(baseUrl, token, seed.path, '');
    const then = await walk(baseUrl, token, seed.path, `&at=${encodeURIComponent(at)}`);
    if (round < 0) continue;
    nows.push(now);
    thens.push(then);
  }
  const median = (walks: Walk[]) => [...walks].sort((a, b) => a.milliseconds - b.milliseconds)[walks.length >> 1]!;
  return { now: median(nows), then: median(thens) };
}

export type ExportRun = { seconds: number; bytes: number; rssBeforeMegabytes: number; rssMaxMegabytes: number; status: number; file: string };

/**
 * Exports the seeded note (GET .../export) into `file`, one request, sampling the server's resident memory every
 * 100 ms while the zip streams (`rss`: the server's RSS in MB), so the memory an export of 50,000 versions takes is seen.
 */
export async function timeExport(baseUrl: string, token: string, seed: HistorySeed, file: string, rss: () => number): Promise<ExportRun> {
  const { createWriteStream } = await import('node:fs');
  const { Readable } = await import('node:stream');
  const { pipeline } = await import('node:stream/promises');
  const rssBeforeMegabytes = rss();
  let rssMaxMegabytes = rssBeforeMegabytes;
  const sampler = setInterval(() => (rssMaxMegabytes = Math.max(rssMaxMegabytes, rss())), 100);
  const started = performance.now();
  try {
    const response = await fetch(`${baseUrl}${seed.path.replace(/\/pages$/, '/export')}`, { headers: { Authorization: `Bearer ${token}` } });
    if (response.status !== 200 || !response.body) return { seconds: 0, bytes: 0, rssBeforeMegabytes, rssMaxMegabytes, status: response.status, file };
    let bytes = 0;
    const counted = Readable.fromWeb(response.body as never).on('data', (chunk: Buffer) => (bytes += chunk.length));
    await pipeline(counted, createWriteStream(file));
    return { seconds: (performance.now() - started) / 1000, bytes, rssBeforeMegabytes, rssMaxMegabytes: Math.max(rssMaxMegabytes, rss()), status: 200, file };
  } finally {
    clearInterval(sampler);
  }
}

export type ImportRun = { seconds: number; state: string; error: string | null; versions: number; polls: number; resets: number; slowestPollMs: number };

/**
 * Imports the zip `file` into `team` as a note named `name` (POST .../imports, then GET /api/v1/jobs/{id} until it
 * ends), timed from the upload's start to the job's end (issue 23: under a minute for 1,000 pages x 50 versions).
 */
export async function timeImport(baseUrl: string, token: string, team: string, name: string, file: string, sql: pg.Client): Promise<ImportRun> {
  const { openAsBlob } = await import('node:fs');
  const form = new FormData();
  form.append('name', name);
  form.append('file', await openAsBlob(file, { type: 'application/zip' }), 'note.zip');
  const headers = { Authorization: `Bearer ${token}` };
  const started = performance.now();
  const answer = await fetch(`${baseUrl}/api/v1/teams/${team}/imports`, { method: 'POST', headers, body: form });
  const accepted = (await answer.json()) as { id?: number; detail?: string };
  if (answer.status !== 202 || accepted.id === undefined) return { seconds: 0, state: `answered ${answer.status}`, error: accepted.detail ?? null, versions: 0, polls: 0, resets: 0, slowestPollMs: 0 };
  let polls = 0;
  let resets = 0;
  let slowestPollMs = 0;
  for (;;) {
    // a GET read again when its connection fails, as a client does (an embedded database's long statement holds the
    // server's thread: a kept-alive connection can close under the next request); counted and reported, at most 5
    let job: { state: string; error: { code: string; detail: string } | null };
    const asked = performance.now();
    try {
      polls += 1;
      job = (await (await fetch(`${baseUrl}/api/v1/jobs/${accepted.id}`, { headers })).json()) as typeof job;
    } catch (error) {
      if (!(error instanceof TypeError) || (resets += 1) > 5) throw error;
      continue;
    } finally {
      slowestPollMs = Math.max(slowestPollMs, performance.now() - asked);
    }
    if (job.state === 'done' || job.state === 'failed') {
      const seconds = (performance.now() - started) / 1000;
      const [row] = (await sql.query<{ n: string }>(`select count(*) as n from page_versions v join notes n on n.id = v.note_id
        join teams t on t.id = n.team_id where t.name = $1 and n.slug = $2`, [team, name])).rows;
      return { seconds, state: job.state, error: job.error ? `${job.error.code}: ${job.error.detail}` : null, versions: Number(row!.n), polls, resets, slowestPollMs };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
