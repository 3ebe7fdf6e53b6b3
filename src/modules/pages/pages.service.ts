// Updating a page: its place in the tree, whether it is the note's cover, its title and content. One transaction;
// tree changes lock the note's tree first (tree.service.ts), then the page's row (versions.writer.ts). A write may
// name the version it was based on (merge-on-write, edit-merge.ts): from an older base, its title and content are
// merged three ways with the page as it is now, while the page's row is locked, so nothing written since is lost.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PageMergeResult, PageUpdateInput } from '../../../generated/client/types.gen.ts';
import type { Limits } from '../../config.ts';
import { oneAtATime } from '../../db/one-at-a-time.ts';
import { currentTime } from '../../db/timestamps.ts';
import { DomainError, notFound, payloadTooLarge, unprocessable } from '../errors.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import { mergeEdit } from './edit-merge.ts';
import { Page, PageVersion } from './page.entity.ts';
import { writePageText } from './pages.repository.ts';
import { lockTree, moveLooksValid, movePage } from './tree.service.ts';
import { checkIfMatch, coAuthorsOf, etagsNamed, lockPage, touch, writeContent } from './versions.writer.ts';

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

/** What a write with an older base does: merge three ways (the default), fail, or let the write win. */
export type OnConflict = NonNullable<PageUpdateInput['on_conflict']>;
/** `page[base_version]` and `on_conflict` of a write. */
export type EditBase = { version: number; onConflict: OnConflict };
/** The page written, and how a write from an older base was applied. */
export type PageWrite = { page: Page; merge?: PageMergeResult };

/**
 * Applies the changes to the page (of `note`); 412 when `ifMatch` is given and is not the page's current ETag (checked
 * first); with `base`, 422 when the page has no such version, and from an older base what `base.onConflict` says.
 */
export async function updatePage(
  em: EntityManager,
  actor: Actor,
  note: Note,
  page: Page,
  changes: PageChanges,
  ifMatch: string | undefined,
  limits: Limits,
  options: { restored?: PageVersion; base?: EditBase } = {},
): Promise<PageWrite> {
  const { restored, base } = options;
  const moving = changes.parent !== undefined && changes.parent !== (page.parent?.id ?? null);
  const coverChange = changes.is_cover !== undefined && changes.is_cover !== (note.coverPageId === page.id);
  // a page whose first version is not yet written (a fork's copy) gets its first diff made now (versions.writer.ts);
  // a base other than the version read goes the general way (it is invalid, or the write is merged); so does a write
  // inside a caller's transaction (a proposal, requests/proposals.ts): the one-statement write runs on a connection
  // of its own, outside that transaction
  if (!moving && !coverChange && !restored && page.versionSequence > 0 && !em.isInTransaction() && (base === undefined || base.version === page.versionSequence)) {
    const written = await writeText(em, actor, note, page, changes, ifMatch, base?.version);
    if (written) return { page: written };
  }
  const moveWasValid = moving ? await moveLooksValid(em, page, changes.parent!) : false;
  return oneAtATime(`page:${page.id}`, () => em.transactional(async (tx): Promise<PageWrite> => {
    if (moving || coverChange) await lockTree(tx, note.id);
    const locked = await lockPage(tx, page.id);
    checkIfMatch(locked, ifMatch);
    const { text, merge, mergedFromBase } = base ? await textFromBase(tx, locked, changes, base, limits) : { text: changes, merge: undefined, mergedFromBase: undefined };
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
    const written = writeContent(tx, locked, actor, text, mergedFromBase);
    if (written) changed.push(...written.changed);
    const version = written?.version;
    if (changed.length > 0) {
      touch(locked);
      await recordEvent(tx, restored && version
        ? { type: 'page.restored', actor, note, page: locked, version, restored }
        : { type: 'page.updated', actor, note, page: locked, version, changed });
    }
    return merge ? { page: locked, merge } : { page: locked };
  }));
}

/** 409 `edit_conflict`: nothing written; the page as it is now, and where the write conflicts with it (if tried). */
function editConflict(page: Page, detail: string, conflicts: unknown[]): DomainError {
  return new DomainError('conflict', 'edit_conflict', detail, {
    extensions: { latest_version: page.versionSequence, latest_title: page.title, latest_content: page.content, conflicts },
  });
}

/**
 * The title and content to write given the base the write names (the page's row locked): the write's own when the
 * base is the current version (or the write changes neither), else merged, refused or winning per `onConflict`.
 */
async function textFromBase(
  em: EntityManager,
  page: Page,
  changes: PageChanges,
  base: EditBase,
  limits: Limits,
): Promise<{ text: PageChanges; merge: PageMergeResult | undefined; mergedFromBase: number | undefined }> {
  const current = page.versionSequence;
  // a fork's copy that has no version yet is at version 0 (Page.version): 0 is then the version read
  if (!Number.isSafeInteger(base.version) || (base.version !== current && (base.version < 1 || base.version > current))) {
    throw unprocessable('invalid_base_version', `page ${page.id} has no version ${base.version} (its versions are 1 to ${current})`, [
      { pointer: '/page/base_version', detail: current === 0 ? 'the page has no version yet' : `a version from 1 to ${current}` },
    ]);
  }
  if (base.version === current || (changes.title === undefined && changes.content === undefined)) {
    return { text: changes, merge: undefined, mergedFromBase: undefined };
  }
  const mergedOver = Array.from({ length: current - base.version }, (_, i) => base.version + 1 + i);
  if (base.onConflict === 'fail') {
    throw editConflict(page, `the page changed since version ${base.version} (now ${current}); on_conflict=fail: not merged`, []);
  }
  if (base.onConflict === 'overwrite') {
    return { text: changes, merge: { base_version: base.version, merged_over: mergedOver, result: 'overwritten' }, mergedFromBase: undefined };
  }
  const baseVersion = await em.findOneOrFail(PageVersion, { page: page.id, index: base.version });
  const theirs = { title: changes.title ?? baseVersion.title, content: changes.content ?? baseVersion.content };
  const merged = mergeEdit(baseVersion, page, theirs);
  if (merged.status === 'unknown') {
    throw editConflict(page, `the merge over version ${base.version} was not tried to the end: ${merged.reason}; read the page again`, []);
  }
  if (merged.status === 'conflict') {
    throw editConflict(page, `the write and versions ${mergedOver.join(', ')} changed the same ${merged.conflicts.map((item) => item.kind).join(' and ')} differently since version ${base.version}`, merged.conflicts);
  }
  // both sides may have grown the page: the merged content keeps to the limit a write's content keeps to
  if (Buffer.byteLength(merged.result.content, 'utf8') > limits.pageContentBytes) {
    throw payloadTooLarge(`the merged content would be larger than the page content limit of ${limits.pageContentBytes} bytes; nothing was written`);
  }
  return {
    text: { ...changes, title: merged.result.title, content: merged.result.content },
    merge: { base_version: base.version, merged_over: mergedOver, result: 'merged' },
    mergedFromBase: base.version,
  };
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
 * nothing, the page is read to tell why: gone (404), If-Match not met (412), nothing to change (the page as it is),
 * or the page's version is no longer `baseVersion` (undefined: the general path merges).
 */
async function writeText(
  em: EntityManager,
  actor: Actor,
  note: Note,
  page: Page,
  changes: PageChanges,
  ifMatch: string | undefined,
  baseVersion: number | undefined,
): Promise<Page | undefined> {
  const written = await oneAtATime(`page:${page.id}`, () => writePageText(em, {
    pageId: page.id,
    noteId: note.id,
    teamId: note.team.id,
    title: changes.title,
    content: changes.content,
    lockVersions: acceptedLockVersions(page.id, ifMatch),
    baseVersion,
    actor: { id: actor.id, username: actor.username, clientId: actor.clientId ?? null, via: actor.via ?? null },
    coAuthorIds: coAuthorsOf(actor),
    now: currentTime(),
  }));
  if (written) return written;
  const current = await em.findOne(Page, page.id, { refresh: true });
  if (!current) throw notFound('page');
  checkIfMatch(current, ifMatch);
  if (baseVersion !== undefined && current.versionSequence !== baseVersion) return undefined;
  return current;
}

/** Makes a version's title and content current again, as a new version (nothing when they already are). */
export async function restoreVersion(em: EntityManager, actor: Actor, note: Note, page: Page, version: PageVersion, limits: Limits): Promise<Page> {
  return (await updatePage(em, actor, note, page, { title: version.title, content: version.content }, undefined, limits, { restored: version })).page;
}
