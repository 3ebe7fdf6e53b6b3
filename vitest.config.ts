import { defineConfig } from 'vitest/config';

// Run through scripts/run-tests.sh (`make test`): it runs every file twice, once
// against PGlite (TEST_DATABASE=pglite) and once against a throw-away PostgreSQL
// server (TEST_DATABASE=postgres, TEST_DATABASE_URL=...).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
