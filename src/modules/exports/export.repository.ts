// The export's SQL (export.ts, note-json.ts, markdown.ts): everything of one note, read in keyset batches so that an
// export holds one batch of each kind of row at a time, whatever the note's size. Every statement is a read outside
// any transaction (PGlite is one session: an export must never hold it); what was written after the export began is
// left out by the bounds taken first (`exportBounds`), so the files of the zip and note.json name the same versions.
// Times are formatted by PostgreSQL (ISO 8601 UTC with milliseconds), so no value depends on the driver's parsing.
import type { EntityManager } from '@mikro-orm/postgresql';

/** ISO 8601 UTC with milliseconds, as every time of the API. */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** A user as note.json names one: `{username, name}`. */
const userJson = (alias: string) => `json_build_object('username', ${alias}.username, 'name', ${alias}.name)`;
/**
 * The author of a row: the name an import recorded (`imported_author`, migration 0023: the author had no user on the
 * importing server) or the user, so export -> import -> export keeps it.
 */
const authorJson = (row: string, user: string) => `case when ${row}.imported_author is null then ${userJson(user)}
  else json_build_object('username', ${row}.imported_author->>'username', 'name', ${row}.imported_author->>'name') end`;

/** The highest ids the export takes: rows made after its start are not in it. */
export type ExportBounds = { version: number; place: number; requestPage: number; attachment: number };

export async function exportBounds(em: EntityManager, noteId: number): Promise<ExportBounds> {
  const [row] = await em.execute<{ version: number | null; place: string | number | null; request_page: number | null; attachment: number | null }[]>(
    `select greatest((select max(id) from page_versions where note_id = ?), (select max(id) from deleted_page_versions where note_id = ?)) as version,
            (select max(id) from page_places where note_id = ?) as place,
            (select max(rp.id) from request_pages rp join requests r on r.id = rp.request_id where r.to_note_id = ?) as request_page,
            (select max(id) from attachments where note_id = ?) as attachment`,
    [noteId, noteId, noteId, noteId, noteId],
  );
  return { version: row?.version ?? 0, place: Number(row?.place ?? 0), requestPage: row?.request_page ?? 0, attachment: row?.attachment ?? 0 };
}

// ---- keyset batches

/** A row's place in its order: the values of the order's columns. */
export type Key = readonly number[];

/**
 * Rows of one kind in a fixed order, in batches: `from` is `from ... where ...` (its parameters `params`), `key` the
 * columns of the order (unique together), `columns` what to select. With `size` (an SQL expression of a row's text
 * in bytes: octet_length reads a stored value's size without reading it), a batch ends where its text passes
 * `budget` (at least one row): the keys and sizes are read first, then the rows of that range.
 */
export type KeysetQuery = { from: string; params: readonly unknown[]; key: readonly string[]; columns: string; size?: string };

const KEYS_PER_BATCH = 500;
/** Text a batch carries at most (one larger row is a batch alone). */
export const BATCH_TEXT_BYTES = 2 * 1024 * 1024;

function after(query: KeysetQuery, key: Key | undefined): { sql: string; params: unknown[] } {
  if (key === undefined) return { sql: '', params: [] };
  return { sql: ` and (${query.key.join(', ')}) > (${key.map(() => '?').join(', ')})`, params: [...key] };
}

export async function keysetBatch<Row>(em: EntityManager, query: KeysetQuery, from: Key | undefined, budget = BATCH_TEXT_BYTES): Promise<Row[]> {
  const order = query.key.join(', ');
  const start = after(query, from);
  if (query.size === undefined) {
    return em.execute<Row[]>(`select ${query.columns} ${query.from}${start.sql} order by ${order} limit ${KEYS_PER_BATCH}`, [...query.params, ...start.params]);
  }
  const keys = await em.execute<Record<string, unknown>[]>(
    `select ${query.key.map((column, i) => `${column} as k${i}`).join(', ')}, ${query.size} as bytes ${query.from}${start.sql} order by ${order} limit ${KEYS_PER_BATCH}`,
    [...query.params, ...start.params],
  );
  if (keys.length === 0) return [];
  let total = 0;
  let last = 0;
  for (let i = 0; i < keys.length; i += 1) {
    total += Number(keys[i]!.bytes);
    if (i > 0 && total > budget) break;
    last = i;
  }
  const through = query.key.map((_column, i) => Number(keys[last]![`k${i}`]));
  return em.execute<Row[]>(
    `select ${query.columns} ${query.from}${start.sql} and (${order}) <= (${through.map(() => '?').join(', ')}) order by ${order}`,
    [...query.params, ...start.params, ...through],
  );
}

/** Walks a keyset query's rows in order, a batch in memory at a time. */
export class KeysetCursor<Row> {
  private batch: Row[] = [];
  private at = 0;
  private done = false;
  private last: Key | undefined;
  private readonly em: EntityManager;
  private readonly query: KeysetQuery;
  private readonly keyOf: (row: Row) => Key;

  constructor(em: EntityManager, query: KeysetQuery, keyOf: (row: Row) => Key) {
    this.em = em;
    this.query = query;
    this.keyOf = keyOf;
  }

  /** The next row without taking it; undefined at the end. */
  async peek(): Promise<Row | undefined> {
    if (this.at >= this.batch.length && !this.done) {
      this.batch = await keysetBatch<Row>(this.em, this.query, this.last);
      this.at = 0;
      if (this.batch.length === 0) this.done = true;
      else this.last = this.keyOf(this.batch[this.batch.length - 1]!);
    }
    return this.batch[this.at];
  }

  /** Every row, in order. */
  async *rows(): AsyncGenerator<Row> {
    for (let row = await this.peek(); row !== undefined; row = await this.peek()) {
      this.at += 1;
      yield row;
    }
  }

  /** The next rows while `belongs` holds (the rows of one page, one issue, ... when the order starts with it). */
  async *rowsWhile(belongs: (row: Row) => boolean): AsyncGenerator<Row> {
    for (let row = await this.peek(); row !== undefined && belongs(row); row = await this.peek()) {
      this.at += 1;
      yield row;
    }
  }
}

// ---- the note

export type NoteRow = {
  id: number; name: string | null; title: string; description: string; is_private: boolean; is_time_track: boolean;
  created_at: string; updated_at: string; author: { username: string; name: string };
  forked_from: { team: string; note: string } | null; cover_page: number | null;
};

export async function noteRow(em: EntityManager, noteId: number): Promise<NoteRow> {
  const [row] = await em.execute<NoteRow[]>(
    `select n.id, n.slug as name, n.title, n.description, n.is_private, n.is_time_track, ${iso('n.created_at')} as created_at,
            ${iso('n.updated_at')} as updated_at, ${userJson('u')} as author,
            case when o.id is null then null else json_build_object('team', ot.name, 'note', coalesce(o.slug, o.id::text)) end as forked_from,
            n.cover_page_id as cover_page
       from notes n join users u on u.id = n.user_id
       left join notes o on o.id = n.forked_from_id left join teams ot on ot.id = o.team_id
      where n.id = ?`,
    [noteId],
  );
  if (!row) throw new Error(`note ${noteId} is gone`);
  return row;
}

// ---- pages, their versions, places and comments (all ordered by page id first)

export type PageRow = { page_id: number; created_at: string; unversioned: boolean };

/** Every page the note has or had since its history began (page_places), deleted ones included. */
export function pagesQuery(noteId: number, bounds: ExportBounds): KeysetQuery {
  return {
    from: `from (select distinct page_id from page_places where note_id = ? and id <= ?) x left join pages p on p.id = x.page_id where true`,
    params: [noteId, bounds.place],
    key: ['x.page_id'],
    columns: `x.page_id,
      ${iso(`coalesce(p.created_at,
        (select min(d.created_at) from deleted_page_versions d where d.page_id = x.page_id),
        (select min(pp.since) from page_places pp where pp.page_id = x.page_id))`)} as created_at,
      coalesce(p.version_sequence = 0, false) as unversioned`,
  };
}

/** What the versions of live and deleted pages share, with their table's name. */
const versionColumns = 'id, page_id, note_id, index, title, content, user_id, created_at, request_id, merged_from_base, via_app, imported_author, co_author_ids';
const allVersions = (noteId: number, bound: number) => ({
  sql: `(select ${versionColumns} from page_versions where note_id = ? and id <= ?
         union all select ${versionColumns} from deleted_page_versions where note_id = ? and id <= ?) v`,
  params: [noteId, bound, noteId, bound],
});

export type VersionRow = {
  page_id: number; version: number; title: string; author: { username: string; name: string };
  co_authors: { username: string; name: string }[]; created_at: string; request: number | null; merged_from_base: number | null;
  via_app: string | null;
};

/** A version's co-authors (migration 0027) as users, in their order; a user id with no user is left out. */
const coAuthorsJson = (row: string) => `(select coalesce(json_agg(${userJson('cu')} order by co.at), '[]'::json)
  from unnest(${row}.co_author_ids) with ordinality as co(user_id, at) join users cu on cu.id = co.user_id)`;

/** Every version's metadata (no content), by page then version. */
export function versionsQuery(noteId: number, bounds: ExportBounds): KeysetQuery {
  const versions = allVersions(noteId, bounds.version);
  return {
    from: `from ${versions.sql} join users u on u.id = v.user_id left join requests r on r.id = v.request_id where true`,
    params: versions.params,
    key: ['v.page_id', 'v.index'],
    columns: `v.page_id, v.index as version, v.title, ${authorJson('v', 'u')} as author, ${coAuthorsJson('v')} as co_authors,
      ${iso('v.created_at')} as created_at, r.index as request, v.merged_from_base, v.via_app`,
  };
}

export type VersionContentRow = { page_id: number; version: number; content: string };

/** Every version's content, by page then version, in batches of bounded text. */
export function versionContentsQuery(noteId: number, bounds: ExportBounds): KeysetQuery {
  const versions = allVersions(noteId, bounds.version);
  return {
    from: `from ${versions.sql} where true`,
    params: versions.params,
    key: ['v.page_id', 'v.index'],
    columns: 'v.page_id, v.index as version, v.content',
    size: 'octet_length(v.content)',
  };
}

export type UnversionedContentRow = { page_id: number; content: string };

/** The content of the live pages that have no version of their own (a fork's copies never changed here). */
export function unversionedContentsQuery(noteId: number): KeysetQuery {
  return {
    from: 'from pages p where p.note_id = ? and p.version_sequence = 0',
    params: [noteId],
    key: ['p.id'],
    columns: 'p.id as page_id, p.content',
    size: 'octet_length(p.content)',
  };
}

export type PlaceRow = { place_id: number; page_id: number; since: string; parent: number | null; position: number; title: string; present: boolean };

export function placesQuery(noteId: number, bounds: ExportBounds): KeysetQuery {
  return {
    from: 'from page_places pp where pp.note_id = ? and pp.id <= ?',
    params: [noteId, bounds.place],
    // a page's places in the order they were written (tree changes of a note queue on its row: ids follow time)
    key: ['pp.page_id', 'pp.id'],
    columns: `pp.id as place_id, pp.page_id, ${iso('pp.since')} as since, pp.parent_id as parent, pp.position, pp.title, pp.present`,
  };
}

// ---- comments (note, page and issue comments share their shape)

export type CommentRow = {
  owner: number; comment_id: number; body: string; author: { username: string; name: string }; mentions: string[];
  created_at: string; updated_at: string; via_app: string | null;
};

const commentColumns = (owner: string) => `${owner} as owner, c.id as comment_id, c.body, ${authorJson('c', 'u')} as author,
  coalesce((select json_agg(mu.username order by mu.username) from comment_mentions m join users mu on mu.id = m.user_id
             where m.comment_id = c.id), '[]'::json) as mentions,
  ${iso('c.created_at')} as created_at, ${iso('c.updated_at')} as updated_at, c.via_app`;

/**
 * Comments of `type` in the note, ordered by what they belong to (`owner`: a page id, an issue's or a request's index,
 * 0 for the note).
 */
export function commentsQuery(noteId: number, type: 'note' | 'page' | 'issue' | 'request'): KeysetQuery {
  const owner = { note: '0::int', page: 'c.page_id', issue: 'i.index', request: 'r.index' }[type];
  const join = { note: '', page: '', issue: 'join issues i on i.id = c.issue_id', request: 'join requests r on r.id = c.request_id' }[type];
  return {
    from: `from comments c join users u on u.id = c.user_id ${join}
      where c.note_id = ? and c.type = ?`,
    params: [noteId, type],
    key: [owner, 'c.id'],
    columns: commentColumns(owner),
    size: 'octet_length(c.body)',
  };
}

// ---- tags, issues

export type TagRow = { tag_id: number; name: string; created_at: string };

export function tagsQuery(noteId: number): KeysetQuery {
  return { from: 'from tags t where t.note_id = ?', params: [noteId], key: ['t.id'], columns: `t.id as tag_id, t.name, ${iso('t.created_at')} as created_at` };
}

export type IssueRow = {
  index: number; title: string; description: string; is_done: boolean; position: number; rate: number;
  author: { username: string; name: string }; assignee: { username: string; name: string } | null;
  tags: string[]; created_at: string; updated_at: string; via_app: string | null;
};

export function issuesQuery(noteId: number): KeysetQuery {
  return {
    from: 'from issues i join users u on u.id = i.from_user_id left join users a on a.id = i.to_user_id where i.note_id = ?',
    params: [noteId],
    key: ['i.index'],
    columns: `i.index, i.title, i.description, i.is_done, i.position, i.rate, ${authorJson('i', 'u')} as author,
      case when a.id is null then null else ${userJson('a')} end as assignee,
      coalesce((select json_agg(t.name order by it.added_order) from issue_tags it join tags t on t.id = it.tag_id where it.issue_id = i.id), '[]'::json) as tags,
      ${iso('i.created_at')} as created_at, ${iso('i.updated_at')} as updated_at, i.via_app`,
    size: 'octet_length(i.description)',
  };
}

// ---- requests

export type RequestRow = {
  index: number; status: 'draft' | 'opened' | 'closed' | 'merged'; is_wip: boolean; description: string;
  author: { username: string; name: string }; from: { team: string; note: string } | null; created_at: string; updated_at: string;
  closed_at: string | null; merged_at: string | null; merged_by: { username: string; name: string } | null; via_app: string | null;
  attachments: string[];
};

export function requestsQuery(noteId: number): KeysetQuery {
  return {
    from: `from requests r join users u on u.id = r.user_id left join users m on m.id = r.merged_by_id
      left join notes f on f.id = r.from_note_id left join teams ft on ft.id = f.team_id where r.to_note_id = ?`,
    params: [noteId],
    key: ['r.index'],
    columns: `r.index, r.status, r.is_wip, r.description, ${authorJson('r', 'u')} as author,
      case when f.id is not null then json_build_object('team', ft.name, 'note', coalesce(f.slug, f.id::text))
           when r.imported_from is not null then json_build_object('team', r.imported_from->>'team', 'note', r.imported_from->>'note')
           end as "from",
      ${iso('r.created_at')} as created_at, ${iso('r.updated_at')} as updated_at,
      case when r.closed_at is null then null else ${iso('r.closed_at')} end as closed_at,
      case when r.merged_at is null then null else ${iso('r.merged_at')} end as merged_at,
      case when m.id is null then null else ${userJson('m')} end as merged_by, r.via_app,
      coalesce((select json_agg(distinct a.checksum order by a.checksum) from request_attachments ra join attachments a on a.id = ra.attachment_id
                 where ra.request_id = r.id), '[]'::json) as attachments`,
    size: 'octet_length(r.description)',
  };
}

export type RequestPageRow = {
  request: number; entry_id: number; type: 'create' | 'update' | 'delete'; path: string; page: number | null;
  base_version: number | null; title: string | null; diff: string; merged: boolean; created_at: string; has_content: boolean;
};

/** The pages of the note's requests, by request index then entry id (an entry's number in its request counts from 1). */
export function requestPagesQuery(noteId: number, bounds: ExportBounds): KeysetQuery {
  return {
    from: `from request_pages rp join requests r on r.id = rp.request_id
      left join page_versions pv on pv.id = rp.page_version_id
      left join (select id, index from page_versions union all select id, index from deleted_page_versions) b on b.id = rp.base_version_id
      where r.to_note_id = ? and rp.id <= ?`,
    params: [noteId, bounds.requestPage],
    key: ['r.index', 'rp.id'],
    columns: `r.index as request, rp.id as entry_id, rp.type, rp.path, rp.to_page_id as page, b.index as base_version,
      coalesce(pv.title, rp.imported_title) as title, rp.diff, rp.merged, ${iso('rp.created_at')} as created_at,
      (pv.id is not null or rp.imported_content is not null) as has_content`,
    size: 'octet_length(rp.diff)',
  };
}

export type RequestContentRow = { request: number; entry_id: number; entry: number | string; content: string };

/**
 * The proposed content of each request page that has one (a `delete` entry has none), with the entry's number in its
 * request (from 1, by id, `delete` entries counted too: as note.json counts them).
 */
export function requestContentsQuery(noteId: number, bounds: ExportBounds): KeysetQuery {
  return {
    // an imported request's page holds its content itself (imported_content), having no fork's version to name
    from: `from (select r.index as request, rp.id as entry_id, rp.page_version_id, rp.imported_content,
                        row_number() over (partition by rp.request_id order by rp.id) as entry
                   from request_pages rp join requests r on r.id = rp.request_id
                  where r.to_note_id = ? and rp.id <= ?) e
      left join page_versions pv on pv.id = e.page_version_id where coalesce(pv.content, e.imported_content) is not null`,
    params: [noteId, bounds.requestPage],
    key: ['e.request', 'e.entry_id'],
    columns: 'e.request, e.entry_id, e.entry, coalesce(pv.content, e.imported_content) as content',
    size: 'octet_length(coalesce(pv.content, e.imported_content))',
  };
}

// ---- attachments

export type AttachmentRow = {
  attachment_id: number; filename: string; content_type: string; byte_size: number; sha256: string;
  author: { username: string; name: string }; created_at: string;
};

export function attachmentsQuery(noteId: number, bounds: ExportBounds): KeysetQuery {
  return {
    from: 'from attachments a join users u on u.id = a.user_id where a.note_id = ? and a.id <= ?',
    params: [noteId, bounds.attachment],
    key: ['a.id'],
    columns: `a.id as attachment_id, a.filename, a.content_type, a.byte_size, a.checksum as sha256, ${authorJson('a', 'u')} as author, ${iso('a.created_at')} as created_at`,
  };
}

/** Each stored file the export carries, once, in checksum order: the note's attachments' and its requests'. */
export async function attachmentChecksums(em: EntityManager, noteId: number, bounds: ExportBounds, after: string | undefined): Promise<string[]> {
  const rows = await em.execute<{ checksum: string }[]>(
    `select checksum from (
       select a.checksum from attachments a where a.note_id = ? and a.id <= ?
       union select a.checksum from request_attachments ra join requests r on r.id = ra.request_id join attachments a on a.id = ra.attachment_id
        where r.to_note_id = ?) c
      where checksum > ? order by checksum limit ${KEYS_PER_BATCH}`,
    [noteId, bounds.attachment, noteId, after ?? ''],
  );
  return rows.map((row) => row.checksum);
}

// ---- the markdown form: the live pages

export type TreeRow = { id: number; parent_id: number | null; position: number; title: string };

/** Every live page's place and title (no content): the tree the markdown form's folders are made from. */
export async function pageTree(em: EntityManager, noteId: number): Promise<TreeRow[]> {
  return em.execute<TreeRow[]>('select id, parent_id, position, title from pages where note_id = ? order by id', [noteId]);
}

export type MarkdownPageRow = { id: number; content: string; author: string | null; updated_at: string };

/** These live pages' contents, with the author of their current version (a fork's copy: of the version it copied). */
export async function markdownPages(em: EntityManager, noteId: number, ids: readonly number[]): Promise<MarkdownPageRow[]> {
  return em.execute<MarkdownPageRow[]>(
    `select p.id, p.content, coalesce(u.username, bu.username) as author, ${iso('p.updated_at')} as updated_at
       from pages p
       left join page_versions v on v.page_id = p.id and v.index = p.version_sequence left join users u on u.id = v.user_id
       left join page_versions b on b.id = p.base_version_id left join users bu on bu.id = b.user_id
      where p.note_id = ? and p.id = any(?::int[])`,
    [noteId, `{${ids.join(',')}}`],
  );
}

/** Each live page's content size in bytes (octet_length: not read), for batches of bounded text. */
export async function pageSizes(em: EntityManager, noteId: number): Promise<Map<number, number>> {
  const rows = await em.execute<{ id: number; bytes: string | number }[]>('select id, octet_length(content) as bytes from pages where note_id = ?', [noteId]);
  return new Map(rows.map((row) => [row.id, Number(row.bytes)]));
}
