// The search itself, as one SQL statement over the n-gram index (design.md, "Search"). Its text depends only on how
// many terms and excluded terms the query has (one prepared statement per shape):
//   1. probe: how many documents have every token of the query: from the column statistics where they settle it
//      (an upper bound under BIG_RESULT, or the one token among the most common), otherwise counted up to
//      BIG_RESULT + 1 (the statistics only choose the branch: both give correct pages);
//   2. candidates: those documents; permissions inside the statement and before any limit (the note is not
//      private, or the caller is in its team); recheck: every term occurs in the normalized title or text (strpos),
//      no excluded term does;
//   3. up to BIG_RESULT documents (the usual case): every match scored (per term 1, +4 in the title, +2 as a whole
//      word), notes scored by their best match, ordered, one page cut, the total exact;
//      more (a word found nearly everywhere): ranking them all would read them all, so the readable notes are
//      walked in the order asked for (`relevance` becomes most recently updated first) and each is asked whether
//      it has a match, until the page is full and one more note is found: the work is bounded by the page, the page
//      is still never short, and the total is a lower bound (one past the page when more exist);
//   4. for the notes of the page: their best (or, for a big result, first) 3 matches with a window of text.
// Only one of the two branches of 3 runs: each is gated by the probe (a one-time filter in the plan).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { DocumentKind } from './search.indexer.ts';
import type { ParsedQuery } from './query.ts';

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

/** `bounded`: more than BIG_RESULT documents matched; `total` is then a lower bound (see above). */
export type SearchHits = { total: number; bounded: boolean; notes: { noteId: number; matches: MatchRow[] }[] };

/** Documents shown per note. */
export const MATCHES_PER_NOTE = 3;
/** Characters of text before the first match in the window sent to the snippet maker, and the window's length. */
const WINDOW_BEFORE = 120;
const WINDOW_LENGTH = 480;

/** Above this many candidate documents, the bounded walk over notes replaces the exact ranking. */
export const BIG_RESULT = 2500;

type Shape = { terms: number; excluded: number };

/** The statement of a shape. Parameters: $1 caller, $2 tokens, $3 kind, $4 note id, $5 order, $6 limit, $7 offset, then the terms, their whole-word tokens, the excluded terms. */
function searchSql({ terms, excluded }: Shape): string {
  const term = (i: number) => `$${8 + i}::text`;
  const word = (i: number) => `$${8 + terms + i}::int`;
  const without = (i: number) => `$${8 + 2 * terms + i}::text`;
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
  const readable = `left join memberships m on m.team_id = n.team_id and m.user_id = $1
     where (not n.is_private or m.user_id is not null) and ($4::int is null or n.id = $4::int)`;
  const noteOrder = (relevance: string) => `
      ${relevance}
      case when $5::text = 'updated_at' then n.updated_at end asc,
      case when $5::text = '-updated_at' then n.updated_at end desc,
      case when $5::text = 'created_at' then n.created_at end asc,
      case when $5::text = '-created_at' then n.created_at end desc,
      case when $5::text = 'title' then lower(n.title) end asc,
      n.updated_at desc, n.id desc`;
  return `
with stats as (
  select c.reltuples, s.most_common_elems::text::int[] as elems, s.most_common_elem_freqs as freqs
    from pg_class c
    left join pg_stats s on s.schemaname = current_schema() and s.tablename = 'search_documents' and s.attname = 'tokens'
   where c.oid = 'search_documents'::regclass
),
estimate as (
  -- from the column statistics (ANALYZE): a token's share of the documents where it is among the most common
  -- ones (known), else at most the least common of them; the rarest token bounds the candidates from above
  select max(st.reltuples) * min(coalesce(f.freq, (select min(x) from unnest(st.freqs[1:cardinality(st.elems)]) x))) as upper,
         count(f.freq) as known
    from stats st
    cross join unnest($2::int[]) t
    left join lateral (
      select x.freq from unnest(st.elems, st.freqs[1:cardinality(st.elems)]) x(e, freq) where x.e = t limit 1
    ) f on true
   where st.elems is not null
),
probe as materialized (
  select case
           when e.upper is not null and $3::text is null and $4::int is null
                and (e.upper <= ${BIG_RESULT} or (cardinality($2::int[]) = 1 and e.known = 1)) then e.upper
           -- no statistics, a narrower search, or no certainty: count the candidates, up to one past the bound
           else (select count(*) from (select 1 from search_documents d where ${matching} limit ${BIG_RESULT + 1}) x)
         end as found
    from estimate e
),
hits as (
  select d.kind, d.object_id, d.note_id, ${score} as score
    from search_documents d join notes n on n.id = d.note_id
    ${readable}
     and (select found from probe) <= ${BIG_RESULT}
     and ${matching}
     and ${recheck}
),
ranked as (
  select h.*, row_number() over (partition by h.note_id order by h.score desc, h.kind, h.object_id) as place from hits h
),
noted as (
  select r.note_id, max(r.score) as score from ranked r group by r.note_id
),
listed as (
  select x.note_id, row_number() over (order by ${noteOrder("case when $5::text = 'relevance' then x.score end desc nulls last,")}) as position
    from noted x join notes n on n.id = x.note_id
),
exact as (
  select l.note_id, l.position, r.place, r.kind, r.object_id
    from (select note_id, position from listed order by position limit $6 offset $7) l
    join ranked r on r.note_id = l.note_id and r.place <= ${MATCHES_PER_NOTE}
),
walked as (
  select o.id as note_id, o.position
    from (select n.id, row_number() over (order by ${noteOrder('')}) as position
            from notes n
            ${readable}
             and (select found from probe) > ${BIG_RESULT}
           order by position offset 0) o
   -- one note at a time, in order, stopping at its first match and at the page's end (a lateral limit: never a
   -- join over every candidate)
   cross join lateral (select 1 from search_documents d where d.note_id = o.id and ${inNote} and ${recheck} limit 1) hit
   order by o.position
   limit $6 + 1 offset $7
),
bounded as (
  select w.note_id, w.position, f.place, f.kind, f.object_id
    from (select * from walked order by position limit $6) w
    cross join lateral (
      select d.kind, d.object_id, row_number() over () as place
        from (select d.kind, d.object_id from search_documents d
               where d.note_id = w.note_id and ${inNote} and ${recheck} limit ${MATCHES_PER_NOTE}) d
    ) f
),
shown as (
  select * from exact union all select * from bounded
),
located as (
  select s.position, s.place, s.note_id, d.kind, d.object_id, d.title, d.body, d.page_id, d.issue_id,
         least(${range(terms).map((i) => `coalesce(nullif(strpos(d.norm_body, ${term(i)}), 0), 2147483647)`).join(', ')}) as at
    from shown s join search_documents d on d.kind = s.kind and d.object_id = s.object_id
),
counted as (
  select case when (select found from probe) <= ${BIG_RESULT} then (select count(*) from noted)
              else $7 + (select count(*) from walked) end as total,
         (select found from probe) > ${BIG_RESULT} as bounded
)
select k.total, k.bounded, o.note_id, o.kind, o.object_id, o.title,
       substr(o.body, greatest(1, coalesce(nullif(o.at, 2147483647), 1) - ${WINDOW_BEFORE}), ${WINDOW_LENGTH}) as "window",
       greatest(1, coalesce(nullif(o.at, 2147483647), 1) - ${WINDOW_BEFORE}) > 1 as cut_before,
       char_length(o.body) >= greatest(1, coalesce(nullif(o.at, 2147483647), 1) - ${WINDOW_BEFORE}) + ${WINDOW_LENGTH} as cut_after,
       coalesce(o.page_id, c.page_id) as page_id, i.index as issue_index, c.type as comment_on
  from counted k
  left join located o on true
  left join comments c on o.kind = 'comment' and c.id = o.object_id
  left join issues i on i.id = coalesce(o.issue_id, c.issue_id)
 order by o.position, o.place`;
}

/**
 * Runs the statement unprepared, so it is planned for its values every time: a generic plan cannot know how common
 * the tokens are, and the two branches want different plans. Logged like every ORM query (tests count them).
 */
async function unnamedQuery<Row>(em: EntityManager, label: string, text: string, values: readonly unknown[]): Promise<Row[]> {
  const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
  em.config.getLogger().logQuery({ query: `/* ${label} */ ${text}`, params: values, level: 'info' });
  const result = await pool.query({ text, values: values as unknown[] });
  return result.rows as Row[];
}

const statements = new Map<string, string>();

function statementFor(shape: Shape): { name: string; text: string } {
  const name = `search_ngram_${shape.terms}_${shape.excluded}`;
  let text = statements.get(name);
  if (text === undefined) {
    text = searchSql(shape);
    statements.set(name, text);
  }
  return { name, text };
}

type Row = {
  total: string | number;
  bounded: boolean;
  note_id: number | null;
  kind: DocumentKind;
  object_id: number;
  title: string;
  window: string;
  cut_before: boolean;
  cut_after: boolean;
  page_id: number | null;
  issue_index: number | null;
  comment_on: 'note' | 'page' | 'issue' | null;
};

/** One page of the notes matching the query that the caller may read, with their best matches; one statement. */
export async function searchIndex(em: EntityManager, callerId: number, request: SearchRequest): Promise<SearchHits> {
  const { query } = request;
  const { name, text } = statementFor({ terms: query.terms.length, excluded: query.excluded.length });
  const rows = await unnamedQuery<Row>(em, name, text, [
    callerId,
    `{${query.tokens.join(',')}}`,
    request.kind ?? null,
    request.noteId ?? null,
    request.order,
    request.limit,
    request.offset,
    ...query.terms,
    ...query.wordTokens,
    ...query.excluded,
  ]);
  const notes: SearchHits['notes'] = [];
  for (const row of rows) {
    if (row.note_id === null) continue;
    let entry = notes[notes.length - 1];
    if (!entry || entry.noteId !== row.note_id) {
      entry = { noteId: row.note_id, matches: [] };
      notes.push(entry);
    }
    entry.matches.push({
      kind: row.kind,
      objectId: row.object_id,
      title: row.title,
      window: row.window,
      cutBefore: row.cut_before,
      cutAfter: row.cut_after,
      pageId: row.page_id,
      issueIndex: row.issue_index,
      commentOn: row.comment_on,
    });
  }
  return { total: Number(rows[0]?.total ?? 0), bounded: rows[0]?.bounded === true, notes };
}
