// Updating a page: its place in the tree, whether it is the note's cover, its title and content. One transaction;
// tree changes lock the note's tree first (tree.service.ts), then the page's row (versions.writer.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits } from '../../config.ts';
import { oneAtATime } from '../../db/one-at-a-time.ts';
import { currentTime } from '../../db/timestamps.ts';
import { notFound, payloadTooLarge } from '../errors.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import { Page, type PageVersion } from './page.entity.ts';
import { writePageText } from './pages.repository.ts';
import { lockTree, moveLooksValid, movePage } from './tree.service.ts';
import { checkIfMatch, etagsNamed, lockPage, touch, writeContent } from './versions.writer.ts';

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
  // a page whose first version is not yet written (a fork's copy) gets its first diff made now (versions.writer.ts)
  if (!moving && !coverChange && !restored && page.versionSequence > 0) return writeText(em, actor, note, page, changes, ifMatch);
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

/** The lock versions an If-Match header accepts for the page; undefined for any (no header, or `*`). */
function acceptedLockVersions(pageId: number, ifMatch: string | undefined): number[] | undefined {
  const named = ifMatch === undefined ? undefined : etagsNamed(ifMatch);
  if (named === undefined) return undefined;
  const accepted: number[] = [];
  for (const etag of named) {
    const parts = /^"page-(\d+)-(\d+)"$/.exec(etag);
    if (parts && Number(parts[1]) === pageId && Number.isSafeInteger(Number(parts[2]))) accepted.push(Number(parts[2]));
  }
  return accepted;
}

/**
 * A change of title or content only, the write clients make most: one statement (pages.repository.ts,
 * writePageText) in place of a transaction of several, with the same outcome as the general path below (a version,
 * a change-log row, an activity-log entry; the `page.updated` event has no subscriber that notifies). When it writes
 * nothing, the page is read to tell why: gone (404), If-Match not met (412), or nothing to change.
 */
async function writeText(em: EntityManager, actor: Actor, note: Note, page: Page, changes: PageChanges, ifMatch: string | undefined): Promise<Page> {
  const written = await oneAtATime(`page:${page.id}`, () => writePageText(em, {
    pageId: page.id,
    noteId: note.id,
    teamId: note.team.id,
    title: changes.title,
    content: changes.content,
    lockVersions: acceptedLockVersions(page.id, ifMatch),
    actor: { id: actor.id, username: actor.username, clientId: actor.clientId ?? null },
    now: currentTime(),
  }));
  if (written) return written;
  const current = await em.findOne(Page, page.id, { refresh: true });
  if (!current) throw notFound('page');
  checkIfMatch(current, ifMatch);
  return current;
}

/** Makes a version's title and content current again, as a new version (nothing when they already are). */
export async function restoreVersion(em: EntityManager, actor: Actor, note: Note, page: Page, version: PageVersion, limits: Limits): Promise<Page> {
  return updatePage(em, actor, note, page, { title: version.title, content: version.content }, undefined, limits, version);
}
