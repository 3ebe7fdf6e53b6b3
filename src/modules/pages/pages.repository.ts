// SQL of the pages module that its ORM entities do not express.
import type { EntityManager } from '@mikro-orm/postgresql';
import { aliasedColumns, preparedQuery } from '../../db/rows.ts';
import { Page } from './page.entity.ts';

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

/** A page's title and content written by `writePageText`, with the new version's index and what changed. */
export type WrittenText = { row: Record<string, unknown>; changed: ('title' | 'content')[] };

export type PageTextWrite = {
  pageId: number;
  noteId: number;
  teamId: number;
  /** undefined: unchanged */
  title: string | undefined;
  content: string | undefined;
  /** The lock versions If-Match accepts; undefined: any (no If-Match, or `*`). */
  lockVersions: readonly number[] | undefined;
  actor: { id: number; username: string; clientId: number | null };
  now: Date;
};

function pageTextStatement(em: EntityManager): string {
  return `with old as (
       select id, title, content, version_sequence from pages where id = $1 for update
     ),
     p as (
       update pages set
         title = coalesce($2::text, old.title),
         content = coalesce($3::text, old.content),
         version_sequence = old.version_sequence + 1,
         lock_version = pages.lock_version + 1,
         updated_at = $5
       from old
       where pages.id = old.id
         and ($4::int[] is null or pages.lock_version = any($4::int[]))
         and (($2::text is not null and $2::text is distinct from old.title) or ($3::text is not null and $3::text is distinct from old.content))
       returning pages.*,
         array_remove(array[
           case when $2::text is not null and $2::text is distinct from old.title then 'title' end,
           case when $3::text is not null and $3::text is distinct from old.content then 'content' end
         ], null) as changed
     ),
     v as (
       insert into page_versions (page_id, note_id, index, title, content, diff, user_id, created_at)
       select p.id, p.note_id, p.version_sequence, p.title, p.content, null, $6, $5 from p
     ),
     c as (
       insert into changes (type, actor_id, client_id, team_id, note_id, subject_id, payload)
       select 'page.updated', $6, $7, $8, $9, p.id,
              jsonb_build_object('note_id', $9::int, 'page_id', p.id, 'changed', to_jsonb(p.changed), 'version', p.version_sequence,
                                 'actor', jsonb_build_object('id', $6::int, 'username', $10::text))
         from p
     ),
     l as (
       insert into logs (user_id, action, type, team_id, note_id, page_id, summary, created_at, updated_at)
       select $6, 'update', 'page', $8, $9, p.id, jsonb_build_object('page_id', p.id, 'title', p.title, 'changed', to_jsonb(p.changed)), $5, $5
         from p
     )
     select ${aliasedColumns(em, Page, 'p')}, p.changed from p`;
}

/**
 * A page's new title and content, in one statement outside any transaction (a statement is one on its own): the
 * page's row is locked and read as it is now, updated when the text differs (and its lock version is one If-Match
 * accepts), and its new version, its change-log row (what appendChange writes for `page.updated`) and its
 * activity-log entry (what the activity-log subscriber writes) are inserted with it. Nothing when the text is
 * unchanged, the lock version is not accepted or the page is gone: the caller reads the page to tell which.
 */
export async function writePageText(em: EntityManager, write: PageTextWrite): Promise<WrittenText | undefined> {
  const [row] = await preparedQuery<Record<string, unknown> & { changed: ('title' | 'content')[] }>(em, 'page_text_write', pageTextStatement(em), [
    write.pageId,
    write.title ?? null,
    write.content ?? null,
    write.lockVersions === undefined ? null : `{${write.lockVersions.join(',')}}`,
    write.now,
    write.actor.id,
    write.actor.clientId,
    write.teamId,
    write.noteId,
    write.actor.username,
  ]);
  return row === undefined ? undefined : { row, changed: row.changed };
}
