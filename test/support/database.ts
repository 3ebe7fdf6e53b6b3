// One database per test file: an in-memory PGlite (TEST_DATABASE=pglite, the default), or a fresh database on the
// PostgreSQL server that scripts/run-tests.sh started (TEST_DATABASE=postgres, TEST_DATABASE_URL=server URL).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, openDatabase, type Database, type QueryObserver } from '../../src/db/database.ts';

export const databaseKind = process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'pglite';

/** A database of its own for a test that runs the service as a separate process: a PostgreSQL URL, or undefined on the
 * PGlite pass (where the process uses a DATA_DIR of its own instead). */
export async function createScratchDatabaseUrl(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  if (databaseKind === 'pglite') return undefined;
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE=postgres needs TEST_DATABASE_URL (scripts/run-tests.sh sets it)');
  const name = `notes_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

/** A second connection to a test database, as another server process would open it (its own pool and change feed). */
export async function openSecondConnection(first: Database): Promise<Database & { shared: boolean }> {
  const url = (first as TestDatabase).url;
  // the embedded database is one session in one process: a second app shares it
  if (!url) return { ...first, shared: true, close: async () => undefined };
  return { ...(await openDatabase({ databaseUrl: url, listen: true })), shared: false };
}

/** A test database; on the PostgreSQL pass with the URL it lives at. */
export type TestDatabase = Database & { url?: string };

export async function openTestDatabase(onQuery?: QueryObserver): Promise<TestDatabase> {
  if (databaseKind === 'pglite') {
    const database = await openDatabase({ listen: true, ...(onQuery ? { onQuery } : {}) });
    await migrate(database.orm);
    return database;
  }
  const scratch = await createScratchDatabaseUrl();
  const database = await openDatabase({ databaseUrl: scratch!.url, listen: true, ...(onQuery ? { onQuery } : {}) });
  await migrate(database.orm);
  return {
    ...database,
    url: scratch!.url,
    async close() {
      await database.close();
      await scratch!.drop();
    },
  };
}
