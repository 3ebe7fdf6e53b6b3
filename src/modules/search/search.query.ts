// The search itself, over the n-gram index (design.md, "Search"): one SQL statement per branch, whose text depends on
// the branch, the order asked for and how many terms and excluded terms the query has:
//   1. how many documents have every token of the query: settled from the column statistics where they can tell
//      (search.stats.ts: `few` or `many`), otherwise counted up to BIG_RESULT + 1 at the start of the ranked
//      statement (the statistics only choose the branch: both give correct pages);
//   2. ranked, up to BIG_RESULT candidates (the usual case): the candidates from the GIN index, permissions inside
//      the statement and before any limit (the note is not private, or the caller is in its team), the recheck
//      (every term occurs in the normalized title or text, no excluded term does), every match scored (per term 1,
//      +4 in the title, +2 as a whole word), notes scored by their best match, ordered, one page cut, the total exact;
//   3. walked, more (a word found nearly everywhere): ranking them all would read them all, so the readable notes
//      are taken in the order asked for (`relevance` becomes most recently updated first) and each is asked for its
//      first matches, until the page is full and one more note is found: the work is bounded by the page, the page
//      is still never short, and the total is a lower bound (one past the page when more exist);
//   4. for the notes of the page: their best (or, walked, first) 3 matches with a window of text, and each note
//      with its team (on its first match's row), so the caller presents them without another statement.
// When the count of 1 finds more than BIG_RESULT, the ranked statement answers nothing and the walk runs after it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { DocumentKind } from './search.indexer.ts';
import { aliasedColumns, mapAliased } from '../../db/rows.ts';
import { Note } from '../notes/note.entity.ts';
import { Team } from '../teams/team.entity.ts';
import type { ParsedQuery } from './query.ts';
import { candidates } from './search.stats.ts';
import type { Logger } from '../../http/logger.ts';

export type SearchOrder = 'relevance' | 'updated_at' | '-updated_at' | 'created_at' | '-created_at' | 'title';

export type SearchRequest = {
  query: ParsedQuery;
  kind: DocumentKind | undefined;
  noteId: number | undefined;
  order: SearchOrder;
  limit: number;
  offset: number;
};

/** One matched document of a listed note. */
export type MatchRow = {
  kind: DocumentKind;
  objectId: number;
  title: string;
  /** Plain text around the first match (or the start of the text), and whether the text goes on either side. */
  window: string;
  cutBefore: boolean;
  cutAfter: boolean;
  /** Where the match is: the page (a page, or a comment on one), the issue (an issue, or a comment on one). */
  pageId: number | null;
  issueIndex: number | null;
  /** What a comment is on. */
  commentOn: 'note' | 'page' | 'issue' | null;
};

/**
 * `bounded`: more than BIG_RESULT documents matched; `total` is then a lower bound (see above). `note`: the note with
 * its team, where the search loaded them (this one does; the caller loads any it leaves out).
 */
export type SearchHits = { total: number; bounded: boolean; notes: { noteId: number; note?: Note | undefined; matches: MatchRow[] }[] };

/** Documents shown per note. */
export const MATCHES_PER_NOTE = 3;
/** Characters of text before the first match in the window sent to the snippet maker, and the window's length. */
const WINDOW_BEFORE = 120;
const WINDOW_LENGTH = 480;

/** Above this many candidate documents, the bounded walk over notes replaces the exact ranking. */
export const BIG_RESULT = 2500;

type Shape = { terms: number; excluded: number };
/** `ranked`: every candidate scored (at most BIG_RESULT of them); `walked`: the notes in order, asked one at a time. */
export type Branch = 'ranked' | 'walked';

/**
 * The statement of a shape, branch and order. Parameters: $1 caller, $2 tokens, $3 kind, $4 note id, $5 limit, $6 offset,
 * then (ranked only) $7 whether to count the candidates first, then the terms, (ranked only) their
 * whole-word tokens, the excluded terms.
 */
function searchSql({ terms, excluded }: Shape, branch: Branch, order: SearchOrder, noteColumns: string): string {
  const first = branch === 'ranked' ? 8 : 7;
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
  // a matched document's window of text: from WINDOW_BEFORE characters before the first match (or the start), one
  // character more than WINDOW_LENGTH, which says whether the text goes on (cheaper than the length of the text)
  const start = `(select case when f.at = 0 then 1 else greatest(1, f.at - ${WINDOW_BEFORE}) end
            from (select least(${range(terms).map((i) => `coalesce(nullif(strpos(d.norm_body, ${term(i)}), 0), 2147483647)`).join(', ')}) % 2147483647 as at) f)`;
  const shownColumns = `d.kind, d.object_id, d.title, d.page_id, d.issue_id, w.start, substr(d.body, w.start, ${WINDOW_LENGTH + 1}) as "window"`;
  const shownAndCounted = branch === 'ranked'
    ? `probe as materialized (
  -- $7: the statistics could not settle that there are few candidates (search.stats.ts): count them, up to one past
  -- the bound; past it, nothing more is done here (the caller walks instead)
  select case when $7::boolean
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
shown as (
  select l.note_id, l.position, r.place, r.kind, r.object_id
    from (select note_id, position from listed order by position limit $5 offset $6) l
    join ranked r on r.note_id = l.note_id and r.place <= ${MATCHES_PER_NOTE}
),
located as (
  select s.position, s.place, s.note_id, ${shownColumns}
    from shown s join search_documents d on d.kind = s.kind and d.object_id = s.object_id
    cross join lateral (select ${start} as start) w
),
counted as (
  select (select count(*) from noted) as total, (select found from probe) > ${BIG_RESULT} as bounded
)`
    : `walked as (
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
   limit $5 + 1 offset $6
),
located as (
  select w.position, m.place, w.note_id, m.kind, m.object_id, m.title, m.page_id, m.issue_id, m.start, m."window"
    from (select * from walked order by position limit $5) w
    cross join lateral unnest(w.kinds, w.ids, w.titles, w.pages, w.issues, w.starts, w.windows)
      with ordinality as m(kind, object_id, title, page_id, issue_id, start, "window", place)
),
counted as (
  select $6 + (select count(*) from walked) as total, true as bounded
)`;
  return `
with ${shownAndCounted}
select k.total, k.bounded, o.note_id, o.kind, o.object_id, o.title,
       o."window", o.start > 1 as cut_before,
       coalesce(o.page_id, c.page_id) as page_id, i.index as issue_index, c.type as comment_on,
       ${noteColumns}
  from counted k
  left join located o on true
  -- the note and its team, once per note (on its first match), for the caller to present without another statement
  left join notes n on o.place = 1 and n.id = o.note_id
  left join teams t on t.id = n.team_id
  left join comments c on o.kind = 'comment' and c.id = o.object_id
  left join issues i on i.id = coalesce(o.issue_id, c.issue_id)
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

type Row = Record<string, unknown> & {
  total: string | number;
  bounded: boolean;
  note_id: number | null;
  kind: DocumentKind;
  object_id: number;
  title: string;
  window: string;
  cut_before: boolean;
  page_id: number | null;
  issue_index: number | null;
  comment_on: 'note' | 'page' | 'issue' | null;
};

/** The window as sent (one character more than WINDOW_LENGTH when the text goes on), cut to its length. */
function windowOf(text: string): { window: string; cutAfter: boolean } {
  if (text.length <= WINDOW_LENGTH) return { window: text, cutAfter: false }; // UTF-16 units >= characters
  const characters = [...text];
  if (characters.length <= WINDOW_LENGTH) return { window: text, cutAfter: false };
  return { window: characters.slice(0, WINDOW_LENGTH).join(''), cutAfter: true };
}

/**
 * One page of the notes matching the query that the caller may read, with their best matches: one statement, or two
 * where a count finds more candidates than the ranked branch takes (the first answers nothing then).
 */
export async function searchIndex(em: EntityManager, callerId: number, request: SearchRequest, log: Logger): Promise<SearchHits> {
  const { query } = request;
  const shape = { terms: query.terms.length, excluded: query.excluded.length };
  const common = [callerId, `{${query.tokens.join(',')}}`, request.kind ?? null, request.noteId ?? null, request.limit, request.offset];
  // the statistics speak for the whole table: a search narrowed to a kind or a note counts its candidates
  const settled = request.kind === undefined && request.noteId === undefined ? await candidates(em, log, query.tokens, BIG_RESULT) : 'count';
  let rows: Row[] | undefined;
  if (settled !== 'many') {
    const ranked = statementFor(em, shape, 'ranked', request.order);
    rows = await unnamedQuery<Row>(em, ranked.name, ranked.text, [...common, settled === 'count', ...query.terms, ...query.wordTokens, ...query.excluded]);
    if (rows[0]?.bounded === true) rows = undefined; // counted past the bound: walk
  }
  if (rows === undefined) {
    const walked = statementFor(em, shape, 'walked', request.order);
    rows = await unnamedQuery<Row>(em, walked.name, walked.text, [...common, ...query.terms, ...query.excluded]);
  }
  const notes: SearchHits['notes'] = [];
  for (const row of rows) {
    if (row.note_id === null) continue;
    let entry = notes[notes.length - 1];
    if (!entry || entry.noteId !== row.note_id) {
      mapAliased(em, Team, row, 't');
      entry = { noteId: row.note_id, note: mapAliased(em, Note, row, 'n'), matches: [] };
      notes.push(entry);
    }
    entry.matches.push({
      kind: row.kind,
      objectId: row.object_id,
      title: row.title,
      ...windowOf(row.window),
      cutBefore: row.cut_before,
      pageId: row.page_id,
      issueIndex: row.issue_index,
      commentOn: row.comment_on,
    });
  }
  return { total: Number(rows[0]?.total ?? 0), bounded: rows[0]?.bounded === true, notes };
}
