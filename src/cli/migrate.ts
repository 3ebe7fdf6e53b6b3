// `npm run migrate`: applies pending migrations to DATABASE_URL or the embedded database, then exits.
import { loadConfig } from '../config.ts';
import { migrate, openDatabase } from '../db/database.ts';
import { moveAttachmentBlobs } from '../modules/attachments/blob-move.ts';

const config = loadConfig();
const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, shareRunningServer: true });
try {
  const applied = await migrate(database.orm);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'the database is up to date\n');
  // what SQL cannot do: attachment bytes still in the database go to the attachment storage (blob-move.ts)
  const moved = await moveAttachmentBlobs(database.orm.em.fork(), config);
  if (moved > 0) process.stdout.write(`moved the bytes of ${moved} attachment(s) out of the database\n`);
} finally {
  await database.close();
}
