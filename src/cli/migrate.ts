// `npm run migrate`: applies pending migrations to DATABASE_URL or the embedded database, then exits.
import { loadConfig } from '../config.ts';
import { migrate, openDatabase } from '../db/database.ts';

const config = loadConfig();
const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, shareRunningServer: true });
try {
  const applied = await migrate(database.orm);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'the database is up to date\n');
} finally {
  await database.close();
}
