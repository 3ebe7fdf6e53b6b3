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
import { mapAliased } from '../../db/rows.ts';
import { Note } from '../notes/note.entity.ts';
import { Team } from '../teams/team.entity.ts';
import type { ParsedQuery } from './query.ts';
import { BIG_RESULT, rankedSearch, walkedSearch, WINDOW_LENGTH, type DocumentKind, type SearchOrder, type SearchParameters, type SearchRow } from './search.repository.ts';
import { candidates } from './search.stats.ts';
import type { Logger } from '../../http/logger.ts';


export type SearchRequest = {
  query: ParsedQuery;
  kind: DocumentKind | undefined;
  noteId: number | undefined;
  order: SearchOrder;
  /** The page size asked for, the page (1-based), and the text one page of results may carry (LIMIT_LIST_TEXT_BYTES). */
  perPage: number;
  page: number;
  textBytes: number;
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
  requestIndex: number | null;
  /** What a comment is on. */
  commentOn: 'note' | 'page' | 'issue' | 'request' | null;
};

/**
 * `bounded`: more than BIG_RESULT documents matched; `total` is then a lower bound (see above). `perPage`: how many
 * notes each page of this result holds (at most the size asked for: fewer when their descriptions are long, see
 * search.repository.ts). `note`: the note with
 * its team, where the search loaded them (this one does; the caller loads any it leaves out).
 */
export type SearchHits = { total: number; bounded: boolean; perPage: number; notes: { noteId: number; note?: Note | undefined; matches: MatchRow[] }[] };

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
  const parameters: SearchParameters = {
    callerId,
    tokens: query.tokens,
    kind: request.kind ?? null,
    noteId: request.noteId ?? null,
    perPage: request.perPage,
    page: request.page,
    textBytes: request.textBytes,
    terms: query.terms,
    wordTokens: query.wordTokens,
    excluded: query.excluded,
  };
  // the statistics speak for the whole table: a search narrowed to a kind or a note counts its candidates
  const settled = request.kind === undefined && request.noteId === undefined ? await candidates(em, log, query.tokens, BIG_RESULT) : 'count';
  let rows: SearchRow[] | undefined;
  if (settled !== 'many') {
    rows = await rankedSearch(em, request.order, parameters, settled === 'count');
    if (rows[0]?.bounded === true) rows = undefined; // counted past the bound: walk
  }
  if (rows === undefined) rows = await walkedSearch(em, request.order, parameters);
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
      requestIndex: row.request_index,
      commentOn: row.comment_on,
    });
  }
  return { total: Number(rows[0]?.total ?? 0), bounded: rows[0]?.bounded === true, perPage: rows[0]?.per_page ?? request.perPage, notes };
}
