// Keeps the search index in step with the writes, as a projection of the change log (events/projections.ts): after
// a change commits, the documents it touched are written again from the objects as they are then, so a batch of
// changes writes each document once however often it changed, and a page deleted meanwhile is skipped. Search may
// lag the writes by that much (docs/architecture.md, "The change log"). Deletions need nothing here: a document goes
// with its note, page, issue or comment by foreign key (migration 0008). A note moved to another team, or made
// private, needs nothing either: who may read a document is decided by the note's row at search time.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeRow } from '../events/events.repository.ts';
import { project } from '../events/projections.ts';
import { documentsOf, writeDocuments, type DocumentKind } from './search.indexer.ts';

const touchesText = (change: ChangeRow) => {
  const changed = change.payload.changed;
  return Array.isArray(changed) && changed.some((field) => field === 'title' || field === 'description' || field === 'content');
};

/** What a batch of changes asks to index again: objects by kind, and notes whose every page is (written set-based). */
export type Wanted = Record<DocumentKind, Set<number>> & { pagesOfNotes: Set<number> };

export function wantedBy(changes: readonly ChangeRow[]): Wanted {
  const wanted: Wanted = { note: new Set(), page: new Set(), issue: new Set(), comment: new Set(), pagesOfNotes: new Set() };
  for (const change of changes) {
    const id = (key: string) => change.payload[key] as number;
    switch (change.type) {
      case 'note.created':
        wanted.note.add(id('note_id'));
        break;
      case 'note.updated':
        if (touchesText(change)) wanted.note.add(id('note_id'));
        break;
      case 'page.created':
      case 'page.restored':
        wanted.page.add(id('page_id'));
        break;
      case 'page.updated':
        if (touchesText(change)) wanted.page.add(id('page_id'));
        break;
      case 'issue.created':
        wanted.issue.add(id('issue_id'));
        break;
      case 'issue.updated':
        if (touchesText(change)) wanted.issue.add(id('issue_id'));
        break;
      case 'comment.created':
        wanted.comment.add(id('comment_id'));
        break;
      case 'fork.created':
        // the new note and its copied pages
        wanted.note.add(id('note_id'));
        wanted.pagesOfNotes.add(id('note_id'));
        break;
      case 'fork.pulled':
      case 'request.merged':
        // the fork's pages, the original's pages
        wanted.pagesOfNotes.add(id('note_id'));
        break;
      default:
        break;
    }
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
