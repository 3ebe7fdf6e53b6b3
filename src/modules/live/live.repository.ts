// The live editor's reads: a page's text and version as stored now (a document is built from it, and brought up to
// date with it when the change feed names its note).
import type { EntityManager } from '@mikro-orm/postgresql';

export type PageNow = { content: string; version: number; noteId: number };

export async function pageNow(em: EntityManager, pageId: number): Promise<PageNow | undefined> {
  const rows = await em.getConnection().execute<{ content: string; version_sequence: number; note_id: number }[]>(
    'select content, version_sequence, note_id from pages where id = ?',
    [pageId],
  );
  const row = rows[0];
  return row ? { content: row.content, version: row.version_sequence, noteId: row.note_id } : undefined;
}
