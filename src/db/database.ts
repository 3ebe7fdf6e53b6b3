// Opening the database: a PostgreSQL server through DATABASE_URL, or the embedded PGlite served in-process over a
// Unix socket in DATA_DIR (so the admin command line can reach the same database while the server runs).
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { DefaultLogger, type LogContext } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM } from '@mikro-orm/postgresql';
import { entities } from './entities.ts';
import { PGliteStream } from './pglite-stream.ts';
import { NotesPostgreSqlDriver } from './postgresql-driver.ts';
import { pgliteChangeFeed, postgresChangeFeed, silentFeed, type ChangeFeed } from './change-feed.ts';
import { migrationsList, renameAppliedMigrations } from './migrations.ts';

export type Orm = MikroORM;

/** The embedded database is already served by a running server (PGlite allows one process). */
export class DatabaseInUseError extends Error {}

/** Asked to open an existing embedded database (`mustExist`) where DATA_DIR holds none. */
export class NoDatabaseError extends Error {}

export type Database = {
  orm: Orm;
  kind: 'embedded' | 'embedded-shared' | 'postgres';
  /** Embedded: the directory of the socket through which another process (the admin CLI) reaches this database, as
   * its DATA_DIR; for an in-memory database (tests) a directory of its own. */
  socketDir?: string;
  /** What the database announces as it changes (silent unless opened with `listen`, or for the admin CLI). */
  changes: ChangeFeed;
  close(): Promise<void>;
};

/**
 * Which connections a statement runs on: `write`, the pool every request uses; `read`, the change stream's own (the
 * loop that serves every open stream of the process, event-hub.ts). They are MikroORM's read replica pointed at the
 * same database, and nothing else reads from them (`preferReadReplicas` off): under a write load the pool is busy,
 * and a stream's statements waited behind 20-50 writers' for each of its readings (docs/speed.md). On PostgreSQL,
 * two connections of their own; embedded, one more in-process stream to PGlite's one session, which takes the
 * session only between transactions of the other (pglite-stream.ts), so it waits for at most the exchange under way,
 * not for the whole queue of the requests' pool.
 */
export type ConnectionType = 'read' | 'write';
export const STREAM_CONNECTION: ConnectionType = 'read';
const STREAM_POOL = { min: 0, max: 2 };
const EMBEDDED_STREAM_POOL = { min: 0, max: 1 };

// PGlite is one session: a single pooled connection keeps transactions from interleaving.
const EMBEDDED_POOL = { min: 1, max: 1 };
const SOCKET_PORT = 5432;

// PGlite's own settings, plus a smaller buffer cache: PostgreSQL's default 128 MB of shared buffers lives inside the
// WebAssembly memory and stays resident once touched; the embedded database is small and the OS caches its files.
const pgliteDefaults = (PGlite as unknown as { defaultStartParams?: string[] }).defaultStartParams;
if (!pgliteDefaults) throw new Error('PGlite no longer exposes defaultStartParams: see EMBEDDED_OPTIONS in src/db/database.ts');
const EMBEDDED_OPTIONS = {
  startParams: [
    ...pgliteDefaults,
    '-c', 'shared_buffers=32MB', '-c', 'maintenance_work_mem=16MB',
  ],
};

export function embeddedSocketPath(dataDir: string): string {
  return path.join(dataDir, `.s.PGSQL.${SOCKET_PORT}`);
}

/** Where PGlite keeps the embedded database's files; PG_VERSION inside it is written when the database is created. */
export function embeddedDataPath(dataDir: string): string {
  return path.join(dataDir, 'pgdata');
}

export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(path.join(embeddedDataPath(dataDir), 'PG_VERSION'));
}

/** A PostgreSQL URL as `host:port/database`, for messages: never the user name or the password. */
export function describeDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const host = decodeURIComponent(url.hostname) || url.searchParams.get('host') || 'localhost';
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default database)';
    return `${host}:${url.port || '5432'}/${database}`;
  } catch {
    return '(DATABASE_URL, not a URL)';
  }
}

/** Called with the SQL of every query the ORM runs (tests count them to show lists cost a fixed number). */
export type QueryObserver = (sql: string) => void;

async function initOrm(connection: Record<string, unknown>, options: Pick<OpenOptions, 'debug' | 'onQuery'>): Promise<Orm> {
  const onQuery = options.onQuery;
  return MikroORM.init({
    driver: NotesPostgreSqlDriver,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList: migrationsList(), transactional: true, allOrNothing: true, silent: true, snapshot: false },
    allowGlobalContext: false,
    debug: onQuery ? ['query'] : (options.debug ?? false),
    ...(onQuery
      ? {
          loggerFactory: (loggerOptions: ConstructorParameters<typeof DefaultLogger>[0]) =>
            new (class extends DefaultLogger {
              override logQuery(context: LogContext & { query: string }): void {
                onQuery(context.query);
              }
            })({ ...loggerOptions, writer: () => undefined }),
        }
      : {}),
    ...connection,
  });
}

/** True when something answers on the embedded database's socket, i.e. a server is running on this DATA_DIR. */
export function socketIsLive(socketPath: string): Promise<boolean> {
  if (!existsSync(socketPath)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

export type OpenOptions = {
  databaseUrl?: string | undefined;
  /** Embedded data directory; undefined with no databaseUrl means an in-memory database (tests). */
  dataDir?: string | undefined;
  /** When a server already serves this DATA_DIR: connect to it (admin CLI) instead of failing (server). */
  shareRunningServer?: boolean;
  /** Open only an embedded database that already exists in DATA_DIR (admin CLI): NoDatabaseError, creating nothing. */
  mustExist?: boolean;
  debug?: boolean;
  onQuery?: QueryObserver;
  /** Listen to the database's change announcements (the server does; tools need not). */
  listen?: boolean;
};

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) {
    const orm = await initOrm({
      clientUrl: options.databaseUrl,
      pool: { min: 0, max: 10 },
      replicas: [{ name: 'stream', pool: STREAM_POOL }],
      preferReadReplicas: false,
    }, options);
    const changes = options.listen ? postgresChangeFeed(options.databaseUrl) : silentFeed();
    return {
      orm,
      kind: 'postgres',
      changes,
      async close() {
        await changes.close();
        await orm.close(true);
      },
    };
  }
  let socketDir: string;
  let pglite: PGlite;
  if (options.dataDir) {
    socketDir = options.dataDir;
    const socketPath = embeddedSocketPath(socketDir);
    if (socketPath.length > 100) {
      throw new Error(`DATA_DIR is too long for a Unix socket path (${socketPath}); choose a shorter DATA_DIR`);
    }
    // a server that answers on the socket has the database open (an in-memory one too, as the tests' servers have)
    if (await socketIsLive(socketPath)) {
      if (!options.shareRunningServer) {
        throw new DatabaseInUseError(`another server is already running on ${options.dataDir} (socket ${socketPath})`);
      }
      const orm = await initOrm({ host: socketDir, port: SOCKET_PORT, user: 'postgres', dbName: 'postgres', pool: EMBEDDED_POOL }, options);
      return { orm, kind: 'embedded-shared', changes: silentFeed(), close: () => orm.close(true) };
    }
    if (options.mustExist && !embeddedDatabaseExists(options.dataDir)) {
      throw new NoDatabaseError(`no database in ${options.dataDir}`);
    }
    mkdirSync(options.dataDir, { recursive: true });
    rmSync(socketPath, { force: true }); // left behind by a server that did not stop cleanly
    const pgdata = embeddedDataPath(options.dataDir);
    const fresh = !existsSync(path.join(pgdata, 'PG_VERSION'));
    pglite = await PGlite.create(pgdata, EMBEDDED_OPTIONS);
    if (fresh) {
      // creating the database (initdb, inside WebAssembly) leaves memory behind that a reopened one does not hold
      await pglite.close();
      pglite = await PGlite.create(pgdata, EMBEDDED_OPTIONS);
    }
  } else {
    const { mkdtempSync } = await import('node:fs');
    const os = await import('node:os');
    socketDir = mkdtempSync(path.join(os.tmpdir(), 'notes-db-'));
    pglite = await PGlite.create(EMBEDDED_OPTIONS);
  }
  // installed before anyone else talks to PGlite, so every announcement is heard
  const changes = options.listen ? await pgliteChangeFeed(pglite) : silentFeed();
  const socketServer = new PGLiteSocketServer({ db: pglite, path: embeddedSocketPath(socketDir), maxConnections: 8 });
  await socketServer.start();
  let orm: Orm;
  try {
    // the server's own connection talks to PGlite in-process (pglite-stream.ts); the socket serves the admin CLI
    const driverOptions = { stream: () => new PGliteStream(pglite) };
    orm = await initOrm(
      {
        host: socketDir, port: SOCKET_PORT, user: 'postgres', dbName: 'postgres', pool: EMBEDDED_POOL, driverOptions,
        replicas: [{ name: 'stream', pool: EMBEDDED_STREAM_POOL, driverOptions }],
        preferReadReplicas: false,
      },
      options,
    );
  } catch (error) {
    await socketServer.stop();
    await pglite.close();
    throw error;
  }
  return {
    orm,
    kind: 'embedded',
    changes,
    socketDir,
    async close() {
      await orm.close(true);
      await socketServer.stop();
      await pglite.close();
      rmSync(embeddedSocketPath(socketDir), { force: true });
      if (!options.dataDir) rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

export async function migrate(orm: Orm): Promise<string[]> {
  await renameAppliedMigrations((sql, parameters) => orm.em.fork().execute(sql, parameters));
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}
