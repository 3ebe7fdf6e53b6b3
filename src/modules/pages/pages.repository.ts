// SQL of the pages module that its ORM entities do not express.
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The stored size of each version of a page (content and diff, in bytes), newest first: what a page of the history
 * list may carry (pagination.ts, `budgetedPage`). octet_length reads a stored value's size from its header, without
 * reading the text itself.
 */
export async function versionTextSizes(em: EntityManager, pageId: number): Promise<number[]> {
  const rows = await em.execute<{ bytes: string | number }[]>(
    'select octet_length(content) + octet_length(diff) as bytes from page_versions where page_id = ? order by index desc',
    [pageId],
  );
  return rows.map((row) => Number(row.bytes));
}

/** The text of each page of a note in bytes as stored (its content), by page id. */
export async function pageTextSizes(em: EntityManager, noteId: number): Promise<Map<number, number>> {
  const rows = await em.execute<{ id: number; bytes: string | number }[]>('select id, octet_length(content) as bytes from pages where note_id = ?', [noteId]);
  return new Map(rows.map((row) => [row.id, Number(row.bytes)]));
}
