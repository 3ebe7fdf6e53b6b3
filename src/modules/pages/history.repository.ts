// The SQL of reading a note as it was at a moment (`at`, history.ts): the tree then from page_places (written by the
// triggers of migration 0022), each page's version then from page_versions and, for pages deleted since,
// deleted_page_versions. Two statements whatever the size of the note: the tree with each page's version, then the
// contents of the pages a page of results shows.
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedQuery } from '../../db/rows.ts';

/** A page as it was at the moment: its place, its version then, and where that version's content is. */
export type PageThen = {
  id: number;
  parentId: number | null;
  position: number;
  title: string;
  /** The version then; 0 for a page that had none of its own yet (a page copied into a fork). */
  version: number;
  createdAt: Date;
  /** That version's time (the page's own time when it had no version). */
  updatedAt: Date;
  /** Size of its content in UTF-8. */
  bytes: number;
  /** Where the content is: a version (live or of a deleted page) by id, or the page's row. */
  contentOf: { version: number } | { page: number };
};

type PageThenRow = {
  id: number;
  parent_id: number | null;
  position: number;
  place_title: string;
  place_at: Date | string;
  moved_after: boolean;
  created_at: Date | string;
  live_updated_at: Date | string | null;
  live_version: number | null;
  live_bytes: string | number | null;
  version_id: number | null;
  version_index: number | null;
  version_title: string | null;
  version_at: Date | string | null;
  version_bytes: string | number | null;
};

// Each page's latest place at or before $2 ($1: the note); of those present, the version then: the newest at or before $2 among its
// versions, kept (page_versions) or of a page deleted since (deleted_page_versions), else its first (versions are
// stamped to the second, places to the microsecond: a page created in the second before `at` may have its first
// version stamped just after), else none (a fork's copy with no version of its own: its row's content).
const PAGES_THEN = `
with places as (
  select distinct on (page_id) page_id, parent_id, position, title, present, since
    from page_places where note_id = $1 and since <= $2::timestamptz
   order by page_id, since desc, id desc
)
select s.page_id as id, s.parent_id, s.position, s.title as place_title, s.since::timestamptz(0) as place_at,
       exists (select 1 from page_places a where a.page_id = s.page_id and a.since > $2::timestamptz) as moved_after,
       coalesce(live.created_at, (select min(created_at) from deleted_page_versions d where d.note_id = $1 and d.page_id = s.page_id),
         (select min(since) from page_places b where b.page_id = s.page_id)::timestamptz(0)) as created_at,
       live.updated_at as live_updated_at, live.version_sequence as live_version, live.bytes as live_bytes,
       v.id as version_id, v.index as version_index, v.title as version_title, v.created_at as version_at, v.bytes as version_bytes
  from places s
  left join lateral (
    select created_at, updated_at, version_sequence, octet_length(content) as bytes from pages where id = s.page_id and note_id = $1
  ) live on true
  left join lateral (
    select x.id, x.index, x.title, x.created_at, x.bytes from (
      (select id, index, title, created_at, octet_length(content) as bytes from page_versions
        where page_id = s.page_id and created_at <= $2::timestamptz order by index desc limit 1)
      union all
      (select id, index, title, created_at, octet_length(content) from deleted_page_versions
        where note_id = $1 and page_id = s.page_id and created_at <= $2::timestamptz order by index desc limit 1)
      union all
      (select id, index, title, created_at, octet_length(content) from page_versions
        where page_id = s.page_id order by index limit 1)
      union all
      (select id, index, title, created_at, octet_length(content) from deleted_page_versions
        where note_id = $1 and page_id = s.page_id order by index limit 1)
    ) x order by (x.created_at <= $2::timestamptz) desc, x.index desc limit 1
  ) v on true
 where s.present`;

const asDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));

/** The pages of the note at `at` (present then), each with its version then. One statement. */
export async function pagesThen(em: EntityManager, noteId: number, at: Date): Promise<PageThen[]> {
  const rows = await preparedQuery<PageThenRow>(em, 'pages-then', PAGES_THEN, [noteId, at.toISOString()]);
  return rows.map(pageThenFromRow);
}

/** The contents of the pages given (as pagesThen says where each is), by page id. One statement. */
export async function contentsThen(em: EntityManager, noteId: number, pages: readonly PageThen[]): Promise<Map<number, string>> {
  const result = new Map<number, string>();
  if (pages.length === 0) return result;
  const versionIds = pages.flatMap((page) => ('version' in page.contentOf ? [page.contentOf.version] : []));
  const pageIds = pages.flatMap((page) => ('page' in page.contentOf ? [page.contentOf.page] : []));
  const rows = await preparedQuery<{ page_id: number; content: string }>(
    em,
    'contents-then',
    `select page_id, content from page_versions where id = any($2::int[]) and note_id = $1
     union all select page_id, content from deleted_page_versions where id = any($2::int[]) and note_id = $1
     union all select id, content from pages where id = any($3::int[]) and note_id = $1`,
    [noteId, `{${versionIds.join(',')}}`, `{${pageIds.join(',')}}`],
  );
  for (const row of rows) result.set(row.page_id, row.content);
  return result;
}

function pageThenFromRow(row: PageThenRow): PageThen {
  const versioned = row.version_id !== null;
  // unchanged since the moment (no later version, no later move): the page's own times, as a read of now shows them
  const unchanged = row.live_version !== null && !row.moved_after && (row.version_index ?? 0) === row.live_version;
  const changedAt = Math.max(asDate(row.place_at).getTime(), versioned ? asDate(row.version_at!).getTime() : 0);
  return {
    id: row.id,
    parentId: row.parent_id,
    position: row.position,
    title: row.version_title ?? row.place_title,
    version: row.version_index ?? 0,
    createdAt: asDate(row.created_at),
    updatedAt: unchanged ? asDate(row.live_updated_at!) : new Date(changedAt),
    bytes: Number((versioned ? row.version_bytes : row.live_bytes) ?? 0),
    contentOf: versioned ? { version: row.version_id! } : { page: row.id },
  };
}
