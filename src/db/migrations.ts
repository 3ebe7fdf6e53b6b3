// The migrations are plain SQL files in ./migrations, applied in file-name order by MikroORM's migrator (which
// records them in its own table), so the embedded database and a PostgreSQL server get exactly the same schema.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Migration } from '@mikro-orm/migrations';

const folder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

function sqlMigration(sql: string) {
  return class extends Migration {
    override async up(): Promise<void> {
      this.addSql(sql);
    }
  };
}

/**
 * Migrations that were once known by another name (two were numbered 0005): a database that applied one under its
 * old name has the record renamed before the migrator looks, so the file is not applied twice.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = { '0005-request-merges': '0006-request-merges' };

/** Renames the migrator's records of migrations applied under an old name (nothing on a database without them). */
export async function renameAppliedMigrations(execute: (sql: string, parameters: unknown[]) => Promise<unknown>): Promise<void> {
  const [table] = (await execute("select to_regclass('mikro_orm_migrations') is not null as present", [])) as { present: boolean }[];
  if (!table?.present) return;
  for (const [before, after] of Object.entries(RENAMED_MIGRATIONS)) {
    await execute('update mikro_orm_migrations set name = ? where name = ?', [after, before]);
  }
}

export function migrationsList() {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => ({ name: file.replace(/\.sql$/, ''), class: sqlMigration(readFileSync(path.join(folder, file), 'utf8')) }));
}
