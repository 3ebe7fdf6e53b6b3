// The search module's SQL: the n-gram index's documents and its rebuild (search.indexer.ts), the token statistics
// (search.stats.ts) and the search statement of each shape, branch and order (search.query.ts, whose comment walks
// through it).
//
// Placeholders: `?` for em.execute, as everywhere. The one exception: the statistics' prepared statement and the
// search's unprepared one go to node-postgres directly (db/rows.ts, `preparedQuery`, and `unnamedQuery` below),
// which only takes `$1`.
import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';
import { aliasedColumns, preparedQuery } from '../../db/rows.ts';
import { Note } from '../notes/note.entity.ts';
import { Team } from '../teams/team.entity.ts';

export type DocumentKind = 'note' | 'page' | 'issue' | 'comment';

export type SearchOrder = 'relevance' | 'updated_at' | '-updated_at' | 'created_at' | '-created_at' | 'title';

/** `ranked`: every candidate scored (at most BIG_RESULT of them); `walked`: the notes in order, asked one at a time. */
export type Branch = 'ranked' | 'walked';

/** Documents shown per note. */
export const MATCHES_PER_NOTE = 3;
/** Characters of text before the first match in the window sent to the snippet maker, and the window's length. */
const WINDOW_BEFORE = 120;
export const WINDOW_LENGTH = 480;

/** Above this many candidate documents, the bounded walk over notes replaces the exact ranking. */
export const BIG_RESULT = 2500;

// --- the documents (search.indexer.ts) ---

/** One document as stored: its text, the text normalized for matching, and its tokens. */
export type DocumentRow = {
  kind: DocumentKind;
  objectId: number;
  noteId: number;
  title: string;
  body: string;
  normTitle: string;
  normBody: string;
  tokens: readonly number[];
};

/**
 * Writes (or replaces) the documents in one statement. The values go into the statement's text one by one (the ORM
 * writes every value into the SQL text): a 1 MiB page's body, normalized body and tokens are each copied once into
 * the statement, not wrapped in JSON that is then escaped again.
 */
export async function upsertDocuments(em: EntityManager, documents: readonly DocumentRow[]): Promise<void> {
  if (documents.length === 0) return;
  const values: unknown[] = [];
  for (const d of documents) values.push(d.kind, d.objectId, d.noteId, d.title, d.body, d.normTitle, d.normBody, `{${d.tokens.join(',')}}`);
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

/** The ids of every page of the notes: a fork, a pull or a merge touches them all without naming them. */
export async function pageIdsOfNotes(em: EntityManager, noteIds: Iterable<number>): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>('select id from pages where note_id = any(?::int[])', [`{${[...noteIds].join(',')}}`]);
  return rows.map((row) => row.id);
}

/** The ids of every page, issue or comment of the notes (a note just created: an import, search.projection.ts). */
export async function idsOfNotes(em: EntityManager, kind: 'page' | 'issue' | 'comment', noteIds: Iterable<number>): Promise<number[]> {
  const table = { page: 'pages', issue: 'issues', comment: 'comments' }[kind];
  const rows = await em.execute<{ id: number }[]>(`select id from ${table} where note_id = any(?::int[])`, [`{${[...noteIds].join(',')}}`]);
  return rows.map((row) => row.id);
}

/** What a document is made from: its object's id, note, title and text (markup not yet removed). */
export type SourceRow = { id: number; note_id: number; title: string; text: string };

/** What a document of each kind is made from: its source row's columns and table. */
const SOURCE: Record<DocumentKind, string> = {
  note: 'select id, id as note_id, title, description as text from notes',
  page: 'select id, note_id, title, content as text from pages',
  issue: 'select id, note_id, title, description as text from issues',
  comment: `select id, note_id, '' as title, body as text from comments`,
};

/** The source rows of the objects of one kind with the given ids, to write their documents again after a change. */
export async function sourceRowsByIds(em: EntityManager, kind: DocumentKind, ids: readonly number[]): Promise<SourceRow[]> {
  return em.execute<SourceRow[]>(`${SOURCE[kind]} where id = any(?::int[])`, [`{${ids.join(',')}}`]);
}

/** The next `limit` source rows of one kind after `afterId`, in id order: a rebuild reads the tables in keyset pages. */
export async function sourceRowsAfter(em: EntityManager, kind: DocumentKind, afterId: number, limit: number): Promise<SourceRow[]> {
  return em.execute<SourceRow[]>(`${SOURCE[kind]} where id > ? order by id limit ?`, [afterId, limit]);
}

/**
 * Empties the index for a rebuild inside the caller's transaction: the table locked against searches and writes
 * until it commits, and the GIN index dropped (built once at the end, many times faster than row by row).
 */
export async function emptyIndexForRebuild(tx: EntityManager): Promise<void> {
  await tx.execute('lock table search_documents in access exclusive mode');
  await tx.execute('drop index search_documents_tokens_index');
  await tx.execute('truncate search_documents');
}

/** Builds the GIN index again at the end of a rebuild, as migration 0008 creates it. */
export async function buildTokensIndex(tx: EntityManager): Promise<void> {
  // the GIN build sorts in maintenance_work_mem: more than the embedded database's 16 MB default, for this once
  await tx.execute(`set local maintenance_work_mem = '64MB'`);
  await tx.execute('create index search_documents_tokens_index on search_documents using gin (tokens)');
}

/** Refreshes the column statistics after a rebuild: search.stats.ts reads the tokens' shares from them. */
export async function analyzeDocuments(em: EntityManager): Promise<void> {
  await em.execute('analyze search_documents');
}

/** Whether the index is empty while there is something to index (a database from before migration 0008): one cheap query at start-up. */
export async function indexEmptyWithNotes(em: EntityManager): Promise<boolean> {
  const [state] = await em.execute<{ empty: boolean }[]>(
    'select not exists (select 1 from search_documents) and exists (select 1 from notes) as empty',
  );
  return state?.empty === true;
}

// --- the token statistics (search.stats.ts) ---

/** Marks the statement that reads them (the tests' statement counts leave it out: when it runs depends on the clock). */
export const STATS_STATEMENT_MARK = '/* search statistics */';

/** The index's size and its most common tokens with their shares, as ANALYZE left them (null before the first). */
export type TokenStatsRow = { documents: number; elems: number[] | null; freqs: number[] | null };

/** The planner's statistics of `search_documents.tokens`, read now and then so a search need not unpack pg_stats itself. */
export async function readTokenStats(em: EntityManager): Promise<TokenStatsRow | undefined> {
  const rows = await preparedQuery<TokenStatsRow>(
    em,
    'search_statistics',
    `${STATS_STATEMENT_MARK} select c.reltuples::float8 as documents, s.most_common_elems::text::int[] as elems,
            s.most_common_elem_freqs::float8[] as freqs
       from pg_class c
       left join pg_stats s on s.schemaname = current_schema() and s.tablename = 'search_documents' and s.attname = 'tokens'
      where c.oid = 'search_documents'::regclass`,
    [],
  );
  return rows[0];
}

// --- the search (search.query.ts) ---

type Shape = { terms: number; excluded: number };

/**
 * The statement of a shape, branch and order. Parameters: $1 caller, $2 tokens, $3 kind, $4 note id, $5 the page size
 * asked for, $6 the page (1-based), $7 the text a page of results may carry (LIMIT_LIST_TEXT_BYTES), then (ranked only)
 * $8 whether to count the candidates first, then the terms, (ranked only) their whole-word tokens, the excluded terms.
 *
 * The page size: each listed note is sent with its description (up to 64K characters, 256 KiB as UTF-8), so a page
 * of results holds at most as many notes as the widest description of the whole result fits in $7 times, and never
 * more than $5 (`sized`, answered as `per_page`). It is one size for every page of the result, so the pages are still
 * cut by offset and the Link headers, which carry it, lead through all of them with none skipped. The walked branch
 * takes the widest description of every note the caller may read (it does not know its whole result): the sizes are
 * read from the values' headers, not from the texts.
 */
function searchSql({ terms, excluded }: Shape, branch: Branch, order: SearchOrder, noteColumns: string): string {
  const first = branch === 'ranked' ? 9 : 8;
  const term = (i: number) => `$${first + i}::text`;
  const word = (i: number) => `$${first + terms + i}::int`;
  // whole-word tokens rank (the ranked branch only: the walk does not score)
  const without = (i: number) => `$${first + (branch === 'ranked' ? 2 : 1) * terms + i}::text`;
  const range = (count: number) => Array.from({ length: count }, (_, i) => i);
  const recheck = [
    ...range(terms).map((i) => `(strpos(d.norm_title, ${term(i)}) > 0 or strpos(d.norm_body, ${term(i)}) > 0)`),
    ...range(excluded).map((i) => `strpos(d.norm_title, ${without(i)}) = 0 and strpos(d.norm_body, ${without(i)}) = 0`),
  ].join('\n     and ');
  const score = range(terms)
    .map((i) => `(case when strpos(d.norm_title, ${term(i)}) > 0 then 5 else 1 end + case when ${word(i)} <> 0 and ${word(i)} = any(d.tokens) then 2 else 0 end)`)
    .join(' + ');
  const matching = `d.tokens @> $2::int[] and ($3::text is null or d.kind = $3::text) and ($4::int is null or d.note_id = $4::int)`;
  // inside one note: its documents by the note_id index, first match first; the tokens test is wrapped so the
  // planner cannot turn it into a GIN lookup of every candidate once per note
  const inNote = `coalesce(d.tokens, '{}') @> $2::int[] and ($3::text is null or d.kind = $3::text)`;
  // the notes the caller may read (a public note, or one of a team the caller is in), narrowed to $4
  const readable = `where (not n.is_private or exists (select 1 from memberships m where m.team_id = n.team_id and m.user_id = $1))
             and ($4::int is null or n.id = $4::int)`;
  // the order of notes in plain columns (one statement text per order), not expressions of a parameter
  const primary: Record<SearchOrder, string> = {
    relevance: branch === 'ranked' ? 'x.score desc, ' : '',
    updated_at: 'n.updated_at asc, ',
    '-updated_at': '',
    created_at: 'n.created_at asc, ',
    '-created_at': 'n.created_at desc, ',
    title: 'lower(n.title) asc, ',
  };
  const noteOrder = `${primary[order]}n.updated_at desc, n.id desc`;
  const perPage = (widest: string) => `least($5::int, greatest(1, $7::bigint / greatest(1, coalesce(max(${widest}), 0))))::int`;
  const offset = '(select per from sized)::bigint * ($6::bigint - 1)';
  // a matched document's window of text: from WINDOW_BEFORE characters before the first match (or the start), one
  // character more than WINDOW_LENGTH, which says whether the text goes on (cheaper than the length of the text)
  const start = `(select case when f.at = 0 then 1 else greatest(1, f.at - ${WINDOW_BEFORE}) end
            from (select least(${range(terms).map((i) => `coalesce(nullif(strpos(d.norm_body, ${term(i)}), 0), 2147483647)`).join(', ')}) % 2147483647 as at) f)`;
  const shownColumns = `d.kind, d.object_id, d.title, d.page_id, d.issue_id, w.start, substr(d.body, w.start, ${WINDOW_LENGTH + 1}) as "window"`;
  const shownAndCounted = branch === 'ranked'
    ? `probe as materialized (
  -- $8: the statistics could not settle that there are few candidates (search.stats.ts): count them, up to one past
  -- the bound; past it, nothing more is done here (the caller walks instead)
  select case when $8::boolean
              then (select count(*) from (select 1 from search_documents d where ${matching} limit ${BIG_RESULT + 1}) x)
              else 0 end as found
),
hits as (
  -- the candidates on their own first (a fence: planned alone, they come from the GIN index, never from a walk of
  -- another index that a join would prefer), then the notes they are in, for the permissions
  select c.kind, c.object_id, c.note_id, c.score
    from (select d.kind, d.object_id, d.note_id, ${score} as score
            from search_documents d
           where (select found from probe) <= ${BIG_RESULT}
             and ${matching}
             and ${recheck}
          offset 0) c
    join notes n on n.id = c.note_id
    ${readable}
     and (select found from probe) <= ${BIG_RESULT}
),
ranked as (
  select h.*, row_number() over (partition by h.note_id order by h.score desc, h.kind, h.object_id) as place from hits h
),
noted as (
  select r.note_id, max(r.score) as score from ranked r group by r.note_id
),
listed as (
  select x.note_id, row_number() over (order by ${noteOrder}) as position
    from noted x join notes n on n.id = x.note_id
),
sized as (
  select ${perPage('octet_length(n.description)')} as per from noted x join notes n on n.id = x.note_id
),
shown as (
  select l.note_id, l.position, r.place, r.kind, r.object_id
    from (select note_id, position from listed order by position limit (select per from sized) offset ${offset}) l
    join ranked r on r.note_id = l.note_id and r.place <= ${MATCHES_PER_NOTE}
),
located as (
  select s.position, s.place, s.note_id, ${shownColumns}
    from shown s join search_documents d on d.kind = s.kind and d.object_id = s.object_id
    cross join lateral (select ${start} as start) w
),
counted as (
  select (select count(*) from noted) as total, (select found from probe) > ${BIG_RESULT} as bounded,
         (select per from sized) as per_page
)`
    : `sized as (
  select ${perPage('octet_length(n.description)')} as per from notes n ${readable}
),
walked as (
  select o.id as note_id, o.position, f.kinds, f.ids, f.titles, f.pages, f.issues, f.starts, f.windows
    from (select n.id, row_number() over (order by ${noteOrder}) as position
            from notes n
           ${readable}
           order by position offset 0) o
   -- one note at a time, in order, taking its first matches with what is shown of them (a lateral limit: never a
   -- join over every candidate), until the page is full and one more note with a match is found
   cross join lateral (
     select array_agg(x.kind) as kinds, array_agg(x.object_id) as ids, array_agg(x.title) as titles,
            array_agg(x.page_id) as pages, array_agg(x.issue_id) as issues, array_agg(x.start) as starts,
            array_agg(x."window") as windows
       from (select ${shownColumns}
               from search_documents d
               cross join lateral (select ${start} as start) w
              where d.note_id = o.id and ${inNote} and ${recheck} limit ${MATCHES_PER_NOTE}) x
   ) f
   where f.ids is not null
   order by o.position
   limit (select per from sized) + 1 offset ${offset}
),
located as (
  select w.position, m.place, w.note_id, m.kind, m.object_id, m.title, m.page_id, m.issue_id, m.start, m."window"
    from (select * from walked order by position limit (select per from sized)) w
    cross join lateral unnest(w.kinds, w.ids, w.titles, w.pages, w.issues, w.starts, w.windows)
      with ordinality as m(kind, object_id, title, page_id, issue_id, start, "window", place)
),
counted as (
  select ${offset} + (select count(*) from walked) as total, true as bounded, (select per from sized) as per_page
)`;
  return `
with ${shownAndCounted}
select k.total, k.bounded, k.per_page, o.note_id, o.kind, o.object_id, o.title,
       o."window", o.start > 1 as cut_before,
       coalesce(o.page_id, c.page_id) as page_id, i.index as issue_index, rq.index as request_index, c.type as comment_on,
       ${noteColumns}
  from counted k
  left join located o on true
  -- the note and its team, once per note (on its first match), for the caller to present without another statement
  left join notes n on o.place = 1 and n.id = o.note_id
  left join teams t on t.id = n.team_id
  left join comments c on o.kind = 'comment' and c.id = o.object_id
  left join issues i on i.id = coalesce(o.issue_id, c.issue_id)
  left join requests rq on rq.id = c.request_id
 order by o.position, o.place`;
}

/**
 * Runs a statement unprepared, so it is planned for its values every time: a generic plan cannot know how common the
 * tokens are (the ranked branch wants the GIN index for a rare word, and its sizes shape the joins). Logged like every
 * ORM query (tests count them).
 */
async function unnamedQuery<Row>(em: EntityManager, label: string, text: string, values: readonly unknown[]): Promise<Row[]> {
  const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
  em.config.getLogger().logQuery({ query: `/* ${label} */ ${text}`, params: values, level: 'info' });
  const result = await pool.query({ text, values: values as unknown[] });
  return result.rows as Row[];
}

const statements = new Map<string, string>();

function statementFor(em: EntityManager, shape: Shape, branch: Branch, order: SearchOrder): { name: string; text: string } {
  const name = `search_${branch}_${order}_${shape.terms}_${shape.excluded}`;
  let text = statements.get(name);
  if (text === undefined) {
    text = searchSql(shape, branch, order, `${aliasedColumns(em, Team, 't')}, ${aliasedColumns(em, Note, 'n')}`);
    statements.set(name, text);
  }
  return { name, text };
}

/** One row of the search statement: a matched document of a listed note (or, with none, only the total). */
export type SearchRow = Record<string, unknown> & {
  total: string | number;
  bounded: boolean;
  /** How many notes a page of this result holds (the statement's `sized`). */
  per_page: number;
  note_id: number | null;
  kind: DocumentKind;
  object_id: number;
  title: string;
  window: string;
  cut_before: boolean;
  page_id: number | null;
  issue_index: number | null;
  request_index: number | null;
  comment_on: 'note' | 'page' | 'issue' | 'request' | null;
};

/** What a search statement is asked: the caller, the query's tokens and terms, the narrowing and the page. */
export type SearchParameters = {
  callerId: number;
  tokens: readonly number[];
  kind: DocumentKind | null;
  noteId: number | null;
  /** The page size asked for, the page (1-based), and the text one page of results may carry. */
  perPage: number;
  page: number;
  textBytes: number;
  terms: readonly string[];
  /** Per term, its whole-word token (0: none), which ranks higher. */
  wordTokens: readonly number[];
  excluded: readonly string[];
};

const common = (p: SearchParameters) => [p.callerId, `{${p.tokens.join(',')}}`, p.kind, p.noteId, p.perPage, p.page, p.textBytes];
const shapeOf = (p: SearchParameters): Shape => ({ terms: p.terms.length, excluded: p.excluded.length });

/**
 * The ranked branch, for a search with up to BIG_RESULT candidates: every one scored, the total exact. `countFirst`:
 * the statistics could not settle that there are few, so the statement counts them first and answers only the count
 * (`bounded`) when there are more.
 */
export async function rankedSearch(em: EntityManager, order: SearchOrder, p: SearchParameters, countFirst: boolean): Promise<SearchRow[]> {
  const { name, text } = statementFor(em, shapeOf(p), 'ranked', order);
  return unnamedQuery<SearchRow>(em, name, text, [...common(p), countFirst, ...p.terms, ...p.wordTokens, ...p.excluded]);
}

/** The walked branch, for a word found nearly everywhere: the readable notes in order until the page is full. */
export async function walkedSearch(em: EntityManager, order: SearchOrder, p: SearchParameters): Promise<SearchRow[]> {
  const { name, text } = statementFor(em, shapeOf(p), 'walked', order);
  return unnamedQuery<SearchRow>(em, name, text, [...common(p), ...p.terms, ...p.excluded]);
}
