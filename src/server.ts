// Starts the service: migrate, create the first user on a fresh database, listen, and shut down gracefully.
import type { Server } from 'node:http';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DatabaseInUseError, migrate, openDatabase } from './db/database.ts';
import { createLogger } from './http/logger.ts';
import { ensureFirstUser } from './modules/users/bootstrap.ts';
import { pruneRevisions, REVISION_PRUNE_INTERVAL_MS } from './db/revisions.ts';
import { readiness } from './modules/system/system.routes.ts';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { service: 'notes' });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const applied = await migrate(database.orm);
  if (applied.length > 0) logger.info('migrations applied', { migrations: applied });
  const firstToken = await ensureFirstUser(database.orm.em.fork(), config.adminUsername);

  const app = buildApp({ config, orm: database.orm, logger });
  const prune = () =>
    pruneRevisions(database.orm.em.fork()).catch((error: unknown) =>
      logger.warn('pruning revisions failed', { error: error instanceof Error ? error.message : String(error) }));
  await prune();
  setInterval(prune, REVISION_PRUNE_INTERVAL_MS).unref();
  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(config.port, config.host, () => resolve(listening));
    listening.once('error', reject);
  });
  const where = database.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  const lines = [
    `Notes API listening on ${config.host}:${config.port}, database: ${where}`,
    `  base URL: ${config.publicUrl}/api/v1`,
    `  API docs: ${config.publicUrl}/docs`,
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
    logger.info('shutting down', { signal });
    const force = setTimeout(() => {
      logger.warn('requests still running after the grace period; closing them');
      server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    server.close(async () => {
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
    : error instanceof DatabaseInUseError ? error.message
    : error instanceof Error ? error.stack ?? error.message
    : String(error);
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
