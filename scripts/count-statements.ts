// SQL statements per request, for every built operation (`make statements`, or `node scripts/count-statements.ts`).
// The app runs in this process on an in-memory PGlite with query counting (test/support/app.ts); a small scenario is
// seeded (a manager, a member, a team, a note with a few pages and versions, a page comment), then each operation
// gets one typical successful request, sent twice: once to warm up (caches, lazy set-up), once counted. Updates and
// creates run before deletes, which remove throw-away objects. Prints `operationId  METHOD path  status  statements`.
//
// The operations come from generated/openapi.json, less those served by plain routes; an operation with no sample
// below, or a sample for an operation the document lacks, is an error (exit 1), as is any request that fails.
//
// Then the cases of one operation whose cost depends on its input (WRITE_CASES below: updatePage with
// page[base_version], issue 19), each on pages of its own made for it, warmed up and counted the same way; a case
// that answers other than its expected status is an error too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { operations } from '../src/http/operations.ts';
import { startTestApp } from '../test/support/app.ts';
import { NOTE, remember, SAMPLES, seedSampleWorld, sendSample, type Form, type Sample } from '../test/support/samples.ts';

const ROOT = path.resolve(import.meta.dirname, '..');


// The operations to count: every operationId of the document (each is built), less those plain routes serve
// outside /api/v1 (the OAuth endpoints).
const servedByRoutes = Object.entries(operations).filter(([, entry]) => 'servedBy' in entry).map(([id]) => id);
const document = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
};
const described = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation?.operationId).filter((id): id is string => typeof id === 'string'));
const built = described.filter((id) => !servedByRoutes.includes(id));
const sampled = SAMPLES.map(([id]) => id);
const missing = built.filter((id) => !sampled.includes(id));
const stale = sampled.filter((id) => !built.includes(id));
const repeated = sampled.filter((id, index) => sampled.indexOf(id) !== index);
if (missing.length || stale.length || repeated.length) {
  if (missing.length) console.error(`count-statements: built operations with no sample request: ${missing.join(', ')}`);
  if (stale.length) console.error(`count-statements: samples for operations that are not built (or not in the document): ${stale.join(', ')}`);
  if (repeated.length) console.error(`count-statements: operations sampled twice: ${repeated.join(', ')}`);
  process.exit(1);
}

// A write case: a page of three paragraphs, `since` writes after its first version (each changing the last
// paragraph; `overlapping`: the last of them the first paragraph too), then the counted write of the first paragraph.
type WriteCase = { label: string; since: number; overlapping?: boolean; form: (current: number) => Form; query?: string; status: number };
const paragraphs = (first: string, last: string) => `<p>${first}</p><p>The middle paragraph.</p><p>${last}</p>`;
const WRITE_CASES: WriteCase[] = [
  { label: 'updatePage, base current', since: 2, form: (current) => ({ 'page[content]': paragraphs('First, based.', 'Last 2.'), 'page[base_version]': current }), status: 200 },
  ...[1, 10].map((since) => ({
    label: `updatePage, base ${since} behind, merged`, since, form: () => ({ 'page[content]': paragraphs('First, merged.', 'Last.'), 'page[base_version]': 1 }), status: 200,
  })),
  { label: 'updatePage, base 1 behind, edit_conflict', since: 1, overlapping: true, form: () => ({ 'page[content]': paragraphs('First, here.', 'Last.'), 'page[base_version]': 1 }), status: 409 },
  { label: 'updatePage, base 2 behind, on_conflict=fail', since: 2, query: '?on_conflict=fail', form: () => ({ 'page[content]': paragraphs('First, failed.', 'Last.'), 'page[base_version]': 1 }), status: 409 },
  { label: 'updatePage, base 2 behind, on_conflict=overwrite', since: 2, query: '?on_conflict=overwrite', form: () => ({ 'page[content]': paragraphs('First, won.', 'Last.'), 'page[base_version]': 1 }), status: 200 },
];

const app = await startTestApp({}, { countQueries: true });
try {
  const { manager, state } = await seedSampleWorld(app);
  const call = async (token: string, sample: Sample) => {
    const answer = await sendSample(app.baseUrl, token, sample);
    if (answer.status >= 300) throw new Error(`${sample.method} ${sample.path}: ${answer.status} ${answer.text.slice(0, 400)}`);
    return answer;
  };
  // the token's last_used_at is written at most once a minute: this first request takes that write
  await call(manager.token, { method: 'GET', path: '/api/v1/me' });

  const rows: string[][] = [];
  for (const [operationId, sample] of SAMPLES) {
    let status = 0;
    let statements = 0;
    for (const n of [0, 1]) {
      const request = sample(state, n);
      let body: Record<string, unknown> = {};
      const count = await app.countQueries(async () => {
        ({ status, body } = await call(manager.token, request));
        await new Promise((resolve) => setTimeout(resolve, 20)); // anything the request still runs after answering
      });
      remember(operationId, state, body);
      if (n === 1) {
        statements = count;
        rows.push([operationId, request.method, request.path, String(status), String(statements)]);
      }
    }
  }
  const caseRows: string[][] = [];
  for (const writeCase of WRITE_CASES) {
    let row: string[] = [];
    for (const n of [0, 1]) {
      const made = await call(manager.token, { method: 'POST', path: `${NOTE}/pages`, form: { 'page[title]': `${writeCase.label} ${n}`, 'page[content]': paragraphs('First.', 'Last.') } });
      const pagePath = `${NOTE}/${made.body.id as number}`;
      for (let since = 1; since <= writeCase.since; since += 1) {
        const first = writeCase.overlapping && since === writeCase.since ? 'First, meanwhile.' : 'First.';
        await call(manager.token, { method: 'PUT', path: pagePath, form: { 'page[content]': paragraphs(first, `Last ${since}.`) } });
      }
      await call(manager.token, { method: 'GET', path: '/api/v1/me' }); // the token's last use, outside the count
      const request = { method: 'PUT', path: pagePath + (writeCase.query ?? ''), form: writeCase.form(writeCase.since + 1) };
      let status = 0;
      const count = await app.countQueries(async () => {
        ({ status } = await sendSample(app.baseUrl, manager.token, request));
        await new Promise((resolve) => setTimeout(resolve, 20));
      });
      if (status !== writeCase.status) throw new Error(`${writeCase.label}: PUT ${request.path} answered ${status}, not ${writeCase.status}`);
      row = [writeCase.label, request.method, request.path, String(status), String(count)];
    }
    caseRows.push(row);
  }
  const header = ['operationId', 'METHOD', 'path', 'status', 'statements'];
  const widths = header.map((title, column) => Math.max(title.length, ...[...rows, ...caseRows].map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === cells.length - 1 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  const total = rows.reduce((sum, row) => sum + Number(row[4]), 0);
  console.log(`${rows.length} operations, ${total} statements in all (in-memory PGlite, second request of each, after a warm-up)`);
  // the rate limit's leases (src/http/rate-limit.ts) are left out of the rows above: where one falls depends on the
  // token's earlier requests; with the default budget a token pays one per 50 requests
  console.log(`plus ${app.rateLimitLeases()} rate-limit lease statements over the whole run (${rows.length * 2} counted requests and the set-up's)`);
  console.log('\nwrites with page[base_version] (merge-on-write), each on a page of its own after `since` writes:');
  for (const row of caseRows) console.log(line(row));
} catch (error) {
  console.error(`count-statements: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await app.close();
}
