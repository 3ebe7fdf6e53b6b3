import type { SearchMatch } from '../../../generated/client/types.gen.ts';
import { defineOperation, readerOf } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteViews, notesByIds } from '../notes/notes.loader.ts';
import { parseQuery } from './query.ts';
import type { MatchRow } from './search.query.ts';
import { searchIndex } from './search.query.ts';
import { snippet } from './snippet.ts';

function presentMatch(match: MatchRow, terms: readonly string[]): SearchMatch {
  // where only the title matched, the title is the snippet
  const inText = snippet(match.window, terms, { before: match.cutBefore, after: match.cutAfter });
  const body: SearchMatch = {
    type: match.kind,
    id: match.objectId,
    title: match.title,
    snippet: inText.includes('<mark>') || match.title === '' ? inText : snippet(match.title, terms),
  };
  if (match.pageId !== null) body.page_id = match.pageId;
  if (match.issueIndex !== null) body.issue_index = match.issueIndex;
  if (match.requestIndex !== null) body.request_index = match.requestIndex;
  if (match.commentOn !== null) body.comment_on = match.commentOn;
  return body;
}

export const searchOperations = {
  /** The notes the caller may read that match, best first, each with what matched in it (search.query.ts). */
  searchNotes: defineOperation('searchNotes', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const parsed = parseQuery(query.q);
    const page = pagination(query);
    const hits = await searchIndex(context.em, caller.user.id, {
      query: parsed,
      kind: query.type === undefined || query.type === 'all' ? undefined : query.type,
      noteId: query.note_id,
      order: query.order ?? 'relevance',
      perPage: page.perPage,
      page: page.page,
      textBytes: context.config.limits.listTextBytes,
    }, context.log);
    // the page size the result allows (its notes' descriptions fit LIMIT_LIST_TEXT_BYTES), which the Link headers carry
    const list = listPlace({ ...page, perPage: hits.perPage }, hits.total);
    if (hits.notes.length === 0) return answerWith([], { list });
    const unloaded = hits.notes.filter((hit) => hit.note === undefined).map((hit) => hit.noteId);
    const found = [...hits.notes.flatMap((hit) => hit.note ?? []), ...await notesByIds(context.em, unloaded)];
    const byId = new Map(found.map((note) => [note.id, note]));
    // a note deleted between the two statements is left out
    const listed = hits.notes.filter((hit) => byId.has(hit.noteId));
    // each note is sent with its description (up to 64K characters; the page holds at most LIMIT_LIST_TEXT_BYTES of
    // them): many such pages at once wait their turn (answer-gate.ts)
    await context.admit(found.reduce((total, note) => total + Buffer.byteLength(note.description ?? '', 'utf8'), 0));
    const views = await loadNoteViews(readerOf(context), listed.map((hit) => byId.get(hit.noteId)!));
    return answerWith(views.map((view, index) => ({
      ...presentNote(view, context.urls, 'read'),
      matches: listed[index]!.matches.map((match) => presentMatch(match, parsed.terms)),
    })), { list });
  }),
};
