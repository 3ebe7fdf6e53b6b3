// Writing the n-gram index (table search_documents, migration 0008): documents made from notes, pages, issues and
// comments, upserted in batches by one statement each. The projection (search.projection.ts) writes the documents a
// batch of changes touched, after they commit; `reindex` rebuilds the whole index with the same code, in one
// transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  analyzeDocuments,
  buildTokensIndex,
  emptyIndexForRebuild,
  idsOfNotes,
  indexEmptyWithNotes,
  pageIdsOfNotes,
  sourceRowsAfter,
  sourceRowsByIds,
  upsertDocuments,
  type DocumentKind,
  type DocumentRow,
  type SourceRow,
} from './search.repository.ts';
import { forgetTokenStats } from './search.stats.ts';
import { htmlToText, indexTokens, normalize } from './text.ts';

export type { DocumentKind };

/** One searchable object: its plain text (markup already removed). */
export type SearchDocument = { kind: DocumentKind; objectId: number; noteId: number; title: string; body: string };

/** The longest body kept per document, in characters (page content may be 1 MiB of HTML; its text is indexed whole up to this). */
export const MAX_BODY_CHARS = 1_048_576;

export const noteDocument = (note: { id: number; title: string; description: string }): SearchDocument =>
  ({ kind: 'note', objectId: note.id, noteId: note.id, title: note.title, body: htmlToText(note.description) });

export const pageDocument = (page: { id: number; title: string; content: string }, noteId: number): SearchDocument =>
  ({ kind: 'page', objectId: page.id, noteId, title: page.title, body: htmlToText(page.content) });

export const issueDocument = (issue: { id: number; title: string; description: string }, noteId: number): SearchDocument =>
  ({ kind: 'issue', objectId: issue.id, noteId, title: issue.title, body: htmlToText(issue.description) });

export const commentDocument = (comment: { id: number; body: string }, noteId: number): SearchDocument =>
  ({ kind: 'comment', objectId: comment.id, noteId, title: '', body: htmlToText(comment.body) });

/**
 * The text one upsert statement carries at most (characters of bodies, with their normalized copies): documents of
 * large pages go a statement or two at a time, so a batch of them never holds all their texts at once.
 */
const STATEMENT_TEXT_CHARS = 2 * 1_048_576;

/**
 * Writes (or replaces) the documents, on the caller's entity manager (inside its transaction, where it has one), in
 * one statement, or a few when their texts are large (STATEMENT_TEXT_CHARS).
 */
export async function writeDocuments(em: EntityManager, documents: readonly SearchDocument[]): Promise<void> {
  if (documents.length === 0) return;
  let rows: DocumentRow[] = [];
  let chars = 0;
  for (const document of documents) {
    // well-formed: a lone surrogate (which UTF-8 cannot carry) becomes U+FFFD, as it does when stored
    const title = document.title.toWellFormed();
    const body = document.body.slice(0, MAX_BODY_CHARS).toWellFormed();
    const normTitle = normalize(title);
    const normBody = normalize(body);
    const tokens = indexTokens(normTitle === '' ? normBody : `${normTitle} ${normBody}`);
    rows.push({ kind: document.kind, objectId: document.objectId, noteId: document.noteId, title, body, normTitle, normBody, tokens });
    chars += body.length + normBody.length;
    if (chars >= STATEMENT_TEXT_CHARS) {
      await upsertDocuments(em, rows);
      rows = [];
      chars = 0;
    }
  }
  if (rows.length > 0) await upsertDocuments(em, rows);
}

/**
 * How many objects of a kind are read and written per statement by `documentsOf`: a page may hold
 * LIMIT_PAGE_CONTENT_BYTES (1 MiB by default) and its document a few copies of its text while it is made, so pages
 * go a few at a time; notes, issues and comments hold at most 64 KiB.
 */
const GROUP: Record<DocumentKind, number> = { note: 50, page: 4, issue: 50, comment: 50 };

/**
 * The documents of the objects asked for, as they are now, in groups of at most GROUP[kind] (objects gone since are
 * left out); `pagesOfNotes`: every page of those notes too; `everythingOfNotes`: every page, issue and comment of those.
 */
export async function* documentsOf(
  em: EntityManager,
  wanted: Record<DocumentKind, ReadonlySet<number>> & { pagesOfNotes: ReadonlySet<number>; everythingOfNotes?: ReadonlySet<number> },
): AsyncGenerator<SearchDocument[]> {
  const ids = { note: new Set(wanted.note), page: new Set(wanted.page), issue: new Set(wanted.issue), comment: new Set(wanted.comment) };
  if (wanted.pagesOfNotes.size > 0) for (const id of await pageIdsOfNotes(em, wanted.pagesOfNotes)) ids.page.add(id);
  if (wanted.everythingOfNotes && wanted.everythingOfNotes.size > 0) {
    for (const kind of ['page', 'issue', 'comment'] as const) for (const id of await idsOfNotes(em, kind, wanted.everythingOfNotes)) ids[kind].add(id);
  }
  for (const kind of ['note', 'page', 'issue', 'comment'] as const) {
    const sorted = [...ids[kind]].sort((a, b) => a - b);
    for (let start = 0; start < sorted.length; start += GROUP[kind]) {
      const rows = await sourceRowsByIds(em, kind, sorted.slice(start, start + GROUP[kind]));
      if (rows.length > 0) yield rows.map(documentOf[kind]);
    }
  }
}

/** How many source rows are read and written per statement while rebuilding. */
const BATCH = 1000;

const documentOf: Record<DocumentKind, (row: SourceRow) => SearchDocument> = {
  note: (row) => noteDocument({ id: row.id, title: row.title, description: row.text }),
  page: (row) => pageDocument({ id: row.id, title: row.title, content: row.text }, row.note_id),
  issue: (row) => issueDocument({ id: row.id, title: row.title, description: row.text }, row.note_id),
  comment: (row) => commentDocument({ id: row.id, body: row.text }, row.note_id),
};

export type ReindexReport = { documents: Record<DocumentKind, number>; milliseconds: number };

/**
 * Rebuilds the whole index in one transaction, from the notes, pages, issues and comments as they are now. The GIN
 * index is dropped and built again once at the end (many times faster than maintaining it row by row); searches and
 * writes wait for the rebuild to commit, then see the new index, and a failed rebuild leaves the old one whole.
 */
export async function reindex(em: EntityManager, onProgress?: (kind: DocumentKind, done: number) => void): Promise<ReindexReport> {
  const started = performance.now();
  const documents: Record<DocumentKind, number> = { note: 0, page: 0, issue: 0, comment: 0 };
  await em.transactional(async (tx) => {
    await emptyIndexForRebuild(tx);
    for (const kind of ['note', 'page', 'issue', 'comment'] as const) {
      for (let afterId = 0; ; ) {
        const rows = await sourceRowsAfter(tx, kind, afterId, BATCH);
        if (rows.length === 0) break;
        await writeDocuments(tx, rows.map(documentOf[kind]));
        documents[kind] += rows.length;
        afterId = rows[rows.length - 1]!.id;
        onProgress?.(kind, documents[kind]);
      }
    }
    await buildTokensIndex(tx);
  });
  await analyzeDocuments(em);
  forgetTokenStats(em);
  return { documents, milliseconds: performance.now() - started };
}

/**
 * At start-up: an empty index while there is something to index (a database from before migration 0008, or an
 * index emptied by hand) is rebuilt. Returns the report, or undefined when nothing had to be done (one cheap query).
 */
export async function reindexIfEmpty(em: EntityManager): Promise<ReindexReport | undefined> {
  return (await indexEmptyWithNotes(em)) ? reindex(em) : undefined;
}
