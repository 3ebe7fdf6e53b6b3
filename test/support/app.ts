// The service under test: the real app on a real database, listening on a free loopback port.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { buildApp, eventHubOf, listenerOf, liveHostOf } from '../../src/app.ts';
import type { Live } from '../../src/modules/live/live.server.ts';
import type { MemoryPressure } from '../../src/http/memory-pressure.ts';
import { ProjectionWorker } from '../../src/modules/events/projections.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { answerClientErrors } from '../../src/http/client-errors.ts';
import { createLogger } from '../../src/http/logger.ts';
import { openSecondConnection, openTestDatabase } from './database.ts';
import { silentFeed } from '../../src/db/change-feed.ts';
import { STATS_STATEMENT_MARK } from '../../src/modules/search/search.stats.ts';
import { callingTestFile, liveCorpusDir, writeLiveCorpus } from './live-corpus.ts';

export type TestApp = {
  baseUrl: string;
  config: Config;
  database: Database;
  /** The server's change stream (GET /api/v1/events): how many streams are open, and how many the writer process holds. */
  events: { readonly open: number; readonly handedOver: number; readonly writerPid: number | undefined };
  /** A fresh entity manager, for factories and for checking stored state. */
  em(): EntityManager;
  /** Counts the SQL queries run while `action` runs (only when started with `countQueries`). */
  countQueries(action: () => Promise<unknown>): Promise<number>;
  /** The rate limit's lease statements run so far (not in countQueries; only when started with `countQueries`). */
  rateLimitLeases(): number;
  /** The live editor of this app, once anyone connected to it (src/modules/live). */
  live(): Live | undefined;
  close(): Promise<void>;
  /** Projects every committed change (the search index, the webhooks' outbox), as the server's worker does after each write. */
  settle(): Promise<void>;
};

export async function startTestApp(
  env: Record<string, string> = {},
  options: {
    countQueries?: boolean;
    /** build the app as if its change feed were down */
    feedDown?: boolean;
    /** a second server on the database of this one, as another process would be (its own connections and memory) */
    beside?: TestApp;
    /** the heap's watch the app refuses work by (default: V8's readings of this process) */
    pressure?: MemoryPressure;
    /** where the app's log lines go (default stdout, at LOG_LEVEL: silent unless TEST_LOG_LEVEL says otherwise) */
    logTo?: { write(line: string): void };
  } = {},
): Promise<TestApp> {
  let queries = 0;
  let rateLimitLeases = 0;
  const database = options.beside
    ? await openSecondConnection(options.beside.database)
    // the rate limit's lease (src/http/rate-limit.ts: one statement per up to 50 requests of a token) is not counted:
    // where it falls depends on how many requests the token made before, not on the operation measured; nor is the
    // search's read of the token statistics (src/modules/search/search.stats.ts: once a minute, in the background)
    : await openTestDatabase(options.countQueries ? (sql) => {
      if (sql.includes('into rate_limits')) rateLimitLeases += 1;
      else if (sql.includes(STATS_STATEMENT_MARK)) return;
      else queries += 1;
    } : undefined);
  // the tests' HTTP client shares this process's event loop with the server, and the embedded database runs its
  // statements on that loop too: a long one (a whole reindex) held the loop past the server's 5 s keep-alive
  // timeout, and when it let go, the client's next request went out on the idle connection in the same turn the
  // server's timer closed it (ECONNRESET, a fresh clone's CI on 2026-11-29). Across processes the client's own idle
  // timeout (the server's hint less a margin) comes first; here the server waits longer than any test stays idle.
  const server: Server = createServer({ keepAliveTimeout: 120_000 });
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  // a DATA_DIR of its own (attachment bytes live there), gone with the app, unless the test names one
  const dataDir = env.DATA_DIR ? undefined : mkdtempSync(path.join(tmpdir(), 'notes-test-data-'));
  const config = loadConfig({
    NODE_ENV: 'test', PUBLIC_URL: baseUrl, PORT: String(port), LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...(dataDir ? { DATA_DIR: dataDir } : {}),
    ...env,
  });
  const logger = createLogger(config.logLevel, {}, options.logTo);
  // the projections of the change log run when a test asks (settle), not on their own: what a test counts or
  // checks never depends on when a worker happened to run
  const projections = new ProjectionWorker(database.orm.em.fork(), logger);
  const app = buildApp({ config, orm: database.orm, logger, changes: options.feedDown ? silentFeed() : database.changes, embedded: database.kind === 'embedded', pressure: options.pressure });
  server.on('request', listenerOf(app));
  liveHostOf(app).attach(server);
  // the live editor's corpus (support/live-corpus.ts): off unless LIVE_CORPUS_DIR is set; a second app on the same
  // database leaves it to the first
  const corpusDir = options.beside ? undefined : liveCorpusDir();
  const corpusFrom = corpusDir ? callingTestFile() : '';
  return {
    baseUrl,
    config,
    database,
    events: eventHubOf(app),
    em: () => database.orm.em.fork(),
    rateLimitLeases: () => rateLimitLeases,
    settle: () => projections.settle(),
    async countQueries(action) {
      if (!options.countQueries) throw new Error('start the app with { countQueries: true }');
      const before = queries;
      await action();
      return queries - before;
    },
    live: () => liveHostOf(app).loaded(),
    async close() {
      await liveHostOf(app).close();
      await eventHubOf(app).close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (corpusDir) {
        // a test's own failure to close is not the corpus's to hide, nor the corpus's to cause: said, and passed over
        await writeLiveCorpus(database, corpusDir, corpusFrom).catch((error: unknown) => {
          process.stderr.write(`live corpus: the page contents of ${corpusFrom} were not collected: ${error instanceof Error ? error.message : String(error)}\n`);
        });
      }
      await database.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
