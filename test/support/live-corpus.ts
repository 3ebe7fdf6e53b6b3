// The live editor's corpus: every page content the tests store, collected so that one test
// (test/live/round-trip.corpus.test.ts) can try each in the editor's schema. Only when LIVE_CORPUS_DIR names a
// directory (scripts/run-tests.sh sets it for the PGlite pass): each test app, as it closes, writes the distinct
// contents of its database there, one JSON object a line ({ from, content }), in a file of its own.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from '../../src/db/database.ts';

/** One line of a corpus file: a content, and the test file whose database held it. */
export type CorpusEntry = { from: string; content: string };

// where pages keep content: the pages, their versions, the versions of deleted pages, and pages an import brought in
// for a request (each only where the database has it: a migration test's database may be older)
const SOURCES = [
  { table: 'pages', column: 'content' },
  { table: 'page_versions', column: 'content' },
  { table: 'deleted_page_versions', column: 'content' },
  { table: 'request_pages', column: 'imported_content' },
];

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The directory to write the corpus in, or undefined (the default: nothing is collected). */
export function liveCorpusDir(): string | undefined {
  return process.env.LIVE_CORPUS_DIR || undefined;
}

/** The test file that is starting an app (from the stack), for the corpus to say where a content came from. */
export function callingTestFile(): string {
  for (const line of (new Error().stack ?? '').split('\n')) {
    const match = /(\/[^\s():]*\/test\/[^\s():]*\.test\.ts)/.exec(line);
    if (match) return path.relative(ROOT, match[1]!);
  }
  return 'unknown';
}

let written = 0;

/** Writes the distinct page contents of `database` into a new file of `dir`; how many it wrote. */
export async function writeLiveCorpus(database: Database, dir: string, from: string): Promise<number> {
  const em = database.orm.em.fork();
  const present = await em.execute<{ table_name: string; column_name: string }[]>(
    `select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and table_name in (${SOURCES.map(() => '?').join(', ')})`,
    SOURCES.map((source) => source.table),
  );
  const here = SOURCES.filter((source) => present.some((row) => row.table_name === source.table && row.column_name === source.column));
  if (here.length === 0) return 0;
  const rows = await em.execute<{ content: string }[]>(
    here.map((source) => `select ${source.column} as content from ${source.table} where ${source.column} is not null`).join(' union '),
  );
  if (rows.length === 0) return 0;
  written += 1;
  const name = `${from.replace(/[^A-Za-z0-9.-]+/g, '_')}.${process.pid}.${written}.${randomBytes(4).toString('hex')}.jsonl`;
  writeFileSync(path.join(dir, name), rows.map((row) => JSON.stringify({ from, content: row.content } satisfies CorpusEntry)).join('\n') + '\n');
  return rows.length;
}
