// What a batch of changes asks the search projection to index again (search.projection.ts, wantedBy).
import { describe, expect, it } from 'vitest';
import type { ChangeRow } from '../../src/modules/events/events.repository.ts';
import { wantedBy } from '../../src/modules/search/search.projection.ts';

const change = (type: string, payload: Record<string, unknown>): ChangeRow =>
  ({ id: '1', tx: '1', occurred_at: new Date(0), type, actor_id: 1, client_id: null, team_id: 1, note_id: 1, subject_id: 1, payload }) as ChangeRow;
const sorted = (set: Set<number>) => [...set].sort((a, b) => a - b);

describe('wantedBy', () => {
  it('takes each created or restored object, and an update only when it touched a text', () => {
    const wanted = wantedBy([
      change('note.created', { note_id: 1 }),
      change('note.updated', { note_id: 2, changed: ['is_private'] }),
      change('note.updated', { note_id: 3, changed: ['description'] }),
      change('page.created', { note_id: 1, page_id: 10 }),
      change('page.restored', { note_id: 1, page_id: 11 }),
      change('page.updated', { note_id: 1, page_id: 12, changed: ['parent'] }),
      change('page.updated', { note_id: 1, page_id: 13, changed: ['title'] }),
      change('issue.created', { note_id: 1, issue_id: 20 }),
      change('issue.updated', { note_id: 1, issue_id: 21, changed: ['to_user'] }),
      change('issue.updated', { note_id: 1, issue_id: 22, changed: ['title', 'rate'] }),
      change('comment.created', { note_id: 1, comment_id: 30 }),
      change('comment.deleted', { note_id: 1, comment_id: 31 }),
      change('page.deleted', { note_id: 1, page_id: 14 }),
    ]);
    expect(sorted(wanted.note)).toEqual([1, 3]);
    expect(sorted(wanted.page)).toEqual([10, 11, 13]);
    expect(sorted(wanted.issue)).toEqual([20, 22]);
    expect(sorted(wanted.comment)).toEqual([30]);
    expect(sorted(wanted.pagesOfNotes)).toEqual([]);
    // a new note's pages, issues and comments: none, unless it was imported with them (importNote)
    expect(sorted(wanted.everythingOfNotes)).toEqual([1]);
  });

  it('takes a new fork with all its pages, and every page of a note a pull or a merge changed', () => {
    const wanted = wantedBy([
      change('fork.created', { note_id: 5, original_note_id: 1 }),
      change('fork.pulled', { note_id: 6, original_note_id: 1 }),
      change('request.merged', { note_id: 7, request_id: 1 }),
    ]);
    expect(sorted(wanted.note)).toEqual([5]);
    expect(sorted(wanted.pagesOfNotes)).toEqual([5, 6, 7]);
  });
});
