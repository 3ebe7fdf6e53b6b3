// Starts the service: migrate, listen, create the first user on a fresh database, and shut down gracefully.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp, eventHubOf, listenerOf, liveHostOf } from './app.ts';
import { pruneChangeLog } from './modules/events/retention.ts';
import { ConfigError, loadConfig } from './config.ts';
import { moveAttachmentBlobs } from './modules/attachments/blob-move.ts';
import { ATTACHMENT_SWEEP_INTERVAL_MS, sweepAttachmentBytes } from './modules/attachments/sweep.ts';
import { DatabaseInUseError, describeDatabaseUrl, migrate, openDatabase } from './db/database.ts';
import { answerClientErrors } from './http/client-errors.ts';
import { createLogger } from './http/logger.ts';
import { memoryFacts, memoryProblem } from './http/memory-check.ts';
import { MemoryPressure } from './http/memory-pressure.ts';
import { ensureFirstUser } from './modules/users/bootstrap.ts';
import { pruneRevisions, REVISION_PRUNE_INTERVAL_MS } from './db/revisions.ts';
import { pruneRateLimits } from './db/rate-limits.repository.ts';
import { readiness } from './modules/system/system.routes.ts';
import { reindexIfEmpty } from './modules/search/search.indexer.ts';
import { WebhookWorker } from './modules/webhooks/webhooks.worker.ts';
import { ProjectionWorker } from './modules/events/projections.ts';
import { failAbandonedJobs } from './modules/imports/jobs.repository.ts';
import { STALE_SECONDS } from './modules/imports/jobs.ts';

const SHUTDOWN_GRACE_MS = 10_000;

/** The server could not listen on HOST:PORT (port taken, not allowed, address not on this machine). */
class ListenError extends Error {}

function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ListenError(`port ${port} is already in use on ${host}; set PORT to a free port`);
    case 'EACCES':
      return new ListenError(`not allowed to listen on ${host}:${port} (ports below 1024 need privileges); set PORT`);
    case 'EADDRNOTAVAIL':
      return new ListenError(`${host} is not an address of this machine; set HOST`);
    default:
      return error;
  }
}

// express 5's app.listen(port, host, callback) also calls the callback with the error when listening fails, so a
// callback that resolves would report "listening" on a port that is taken: listen on the 'listening' and 'error'
// events of a plain http.Server instead.
function listen(app: RequestListener, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(app);
    answerClientErrors(server);
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(listenFailure(error, host, port));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(server);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

async function main(): Promise<void> {
  const config = loadConfig();
  const memory = memoryFacts(config.heapLimitMb, config.databaseUrl === undefined);
  const memoryTrouble = memoryProblem(memory);
  if (memoryTrouble) throw new ConfigError(memoryTrouble);
  const logger = createLogger(config.logLevel, { service: 'notes' });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, listen: true });
  const prune = () =>
    Promise.all([
      pruneRevisions(database.orm.em.fork()),
      pruneRateLimits(database.orm.em.fork()),
      pruneChangeLog(database.orm.em.fork(), config.events.retentionDays),
    ]).catch((error: unknown) =>
      logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'pruning revisions, rate limits or the change log failed'));
  const sweep = () =>
    sweepAttachmentBytes(database.orm.em.fork(), config).catch((error: unknown) =>
      logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'sweeping attachment bytes failed'));
  let server: Server;
  let app: ReturnType<typeof buildApp>;
  let projections: ProjectionWorker | undefined;
  let firstToken: string | undefined;
  try {
    const applied = await migrate(database.orm);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    // imports a process that stopped left unfinished are failed (`interrupted`), so their users see why
    await failAbandonedJobs(database.orm.em.fork(), { all: config.databaseUrl === undefined, staleSeconds: STALE_SECONDS });
    const movedBlobs = await moveAttachmentBlobs(database.orm.em.fork(), config);
    if (movedBlobs > 0) logger.info({ attachments: movedBlobs }, 'attachment bytes moved out of the database');
    // a database from before the search index (migration 0008) gets its index built once, here
    const reindexed = await reindexIfEmpty(database.orm.em.fork());
    if (reindexed) logger.info({ documents: reindexed.documents, milliseconds: Math.round(reindexed.milliseconds) }, 'search index built');
    // what follows from each change after it commits (the search index, the webhooks' outbox), from the change log;
    // started after the migrations, it first catches up with whatever was committed and not yet projected
    projections = config.projectionWorker ? new ProjectionWorker(database.orm.em.fork(), logger) : undefined;
    // the heap runs out at the old generation's ceiling, HEAP_LIMIT_MB (the start check saw the process has it)
    const pressure = new MemoryPressure(undefined, config.heapLimitMb * 1024 * 1024).start();
    app = buildApp({ config, orm: database.orm, logger, changes: database.changes, projections, embedded: database.kind === 'embedded', pressure });
    // Listen before creating the first user, so a port that is taken fails before the token is made (it is shown once).
    server = await listen(listenerOf(app), config.host, config.port);
    liveHostOf(app).attach(server);
    firstToken = await ensureFirstUser(database.orm.em.fork(), config.adminUsername);
    await prune();
    void sweep();
  } catch (error) {
    await database.close();
    throw error;
  }
  // webhook deliveries from the outbox (WEBHOOK_WORKER=false leaves them to other processes)
  const webhooks = new WebhookWorker(database.orm, config.webhooks, logger);
  if (config.webhooks.worker) webhooks.start();
  projections?.start();
  setInterval(prune, REVISION_PRUNE_INTERVAL_MS).unref();
  setInterval(sweep, ATTACHMENT_SWEEP_INTERVAL_MS).unref();
  const where = database.kind === 'postgres' ? `PostgreSQL at ${describeDatabaseUrl(config.databaseUrl!)}` : `embedded PGlite in ${config.dataDir}`;
  const lines = [
    `Notes API listening on ${config.host}:${(server.address() as AddressInfo).port}, database: ${where}`,
    `  base URL: ${config.publicUrl}/api/v1`,
    `  API docs: ${config.publicUrl}/docs`,
    `  memory: heap ceiling ${Math.round(memory.heapCeilingBytes / 1024 / 1024)} MiB (HEAP_LIMIT_MB=${config.heapLimitMb}), ${Math.round(memory.machineBytes / 1024 / 1024)} MiB on this machine`,
  ];
  if (firstToken) {
    lines.push(
      `  first user "${config.adminUsername}" created; a write token for it (shown once, keep it):`,
      `    ${firstToken}`,
      `  try: curl -H "Authorization: Bearer ${firstToken}" ${config.publicUrl}/api/v1/me`,
    );
  } else {
    lines.push(`  make a token: npm run admin -- create-token ${config.adminUsername}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    readiness.shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    // no new webhook round starts; the attempts under way finish (each bounded by WEBHOOK_TIMEOUT_MS)
    const workerStopped = webhooks.stop();
    // open change streams end now (server.close waits for every connection): their clients resume with Last-Event-ID
    const streamsEnded = eventHubOf(app).close();
    // live documents are saved now, and their sockets closed (they reconnect to another process or after restart)
    const liveClosed = liveHostOf(app).close();
    const force = setTimeout(() => {
      logger.warn('requests still running after the grace period; closing them');
      server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    server.close(async () => {
      await workerStopped;
      await streamsEnded;
      await liveClosed;
      await projections?.stop();
      await database.close();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError ? `configuration error: ${error.message}`
    : error instanceof DatabaseInUseError || error instanceof ListenError ? error.message
    : error instanceof Error ? error.stack ?? error.message
    : String(error);
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
