// SQL of the pages module that its ORM entities do not express.
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The stored size of each version of a page (content and diff, in bytes), newest first: what a page of the history
 * list may carry (pagination.ts, `budgetedPage`). octet_length reads a stored value's size from its header, without
 * reading the text itself.
 */
export async function versionTextSizes(em: EntityManager, pageId: number): Promise<number[]> {
  const rows = await em.execute<{ bytes: string | number }[]>(
    // a diff not made yet (version-diffs.ts) is counted at twice the content: a diff of every line deleted and inserted
    'select octet_length(content) + coalesce(octet_length(diff), 2 * octet_length(content)) as bytes from page_versions where page_id = ? order by index desc',
    [pageId],
  );
  return rows.map((row) => Number(row.bytes));
}

/** The text of each page of a note in bytes as stored (its content), by page id. */
export async function pageTextSizes(em: EntityManager, noteId: number): Promise<Map<number, number>> {
  const rows = await em.execute<{ id: number; bytes: string | number }[]>('select id, octet_length(content) as bytes from pages where note_id = ?', [noteId]);
  return new Map(rows.map((row) => [row.id, Number(row.bytes)]));
}

/** The content of the page's versions of these indexes, by index (the versions a diff is made from). */
export async function previousContents(em: EntityManager, pageId: number, indexes: readonly number[]): Promise<Map<number, string>> {
  if (indexes.length === 0) return new Map();
  const rows = await em.execute<{ index: number; content: string }[]>(
    'select index, content from page_versions where page_id = ? and index = any(?::int[])',
    [pageId, `{${indexes.join(',')}}`],
  );
  return new Map(rows.map((row) => [row.index, row.content]));
}

/** Keeps the diffs made on first read, in one statement (a diff already kept by a concurrent read stays as it is). */
export async function keepDiffs(em: EntityManager, diffs: readonly { id: number; diff: string }[]): Promise<void> {
  if (diffs.length === 0) return;
  await em.execute(
    `update page_versions v set diff = x.diff
       from jsonb_to_recordset(?::jsonb) as x(id int, diff text)
      where v.id = x.id and v.diff is null`,
    [JSON.stringify(diffs)],
  );
}
