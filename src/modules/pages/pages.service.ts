// Updating a page: its place in the tree, whether it is the note's cover, its title and content. One transaction;
// tree changes lock the note's tree first (tree.service.ts), then the page's row (versions.writer.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits } from '../../config.ts';
import { oneAtATime } from '../../db/one-at-a-time.ts';
import { payloadTooLarge } from '../../http/errors.ts';
import { recordEvent, type Actor } from '../events/events.ts';
import type { Note } from '../notes/note.entity.ts';
import type { Page, PageVersion } from './page.entity.ts';
import { lockTree, moveLooksValid, movePage } from './tree.service.ts';
import { checkIfMatch, lockPage, touch, writeContent } from './versions.writer.ts';

export function checkContentSize(content: string | undefined, limits: Limits): void {
  if (content !== undefined && Buffer.byteLength(content, 'utf8') > limits.pageContentBytes) {
    throw payloadTooLarge(`page content is limited to ${limits.pageContentBytes} bytes`);
  }
}

export type PageChanges = {
  title?: string | undefined;
  content?: string | undefined;
  /** undefined: unchanged; null: move to the top level. */
  parent?: number | null | undefined;
  is_cover?: boolean | undefined;
};

/** Applies the changes to the page (of `note`); 412 when `ifMatch` is given and is not the page's current ETag. */
export async function updatePage(
  em: EntityManager,
  actor: Actor,
  note: Note,
  page: Page,
  changes: PageChanges,
  ifMatch: string | undefined,
  limits: Limits,
  restored?: PageVersion,
): Promise<Page> {
  const moving = changes.parent !== undefined && changes.parent !== (page.parent?.id ?? null);
  const coverChange = changes.is_cover !== undefined && changes.is_cover !== (note.coverPageId === page.id);
  const moveWasValid = moving ? await moveLooksValid(em, page, changes.parent!) : false;
  return oneAtATime(`page:${page.id}`, () => em.transactional(async (tx) => {
    if (moving || coverChange) await lockTree(tx, note.id);
    const locked = await lockPage(tx, page.id);
    checkIfMatch(locked, ifMatch);
    const changed: string[] = [];
    if (changes.parent !== undefined && changes.parent !== (locked.parent?.id ?? null)) {
      await movePage(tx, locked, changes.parent, limits, moveWasValid);
      changed.push('parent');
    }
    if (coverChange) {
      if (changes.is_cover === true) note.coverPageId = locked.id;
      else if (note.coverPageId === locked.id) note.coverPageId = null;
      changed.push('cover');
    }
    const written = writeContent(tx, locked, actor, changes);
    if (written) changed.push(...written.changed);
    const version = written?.version;
    if (changed.length > 0) {
      touch(locked);
      await recordEvent(tx, restored && version
        ? { type: 'page.restored', actor, note, page: locked, version, restored }
        : { type: 'page.updated', actor, note, page: locked, version, changed });
    }
    return locked;
  }));
}

/** Makes a version's title and content current again, as a new version (nothing when they already are). */
export async function restoreVersion(em: EntityManager, actor: Actor, note: Note, page: Page, version: PageVersion, limits: Limits): Promise<Page> {
  return updatePage(em, actor, note, page, { title: version.title, content: version.content }, undefined, limits, version);
}
