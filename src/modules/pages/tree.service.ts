// The page tree: creating a page in it, moving a page within it, deleting a subtree, and the note's cover. Every
// change of the tree locks the note's row first (FOR NO KEY UPDATE: page writes that only reference the note still
// pass), so tree changes of one note queue and each checks its ancestry against the tree as it really is.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits } from '../../config.ts';
import { conflict, unprocessable, type DomainError } from '../errors.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import { Page } from './page.entity.ts';
import { ancestries, deletePageRow, keepACover, lockNoteRow, nextPosition, rememberForkDeletions, subtreeHeight } from './pages.repository.ts';
import { recordVersion } from './versions.writer.ts';

/** Locks the note's tree for the rest of the transaction: tree changes of one note queue on it. */
export async function lockTree(em: EntityManager, noteId: number): Promise<void> {
  await lockNoteRow(em, noteId);
}

function tooDeep(limits: Limits): DomainError {
  return unprocessable('tree_too_deep', `pages nest at most ${limits.pageTreeDepth} levels deep`, [{ pointer: '/page/parent', detail: 'too deep' }]);
}

function parentNotFound(): DomainError {
  return unprocessable('parent_not_found', 'page[parent] is not a page of this note', [{ pointer: '/page/parent', detail: 'not a page of this note' }]);
}

/** Ids from the root down to `parentId`, after checking it is a page of the note. */
async function lineageOf(em: EntityManager, noteId: number, parentId: number): Promise<number[]> {
  const lineage = (await ancestries(em, [parentId], noteId)).get(parentId);
  if (!lineage) throw parentNotFound();
  return lineage.ids;
}

export type NewPage = { title: string; content: string; parent?: number | null | undefined };

/** A new page, last among its siblings, with its first version; the first page of a note becomes its cover. */
export async function createPage(em: EntityManager, actor: Actor, note: Note, input: NewPage, limits: Limits): Promise<Page> {
  return em.transactional(async (tx) => {
    await lockTree(tx, note.id);
    const parentId = input.parent ?? null;
    if (parentId !== null && (await lineageOf(tx, note.id, parentId)).length + 1 > limits.pageTreeDepth) throw tooDeep(limits);
    const isFirst = (await tx.count(Page, { note: note.id })) === 0;
    const page = tx.create(Page, {
      note,
      parent: parentId,
      position: await nextPosition(tx, note.id, parentId),
      title: input.title,
      content: input.content,
      lockVersion: 1,
      versionSequence: 0,
      originPage: null,
      baseVersion: null,
    });
    const version = recordVersion(tx, page, actor, '');
    await tx.flush();
    if (isFirst) note.coverPageId = page.id;
    await recordEvent(tx, { type: 'page.created', actor, note, page, version });
    return page;
  });
}

/**
 * Moves a page (and its subtree) to be the last child of `parentId` (null: the top level). Called with the tree
 * locked; `checkedBefore` says the move was valid in the tree the request first saw, so a move that has become a
 * cycle only because a concurrent move came first answers 409, not 422.
 */
export async function movePage(em: EntityManager, page: Page, parentId: number | null, limits: Limits, checkedBefore: boolean): Promise<void> {
  if (parentId !== null) {
    const lineage = await lineageOf(em, page.note.id, parentId);
    if (lineage.includes(page.id)) {
      if (checkedBefore) throw conflict('concurrent_change', 'a concurrent move changed the tree so that this move would make a cycle; read the pages again');
      throw unprocessable('page_cycle', 'a page cannot be moved under itself or one of its descendants', [{ pointer: '/page/parent', detail: 'would make a cycle' }]);
    }
    if (lineage.length + (await subtreeHeight(em, page.id)) > limits.pageTreeDepth) throw tooDeep(limits);
  }
  page.position = await nextPosition(em, page.note.id, parentId);
  page.parent = parentId === null ? null : em.getReference(Page, parentId);
}

/** Whether the move would be valid in the tree as this request sees it now (read before any lock is taken). */
export async function moveLooksValid(em: EntityManager, page: Page, parentId: number | null): Promise<boolean> {
  if (parentId === null) return true;
  const lineage = (await ancestries(em, [parentId], page.note.id)).get(parentId);
  return lineage !== undefined && !lineage.ids.includes(page.id);
}

/** Deletes the page and its subtree (foreign keys cascade to versions and comments); the cover moves on if it went. */
export async function deletePage(em: EntityManager, actor: Actor, note: Note, page: Page): Promise<void> {
  await em.transactional(async (tx) => {
    await lockTree(tx, note.id);
    await removePage(tx, actor, note, page);
  });
}

/** As deletePage, inside the caller's transaction, which holds the note's tree lock. */
export async function removePage(tx: EntityManager, actor: Actor, note: Note, page: Page): Promise<void> {
  await recordEvent(tx, { type: 'page.deleted', actor, note, page });
  await tx.flush();
  if (note.forkedFrom) await rememberForkDeletions(tx, actor.id, page.id);
  await deletePageRow(tx, page.id);
  await keepACover(tx, note.id);
}
