// The migrations: numbered without a gap or a twin, and a database that applied one under a name it had before is
// not given it again.
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/database.ts';
import { RENAMED_MIGRATIONS } from '../../src/db/migrations.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => database?.close());

const recorded = async () =>
  (await database.orm.em.fork().execute<{ name: string }[]>('select name from mikro_orm_migrations order by name')).map((row) => row.name);

describe('migrations', () => {
  it('are numbered 0001, 0002, ... without a gap or a twin', () => {
    const numbers = readdirSync(new URL('../../src/db/migrations/', import.meta.url)).filter((file) => file.endsWith('.sql')).map((file) => file.slice(0, 4)).sort();
    expect(numbers).toEqual(numbers.map((_, i) => String(i + 1).padStart(4, '0')));
  });

  it('renames the record of a migration applied under its old name instead of applying it again', async () => {
    const names = await recorded();
    for (const [before, after] of Object.entries(RENAMED_MIGRATIONS)) {
      expect(names).toContain(after);
      await database.orm.em.fork().execute('update mikro_orm_migrations set name = ? where name = ?', [before, after]);
    }
    expect(await migrate(database.orm)).toEqual([]);
    expect(await recorded()).toEqual(names);
  });
});
