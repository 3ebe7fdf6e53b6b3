// The search itself, as one SQL statement over the n-gram index (design.md, "Search"):
//   1. candidates: documents whose tokens contain every token of the query (GIN index on `tokens`);
//   2. permissions, inside the query and before any limit: the note is not private, or the caller is in its team;
//   3. recheck: every term occurs in the normalized title or text (strpos), no excluded term does;
//   4. score per document: per term 1, +4 when it is in the title, +2 when it occurs as a whole word;
//   5. notes: grouped, scored by their best document, ordered, one page cut (limit/offset) with the total;
//   6. for the notes of the page: their 3 best documents with a window of text around the first match.
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedQuery } from '../../db/rows.ts';
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

export type SearchHits = { total: number; notes: { noteId: number; matches: MatchRow[] }[] };

/** Documents shown per note. */
export const MATCHES_PER_NOTE = 3;
/** Characters of text before the first match in the window sent to the snippet maker, and the window's length. */
const WINDOW_BEFORE = 120;
const WINDOW_LENGTH = 480;

const SEARCH_SQL = `
with hits as (
  select d.kind, d.object_id, d.note_id,
         (select sum(1 + case when strpos(d.norm_title, t.term) > 0 then 4 else 0 end
                       + case when t.word <> 0 and t.word = any(d.tokens) then 2 else 0 end)
            from unnest($3::text[], $4::int[]) as t(term, word)) as score
    from search_documents d
    join notes n on n.id = d.note_id
    left join memberships m on m.team_id = n.team_id and m.user_id = $1
   where d.tokens @> $2::int[]
     and (not n.is_private or m.user_id is not null)
     and ($6::text is null or d.kind = $6::text)
     and ($7::int is null or d.note_id = $7::int)
     and not exists (select 1 from unnest($3::text[]) t where strpos(d.norm_title, t) = 0 and strpos(d.norm_body, t) = 0)
     and not exists (select 1 from unnest($5::text[]) t where strpos(d.norm_title, t) > 0 or strpos(d.norm_body, t) > 0)
),
ranked as (
  select h.*, row_number() over (partition by h.note_id order by h.score desc, h.kind, h.object_id) as place from hits h
),
noted as (
  select r.note_id, max(r.score) as score from ranked r group by r.note_id
),
listed as (
  select x.note_id,
         row_number() over (order by
           case when $8::text = 'relevance' then x.score end desc nulls last,
           case when $8::text = 'updated_at' then n.updated_at end asc,
           case when $8::text = '-updated_at' then n.updated_at end desc,
           case when $8::text = 'created_at' then n.created_at end asc,
           case when $8::text = '-created_at' then n.created_at end desc,
           case when $8::text = 'title' then lower(n.title) end asc,
           n.updated_at desc, n.id desc) as position
    from noted x join notes n on n.id = x.note_id
),
shown as (
  select l.note_id, l.position from listed l order by l.position limit $9 offset $10
),
located as (
  select s.position, r.place, r.note_id, d.kind, d.object_id, d.title, d.body, d.page_id, d.issue_id,
         (select min(p) from (select strpos(d.norm_body, t) as p from unnest($3::text[]) t) found where p > 0) as at
    from shown s
    join ranked r on r.note_id = s.note_id and r.place <= ${MATCHES_PER_NOTE}
    join search_documents d on d.kind = r.kind and d.object_id = r.object_id
)
select k.total, o.note_id, o.kind, o.object_id, o.title,
       substr(o.body, greatest(1, coalesce(o.at, 1) - ${WINDOW_BEFORE}), ${WINDOW_LENGTH}) as "window",
       greatest(1, coalesce(o.at, 1) - ${WINDOW_BEFORE}) > 1 as cut_before,
       char_length(o.body) >= greatest(1, coalesce(o.at, 1) - ${WINDOW_BEFORE}) + ${WINDOW_LENGTH} as cut_after,
       coalesce(o.page_id, c.page_id) as page_id, i.index as issue_index, c.type as comment_on
  from (select count(*) as total from noted) k
  left join located o on true
  left join comments c on o.kind = 'comment' and c.id = o.object_id
  left join issues i on i.id = coalesce(o.issue_id, c.issue_id)
 order by o.position, o.place`;

type Row = {
  total: string | number;
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

/** A PostgreSQL array literal of text values. */
function textArray(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}

/** One page of the notes matching the query that the caller may read, with their best matches; one statement. */
export async function searchIndex(em: EntityManager, callerId: number, request: SearchRequest): Promise<SearchHits> {
  const { query } = request;
  const rows = await preparedQuery<Row>(em, 'search_ngram', SEARCH_SQL, [
    callerId,
    `{${query.tokens.join(',')}}`,
    textArray(query.terms),
    `{${query.wordTokens.join(',')}}`,
    textArray(query.excluded),
    request.kind ?? null,
    request.noteId ?? null,
    request.order,
    request.limit,
    request.offset,
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
  return { total: Number(rows[0]?.total ?? 0), notes };
}
