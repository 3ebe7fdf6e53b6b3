// Keeps the search index in step with the writes: each domain event that changes searchable text writes the
// object's document in the same transaction as the change (one statement). Deletions need nothing here: a
// document goes with its note, page, issue or comment by foreign key (migration 0008), also for the pages and
// comments that go with a deleted page or note. A note moved to another team, or made private, needs nothing
// either: who may read a document is decided by the note's row at search time.
import { subscribe, type DomainEvent } from '../events/events.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { commentDocument, issueDocument, noteDocument, pageDocument, pageDocumentsOfNote, writeDocuments, type SearchDocument } from './search.indexer.ts';

const touchesText = (changed: readonly string[]) => changed.some((field) => field === 'title' || field === 'description' || field === 'content');

/** The document an event changes, if any. */
export function documentFor(event: DomainEvent): SearchDocument | undefined {
  switch (event.type) {
    case 'note.created':
      return noteDocument(event.note);
    case 'note.updated':
      return touchesText(event.changed) ? noteDocument(event.note) : undefined;
    case 'page.created':
    case 'page.restored':
      return pageDocument(event.page, event.note.id);
    case 'page.updated':
      return touchesText(event.changed) ? pageDocument(event.page, event.note.id) : undefined;
    case 'issue.created':
      return issueDocument(event.issue, event.note.id);
    case 'issue.updated':
      return touchesText(event.changed) ? issueDocument(event.issue, event.note.id) : undefined;
    case 'comment.created':
      return commentDocument(event.comment, event.note.id);
    default:
      return undefined;
  }
}

/**
 * The documents of changes written set-based, without an event per page: a fork (the new note and its copied pages),
 * a pull (the fork's pages), a merge (the original's pages): every page of the note is indexed again, in two
 * statements whatever their number.
 */
async function documentsWrittenSetBased(em: EntityManager, event: DomainEvent): Promise<SearchDocument[]> {
  switch (event.type) {
    case 'fork.created':
      return [noteDocument(event.note), ...(await pageDocumentsOfNote(em, event.note.id))];
    case 'fork.pulled':
    case 'request.merged':
      return pageDocumentsOfNote(em, event.note.id);
    default:
      return [];
  }
}

export function subscribeSearchIndex(): void {
  subscribe('search', async (em, event) => {
    const document = documentFor(event);
    const documents = document ? [document] : await documentsWrittenSetBased(em, event);
    if (documents.length > 0) await writeDocuments(em, documents);
  });
}
