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

export function migrationsList() {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => ({ name: file.replace(/\.sql$/, ''), class: sqlMigration(readFileSync(path.join(folder, file), 'utf8')) }));
}
