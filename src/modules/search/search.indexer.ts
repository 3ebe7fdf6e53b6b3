// Writing the n-gram index (table search_documents, migration 0008): documents made from notes, pages, issues and
// comments, upserted in batches by one statement each. The projection (search.projection.ts) writes the documents a
// batch of changes touched, after they commit; `reindex` rebuilds the whole index with the same code, in one
// transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { forgetTokenStats } from './search.stats.ts';
import { htmlToText, indexTokens, normalize } from './text.ts';

export type DocumentKind = 'note' | 'page' | 'issue' | 'comment';

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
 * Writes (or replaces) the documents, on the caller's entity manager (inside its transaction, where it has one). The
 * values go into the statement's text one by one (the ORM writes every value into the SQL text): a 1 MiB page's body,
 * normalized body and tokens are each copied once into the statement, not wrapped in JSON that is then escaped again.
 */
export async function writeDocuments(em: EntityManager, documents: readonly SearchDocument[]): Promise<void> {
  if (documents.length === 0) return;
  const values: unknown[] = [];
  for (const document of documents) {
    // well-formed: a lone surrogate (which UTF-8 cannot carry) becomes U+FFFD, as it does when stored
    const title = document.title.toWellFormed();
    const body = document.body.slice(0, MAX_BODY_CHARS).toWellFormed();
    const normTitle = normalize(title);
    const normBody = normalize(body);
    const tokens = indexTokens(normTitle === '' ? normBody : `${normTitle} ${normBody}`);
    values.push(document.kind, document.objectId, document.noteId, title, body, normTitle, normBody, `{${tokens.join(',')}}`);
  }
  const rows = documents.map(() => '(?::text, ?::int, ?::int, ?::text, ?::text, ?::text, ?::text, ?::int[])').join(', ');
  await em.execute(
    `insert into search_documents (kind, object_id, note_id, page_id, issue_id, comment_id, title, body, norm_title, norm_body, tokens)
     select r.k, r.o, r.n,
            case when r.k = 'page' then r.o end, case when r.k = 'issue' then r.o end, case when r.k = 'comment' then r.o end,
            r.t, r.b, r.nt, r.nb, r.x
       from (values ${rows}) as r(k, o, n, t, b, nt, nb, x)
     on conflict (kind, object_id) do update
       set note_id = excluded.note_id, title = excluded.title, body = excluded.body,
           norm_title = excluded.norm_title, norm_body = excluded.norm_body, tokens = excluded.tokens`,
    values,
  );
}

/**
 * How many objects of a kind are read and written per statement by `documentsOf`: a page may hold
 * LIMIT_PAGE_CONTENT_BYTES (1 MiB by default) and its document a few copies of its text while it is made, so pages
 * go a few at a time; notes, issues and comments hold at most 64 KiB.
 */
const GROUP: Record<DocumentKind, number> = { note: 50, page: 4, issue: 50, comment: 50 };

/**
 * The documents of the objects asked for, as they are now, in groups of at most GROUP[kind] (objects gone since are
 * left out); `pagesOfNotes`: every page of those notes too.
 */
export async function* documentsOf(
  em: EntityManager,
  wanted: Record<DocumentKind, ReadonlySet<number>> & { pagesOfNotes: ReadonlySet<number> },
): AsyncGenerator<SearchDocument[]> {
  const pages = new Set(wanted.page);
  if (wanted.pagesOfNotes.size > 0) {
    const rows = await em.execute<{ id: number }[]>('select id from pages where note_id = any(?::int[])', [`{${[...wanted.pagesOfNotes].join(',')}}`]);
    for (const row of rows) pages.add(row.id);
  }
  for (const kind of ['note', 'page', 'issue', 'comment'] as const) {
    const ids = [...(kind === 'page' ? pages : wanted[kind])].sort((a, b) => a - b);
    for (let start = 0; start < ids.length; start += GROUP[kind]) {
      const rows = await em.execute<SourceRow[]>(sourceByIdsQuery(kind), [`{${ids.slice(start, start + GROUP[kind]).join(',')}}`]);
      if (rows.length > 0) yield rows.map(documentOf[kind]);
    }
  }
}

/** The GIN index as migration 0008 creates it. */
const GIN_INDEX = 'create index search_documents_tokens_index on search_documents using gin (tokens)';

/** How many source rows are read and written per statement while rebuilding. */
const BATCH = 1000;

type SourceRow = { id: number; note_id: number; title: string; text: string };

/** What a document of each kind is made from: its source row's columns and table. */
const SOURCE: Record<DocumentKind, string> = {
  note: 'select id, id as note_id, title, description as text from notes',
  page: 'select id, note_id, title, content as text from pages',
  issue: 'select id, note_id, title, description as text from issues',
  comment: `select id, note_id, '' as title, body as text from comments`,
};

/** The rows of one kind after `afterId`, in id order (keyset pagination). */
const sourceQuery = (kind: DocumentKind) => `${SOURCE[kind]} where id > ? order by id limit ?`;
/** The rows of one kind with the given ids. */
const sourceByIdsQuery = (kind: DocumentKind) => `${SOURCE[kind]} where id = any(?::int[])`;

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
    await tx.execute('lock table search_documents in access exclusive mode');
    await tx.execute('drop index search_documents_tokens_index');
    await tx.execute('truncate search_documents');
    for (const kind of ['note', 'page', 'issue', 'comment'] as const) {
      for (let afterId = 0; ; ) {
        const rows = await tx.execute<SourceRow[]>(sourceQuery(kind), [afterId, BATCH]);
        if (rows.length === 0) break;
        await writeDocuments(tx, rows.map(documentOf[kind]));
        documents[kind] += rows.length;
        afterId = rows[rows.length - 1]!.id;
        onProgress?.(kind, documents[kind]);
      }
    }
    // the GIN build sorts in maintenance_work_mem: more than the embedded database's 16 MB default, for this once
    await tx.execute(`set local maintenance_work_mem = '64MB'`);
    await tx.execute(GIN_INDEX);
  });
  await em.execute('analyze search_documents');
  forgetTokenStats(em);
  return { documents, milliseconds: performance.now() - started };
}

/**
 * At start-up: an empty index while there is something to index (a database from before migration 0008, or an
 * index emptied by hand) is rebuilt. Returns the report, or undefined when nothing had to be done (one cheap query).
 */
export async function reindexIfEmpty(em: EntityManager): Promise<ReindexReport | undefined> {
  const [state] = await em.execute<{ empty: boolean }[]>(
    'select not exists (select 1 from search_documents) and exists (select 1 from notes) as empty',
  );
  return state?.empty ? reindex(em) : undefined;
}
