// The import's SQL (import.service.ts): ids taken from the tables' own sequences up front (so rows can refer to each
// other before they are written), and rows written many at a time: one statement takes a JSON array of rows
// (jsonb_to_recordset), so a statement's size, not the number of rows, bounds it, and a note of 50,000 versions is a
// few dozen statements, not 50,000.
import type { EntityManager } from '@mikro-orm/postgresql';

/** The columns of a table an import writes, with their SQL types (trusted names, never input). */
export type Columns = Readonly<Record<string, string>>;

/** JSON text of rows per statement at most: large contents go a few at a time. */
const STATEMENT_BYTES = 4 * 1024 * 1024;

/** `count` new ids of the table's `id` sequence. */
export async function takeIds(tx: EntityManager, table: string, count: number): Promise<number[]> {
  if (count === 0) return [];
  const rows = await tx.execute<{ id: number }[]>(
    `select nextval(pg_get_serial_sequence(?, 'id'))::int as id from generate_series(1, ?)`,
    [table, count],
  );
  return rows.map((row) => Number(row.id));
}

/** Writes the rows into the table (columns as given), as few statements as STATEMENT_BYTES allows. */
export async function insertRows(tx: EntityManager, table: string, columns: Columns, rows: readonly Record<string, unknown>[]): Promise<void> {
  const names = Object.keys(columns);
  const sql = `insert into ${table} (${names.join(', ')})
     select ${names.join(', ')} from jsonb_to_recordset(?::jsonb) as x(${names.map((name) => `${name} ${columns[name]}`).join(', ')})`;
  let batch: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await tx.execute(sql, [`[${batch.join(',')}]`]);
    batch = [];
    bytes = 0;
  };
  for (const row of rows) {
    const json = JSON.stringify(row);
    if (bytes + json.length > STATEMENT_BYTES) await flush();
    batch.push(json);
    bytes += json.length;
  }
  await flush();
}

/** The users of these usernames (compared as usernames are: A-Z = a-z), by their lower-case name. */
export async function usersByUsername(em: EntityManager, usernames: readonly string[]): Promise<Map<string, number>> {
  if (usernames.length === 0) return new Map();
  const rows = await em.execute<{ id: number; username_key: string }[]>(
    'select id, username_key from users where username_key in (select jsonb_array_elements_text(?::jsonb))',
    [JSON.stringify(usernames.map((name) => name.toLowerCase()))],
  );
  return new Map(rows.map((row) => [row.username_key, row.id]));
}

export async function slugTaken(tx: EntityManager, teamId: number, slug: string): Promise<boolean> {
  const rows = await tx.execute<{ id: number }[]>('select id from notes where team_id = ? and slug = ? limit 1', [teamId, slug]);
  return rows.length > 0;
}

/** The tree history the triggers wrote while the pages were inserted gives way to the archive's. */
export async function dropTriggeredPlaces(tx: EntityManager, noteId: number): Promise<void> {
  await tx.execute('delete from page_places where note_id = ?', [noteId]);
}

/** Parents, once every page exists (one statement). */
export async function linkParents(tx: EntityManager, links: readonly { id: number; parent_id: number }[]): Promise<void> {
  if (links.length === 0) return;
  await tx.execute(
    `update pages p set parent_id = x.parent_id from jsonb_to_recordset(?::jsonb) as x(id int, parent_id int) where p.id = x.id`,
    [JSON.stringify(links)],
  );
}

/** The counters of issue and request numbers continue after the imported ones. */
export async function continueCounters(tx: EntityManager, noteId: number, lastIssue: number, lastRequest: number): Promise<void> {
  await tx.execute('update notes set issue_sequence = ?, request_sequence = ? where id = ?', [lastIssue, lastRequest, noteId]);
  for (const [kind, last] of [['issue', lastIssue], ['request', lastRequest]] as const) {
    if (last > 0) await tx.execute('insert into note_counters (note_id, kind, last_index) values (?, ?, ?)', [noteId, kind, last]);
  }
}

export async function setCover(tx: EntityManager, noteId: number, pageId: number | null): Promise<void> {
  await tx.execute('update notes set cover_page_id = ? where id = ?', [pageId, noteId]);
}
