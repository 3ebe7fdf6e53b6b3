import { configDefaults, defineConfig } from 'vitest/config';

// Run through scripts/run-tests.sh (`make test`): it runs every file twice, once
// against PGlite (TEST_DATABASE=pglite) and once against a throw-away PostgreSQL
// server (TEST_DATABASE=postgres, TEST_DATABASE_URL=...).
//
// `*.corpus.test.ts` (the live editor's schema over every page the tests stored) reads what a whole pass wrote: the
// passes leave it out, and the script runs it alone after the PGlite pass, with LIVE_CORPUS_FROM set.
const CORPUS = 'test/**/*.corpus.test.ts';
const corpusRun = Boolean(process.env.LIVE_CORPUS_FROM);

export default defineConfig({
  test: {
    include: corpusRun ? [CORPUS] : ['test/**/*.test.ts'],
    exclude: corpusRun ? configDefaults.exclude : [...configDefaults.exclude, CORPUS],
    environment: 'node',
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
