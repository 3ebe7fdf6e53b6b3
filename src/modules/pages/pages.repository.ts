// SQL of the pages module that its ORM entities do not express: the tree (ancestry, descendants, orders, locks), the
// sizes of texts, versions' diffs, and the page write. `?` placeholders, except the prepared statements
// (preparedQuery, src/db/rows.ts), which node-postgres takes as `$1`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import { aliasedColumns, jsonColumns, mapAliased, preparedQuery } from '../../db/rows.ts';
import { Note } from '../notes/note.entity.ts';
import { TAKE_CHANGE_WRITERS_LOCK } from '../events/events.repository.ts';
import { originalChangedSql } from '../notes/notes.repository.ts';
import { Team } from '../teams/team.entity.ts';
import { Page } from './page.entity.ts';
import type { Via } from '../events/domain-events.ts';

// ---- the tree

/** Locks the note's row for the rest of the transaction (FOR NO KEY UPDATE: writes that only reference it pass). */
export async function lockNoteRow(em: EntityManager, noteId: number): Promise<void> {
  await em.execute('select id from notes where id = ? for no key update', [noteId]);
}

/** The position after the last of the parent's children (null: the top level). */
export async function nextPosition(em: EntityManager, noteId: number, parentId: number | null): Promise<number> {
  const rows = await em.execute<{ next: number }[]>(
    `select coalesce(max(position), 0) + 1 as next from pages where note_id = ? and parent_id ${parentId === null ? 'is null' : '= ?'}`,
    parentId === null ? [noteId] : [noteId, parentId],
  );
  return Number(rows[0]?.next ?? 1);
}

const intArray = (ids: readonly number[]) => `{${ids.join(',')}}`;

export type Ancestry = {
  /** Titles from the root down to the page itself. */
  titles: string[];
  /** Ids from the root down to the page itself. */
  ids: number[];
};

export type TreeOrder = { column: 'position' | 'title' | 'created_at' | 'updated_at'; descending: boolean };

/** For each page (of `noteId`, when given): the titles and ids of its ancestors and itself, root first. One query. */
export async function ancestries(em: EntityManager, pageIds: readonly number[], noteId?: number): Promise<Map<number, Ancestry>> {
  const result = new Map<number, Ancestry>();
  if (pageIds.length === 0) return result;
  const rows = await em.execute<{ start_id: number; id: number; title: string; level: number }[]>(
    `with recursive up as (
       select id as start_id, id, parent_id, title, 0 as level from pages where id = any(?::int[]) ${noteId === undefined ? '' : 'and note_id = ?'}
       union all
       select up.start_id, p.id, p.parent_id, p.title, up.level + 1 from pages p join up on p.id = up.parent_id
        where up.level < 1000
     )
     select start_id, id, title, level from up order by start_id, level desc`,
    noteId === undefined ? [intArray(pageIds)] : [intArray(pageIds), noteId],
  );
  for (const row of rows) {
    const entry = result.get(row.start_id) ?? { titles: [], ids: [] };
    entry.titles.push(row.title);
    entry.ids.push(row.id);
    result.set(row.start_id, entry);
  }
  return result;
}

/** How many levels the page's subtree spans: 1 for a page without children. One query. */
export async function subtreeHeight(em: EntityManager, pageId: number): Promise<number> {
  const rows = await em.execute<{ height: number }[]>(
    `with recursive down as (
       select id, 1 as level from pages where id = ?
       union all
       select p.id, down.level + 1 from pages p join down on p.parent_id = down.id where down.level < 1000
     )
     select max(level)::int as height from down`,
    [pageId],
  );
  return rows[0]?.height ?? 1;
}

/**
 * Every page id of the note in tree order: a page comes right after its parent, siblings by position; the sort key is
 * the path of (position, id) pairs from the root. One query; the caller keeps the order (pages.handlers.ts).
 */
export async function allPageIdsInTreeOrder(em: EntityManager, noteId: number, descending: boolean): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(
    `with recursive tree as (
       select id, array[position, id] as sort_key, 1 as depth from pages where note_id = ? and parent_id is null
       union all
       select p.id, tree.sort_key || array[p.position, p.id], tree.depth + 1
         from pages p join tree on p.parent_id = tree.id where tree.depth < 1000
     )
     select id from tree order by sort_key ${descending ? 'desc' : 'asc'}`,
    [noteId],
  );
  return rows.map((row) => row.id);
}

/**
 * The ids of a note's pages in a flat order (one column, or the children of one parent by position), with each
 * page's text in bytes as stored (octet_length reads a value's size without reading the value), for cutting the
 * list into pages of results (pages.handlers.ts). The tree order of all pages is `allPageIdsInTreeOrder`. Only ids
 * and sizes are read here; the caller loads the few pages it presents.
 */
export async function pageIdsInOrder(em: EntityManager, noteId: number, parent: 'all' | 'root' | number, order: TreeOrder): Promise<{ id: number; bytes: number }[]> {
  const direction = order.descending ? 'desc' : 'asc';
  const filter = parent === 'all' ? '' : parent === 'root' ? 'and parent_id is null' : 'and parent_id = ?';
  const params: unknown[] = [noteId];
  if (typeof parent === 'number') params.push(parent);
  const rows = await em.execute<{ id: number; bytes: string | number }[]>(
    `select id, octet_length(content) as bytes from pages where note_id = ? ${filter} order by ${order.column} ${direction}, id ${direction}`,
    params,
  );
  return rows.map((row) => ({ id: row.id, bytes: Number(row.bytes) }));
}

/**
 * In a fork: the pages of the subtree that came from the original (still there), remembered with their base (fork_deletions), so
 * a request can propose their deletion after the pages and their versions are gone.
 */
export async function rememberForkDeletions(tx: EntityManager, actorId: number, pageId: number): Promise<void> {
  await tx.execute(
    `insert into fork_deletions (note_id, upstream_page_id, base_version_id, title, user_id, created_at)
     with recursive subtree (id) as (
       select ?::int union all select p.id from pages p join subtree on p.parent_id = subtree.id)
     select p.note_id, p.upstream_page_id, p.base_version_id, p.title, ?, ? from pages p join subtree on subtree.id = p.id
      where p.origin_page_id is not null
     on conflict (note_id, upstream_page_id) do update
       set base_version_id = excluded.base_version_id, title = excluded.title, user_id = excluded.user_id, created_at = excluded.created_at`,
    [pageId, actorId, currentTime()],
  );
}

/** Deletes a page's row (foreign keys cascade to its subtree, versions and comments). */
export async function deletePageRow(tx: EntityManager, pageId: number): Promise<void> {
  await tx.execute('delete from pages where id = ?', [pageId]);
}

/** The note keeps a cover while it has pages: its first top-level page, when its cover went. */
export async function keepACover(tx: EntityManager, noteId: number): Promise<void> {
  await tx.execute(
    `update notes set cover_page_id = (
       select id from pages where note_id = notes.id and parent_id is null order by position, id limit 1)
     where id = ? and cover_page_id is null`,
    [noteId],
  );
}

// ---- the views of pages

export type HeadingRow = { id: number; title: string; created_at: string; updated_at: string };
export type PageViewRow = {
  page_id: number;
  /** Titles and ids from the root down to the page itself. */
  titles: string[];
  ids: number[];
  parent: HeadingRow | null;
  children: HeadingRow[];
  original: Record<string, unknown> | null;
  original_team: Record<string, unknown> | null;
  pullable: boolean;
};

/** A relative's heading (what a summary shows), never its content: a page with many large children stays small. */
const headingColumns = (alias: string) =>
  `json_build_object('id', ${alias}.id, 'title', ${alias}.title, 'created_at', ${alias}.created_at, 'updated_at', ${alias}.updated_at)`;

function pageViewsStatement(em: EntityManager, one: boolean): string {
  return `select
       v.id as "page_id",
       a.titles as "titles",
       a.ids as "ids",
       (select ${headingColumns('pp')} from pages pp where pp.id = v.parent_id) as "parent",
       (select coalesce(json_agg(${headingColumns('c')} order by c.position, c.id), '[]'::json)
          from pages c where c.parent_id = v.id) as "children",
       case when o.id is null then null else ${jsonColumns(em, Note, 'o')} end as "original",
       case when ot.id is null then null else ${jsonColumns(em, Team, 'ot')} end as "original_team",
       o.id is not null and ${originalChangedSql('fork', 'o.id')} as "pullable"
     from pages v
     cross join lateral (
       with recursive up as (
         select id, parent_id, title, 0 as level from pages where id = v.id
         union all
         select p.id, p.parent_id, p.title, up.level + 1 from pages p join up on p.id = up.parent_id where up.level < 1000
       )
       select json_agg(title order by level desc) as titles, json_agg(id order by level desc) as ids from up
     ) a
     left join notes fork on fork.id = $2
     left join notes o on o.id = $3
     left join teams ot on ot.id = o.team_id
     where ${one ? 'v.id = $1' : 'v.id = any($1::int[])'}`;
}

/**
 * What the views of these pages need beside the pages themselves, in one prepared statement whatever their number
 * and depth: each page's ancestry (titles and ids from the root), parent and children (headings only); with `noteId` and
 * `originalId` (a fork's, for one note's pages), the original note, its team and whether the fork can pull.
 */
export async function pageViewRows(em: EntityManager, pageIds: readonly number[], noteId: number | null, originalId: number | null): Promise<Map<number, PageViewRow>> {
  if (pageIds.length === 0) return new Map();
  // one page (a read, a write's answer) has a statement of its own: PostgreSQL plans \`= any($1)\` afresh on every
  // execution (its generic plan is costed for an array of several ids), while \`= $1\` keeps one generic plan
  const one = pageIds.length === 1;
  const rows = await preparedQuery<PageViewRow>(em, one ? 'page_view' : 'page_views', pageViewsStatement(em, one), [
    one ? pageIds[0] : intArray(pageIds),
    noteId,
    originalId,
  ]);
  return new Map(rows.map((row) => [row.page_id, row]));
}

// ---- texts and versions

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

export type PageTextWrite = {
  pageId: number;
  noteId: number;
  teamId: number;
  /** undefined: unchanged */
  title: string | undefined;
  content: string | undefined;
  /** The lock versions If-Match accepts; undefined: any (no If-Match, or `*`). */
  lockVersions: readonly number[] | undefined;
  /** Write only when the page's current version is this one (a write with `page[base_version]`). */
  baseVersion: number | undefined;
  actor: { id: number; username: string; clientId: number | null; via: Via | null };
  /** Who else the new version names (versions.writer.ts, coAuthorsOf): empty for a write through the API. */
  coAuthorIds: readonly number[];
  now: Date;
};

function pageTextStatement(em: EntityManager): string {
  // `old` takes the page's row lock and CHANGE_WRITERS_LOCK before `c` takes the change's id (c reads p, which reads old)
  return `with old as (
       select id, title, content, version_sequence, ${TAKE_CHANGE_WRITERS_LOCK} as writer from pages where id = $1 for update
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
         and ($11::int is null or old.version_sequence = $11::int)
         and (($2::text is not null and $2::text is distinct from old.title) or ($3::text is not null and $3::text is distinct from old.content))
       returning pages.*,
         array_remove(array[
           case when $2::text is not null and $2::text is distinct from old.title then 'title' end,
           case when $3::text is not null and $3::text is distinct from old.content then 'content' end
         ], null) as changed
     ),
     v as (
       insert into page_versions (page_id, note_id, index, title, content, diff, user_id, created_at, via_client, via_app, co_author_ids)
       select p.id, p.note_id, p.version_sequence, p.title, p.content, null, $6, $5, $12::text, $13::text, $14::int[] from p
     ),
     c as (
       insert into changes (type, actor_id, client_id, team_id, note_id, subject_id, payload)
       select 'page.updated', $6, $7, $8, $9, p.id,
              jsonb_build_object('note_id', $9::int, 'page_id', p.id, 'changed', to_jsonb(p.changed), 'version', p.version_sequence,
                                 'actor', jsonb_build_object('id', $6::int, 'username', $10::text))
         from p
     ),
     l as (
       insert into logs (user_id, action, type, team_id, note_id, page_id, summary, created_at, updated_at, via_client, via_app)
       select $6, 'update', 'page', $8, $9, p.id, jsonb_build_object('page_id', p.id, 'title', p.title, 'changed', to_jsonb(p.changed)), $5, $5, $12::text, $13::text
         from p
     )
     select ${aliasedColumns(em, Page, 'p')} from p`;
}

/**
 * A page's new title and content, in one statement outside any transaction (a statement is one on its own): the
 * page's row is locked and read as it is now, updated when the text differs (and its lock version is one If-Match
 * accepts, and its version is the base given), and its new version, its change-log row (what appendChange writes for `page.updated`) and its
 * activity-log entry (what the activity-log subscriber writes) are inserted with it. Nothing when the text is
 * unchanged, the lock version is not accepted or the page is gone: the caller reads the page to tell which.
 */
export async function writePageText(em: EntityManager, write: PageTextWrite): Promise<Page | undefined> {
  const [row] = await preparedQuery<Record<string, unknown>>(em, 'page_text_write', pageTextStatement(em), [
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
    write.baseVersion ?? null,
    write.actor.via?.clientId ?? null,
    write.actor.via?.name ?? null,
    intArray(write.coAuthorIds),
  ]);
  return row === undefined ? undefined : mapAliased(em, Page, row, 'p');
}
