// Keeps the search index in step with the writes, as a projection of the change log (events/projections.ts): after
// a change commits, the documents it touched are written again from the objects as they are then, so a batch of
// changes writes each document once however often it changed, and a page deleted meanwhile is skipped. Search may
// lag the writes by that much (docs/architecture.md, "The change log"). Deletions need nothing here: a document goes
// with its note, page, issue or comment by foreign key (migration 0008). A note moved to another team, or made
// private, needs nothing either: who may read a document is decided by the note's row at search time.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventType } from '../events/domain-events.ts';
import type { ChangeRow } from '../events/events.repository.ts';
import { project } from '../events/projections.ts';
import { documentsOf, writeDocuments, type DocumentKind } from './search.indexer.ts';

const touchesText = (change: ChangeRow) => {
  const changed = change.payload.changed;
  return Array.isArray(changed) && changed.some((field) => field === 'title' || field === 'description' || field === 'content');
};

/**
 * What a batch of changes asks to index again: objects by kind, notes whose every page is (written set-based), and
 * notes whose every page, issue and comment is (a note just created: an import brings them all at once).
 */
export type Wanted = Record<DocumentKind, Set<number>> & { pagesOfNotes: Set<number>; everythingOfNotes: Set<number> };

/**
 * The document a change asks to index again: its kind and where its id is in the change's data; `whenText`: only when
 * the change touched a title, description or content.
 */
const REINDEXED: Partial<Record<EventType, { kind: DocumentKind; key: string; whenText?: true }>> = {
  'note.created': { kind: 'note', key: 'note_id' },
  'note.updated': { kind: 'note', key: 'note_id', whenText: true },
  'page.created': { kind: 'page', key: 'page_id' },
  'page.restored': { kind: 'page', key: 'page_id' },
  'page.updated': { kind: 'page', key: 'page_id', whenText: true },
  'issue.created': { kind: 'issue', key: 'issue_id' },
  'issue.updated': { kind: 'issue', key: 'issue_id', whenText: true },
  'comment.created': { kind: 'comment', key: 'comment_id' },
};

export function wantedBy(changes: readonly ChangeRow[]): Wanted {
  const wanted: Wanted = { note: new Set(), page: new Set(), issue: new Set(), comment: new Set(), pagesOfNotes: new Set(), everythingOfNotes: new Set() };
  for (const change of changes) {
    const noteId = change.payload.note_id as number;
    const reindexed = REINDEXED[change.type];
    if (reindexed && (!reindexed.whenText || touchesText(change))) wanted[reindexed.kind].add(change.payload[reindexed.key] as number);
    // a new fork: the note and its copied pages; a pull or a merge: the pages of the note it changed
    if (change.type === 'fork.created') wanted.note.add(noteId);
    if (change.type === 'fork.created' || change.type === 'fork.pulled' || change.type === 'request.merged') wanted.pagesOfNotes.add(noteId);
    // a new note: its pages, issues and comments (none, unless it was imported with them: importNote)
    if (change.type === 'note.created') wanted.everythingOfNotes.add(noteId);
  }
  return wanted;
}

export function registerSearchProjection(): void {
  project({
    name: 'search',
    async apply(em: EntityManager, changes: readonly ChangeRow[]): Promise<void> {
      for await (const documents of documentsOf(em, wantedBy(changes))) await writeDocuments(em, documents);
    },
  });
}
