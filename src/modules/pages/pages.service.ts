// Writing pages. Every create, and every update that changes the title or the content, records a version. The
// note row (create) or the page row (update) is locked first, so concurrent writers queue: none is lost, each gets
// its own version index, and the If-Match check sees the page as it is when the write happens.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits } from '../../config.ts';
import { forbidden, HttpError, payloadTooLarge, unprocessable } from '../../http/errors.ts';
import { notePolicy, type Role } from '../access/policy.ts';
import { currentTime } from '../../db/timestamps.ts';
import { Note } from '../notes/note.entity.ts';
import type { User } from '../users/user.entity.ts';
import { renderDiff } from './diff.ts';
import { Page, PageVersion } from './page.entity.ts';
import { ancestries, subtreeHeight } from './tree.ts';
import { pageEtag } from './page.presenter.ts';

export function requireEditor(role: Role): void {
  if (!notePolicy.edit(role)) throw forbidden("only members of the note's team may change its pages");
}

export function checkContentSize(content: string | undefined, limits: Limits): void {
  if (content !== undefined && Buffer.byteLength(content, 'utf8') > limits.pageContentBytes) {
    throw payloadTooLarge(`page content is limited to ${limits.pageContentBytes} bytes`);
  }
}

async function lockNote(em: EntityManager, noteId: number): Promise<void> {
  await em.findOneOrFail(Note, noteId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** The depth (root = 1) a page would have under `parentId`, after checking the parent is a page of the note. */
async function depthUnder(em: EntityManager, noteId: number, parentId: number): Promise<number> {
  const parent = await em.findOne(Page, { id: parentId, note: noteId });
  if (!parent) throw unprocessable('unprocessable', 'page[parent] is not a page of this note', [{ pointer: '/page/parent', detail: 'not a page of this note' }]);
  return (await ancestries(em, [parentId])).get(parentId)!.ids.length + 1;
}

function tooDeep(limits: Limits): HttpError {
  return unprocessable('unprocessable', `pages nest at most ${limits.pageTreeDepth} levels deep`, [{ pointer: '/page/parent', detail: 'too deep' }]);
}

async function nextPosition(em: EntityManager, noteId: number, parentId: number | null): Promise<number> {
  const rows = await em.execute<{ next: number }[]>(
    `select coalesce(max(position), 0) + 1 as next from pages where note_id = ? and parent_id ${parentId === null ? 'is null' : '= ?'}`,
    parentId === null ? [noteId] : [noteId, parentId],
  );
  return Number(rows[0]?.next ?? 1);
}

function recordVersion(em: EntityManager, page: Page, author: User, previousContent: string): PageVersion {
  page.versionSequence += 1;
  return em.create(PageVersion, {
    page,
    note: page.note,
    index: page.versionSequence,
    title: page.title,
    content: page.content,
    diff: renderDiff(previousContent, page.content).html,
    user: author.id,
  });
}

export type NewPage = { title: string; content: string; parent?: number | null | undefined };

export async function createPage(em: EntityManager, author: User, note: Note, input: NewPage, limits: Limits): Promise<Page> {
  return em.transactional(async (tx) => {
    await lockNote(tx, note.id);
    const parentId = input.parent ?? null;
    if (parentId !== null && (await depthUnder(tx, note.id, parentId)) > limits.pageTreeDepth) throw tooDeep(limits);
    const isFirst = (await tx.count(Page, { note: note.id })) === 0;
    const page = tx.create(Page, {
      note: note.id,
      parent: parentId,
      position: await nextPosition(tx, note.id, parentId),
      title: input.title,
      content: input.content,
      // the first page of a note is its cover
      isCover: isFirst,
      lockVersion: 1,
      versionSequence: 0,
      originPage: null,
      baseVersion: null,
    });
    recordVersion(tx, page, author, '');
    await tx.flush();
    return page;
  });
}

export type PageChanges = {
  title?: string | undefined;
  content?: string | undefined;
  /** undefined: unchanged; null: move to the top level. */
  parent?: number | null | undefined;
  is_cover?: boolean | undefined;
};

/** Applies the changes; answers 412 when `ifMatch` is given and is not the page's current ETag. */
export async function updatePage(em: EntityManager, author: User, pageId: number, changes: PageChanges, ifMatch: string | undefined, limits: Limits): Promise<Page> {
  return em.transactional(async (tx) => {
    const page = await tx.findOneOrFail(Page, pageId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (ifMatch !== undefined && !etagMatches(ifMatch, pageEtag(page))) {
      throw new HttpError(412, 'precondition_failed', 'the page changed since the ETag given in If-Match; fetch it again');
    }
    let changed = false;
    if (changes.parent !== undefined && changes.parent !== (page.parent?.id ?? null)) {
      await movePage(tx, page, changes.parent, limits);
      changed = true;
    }
    if (changes.is_cover === true && !page.isCover) {
      await tx.nativeUpdate(Page, { note: page.note.id, isCover: true }, { isCover: false });
      page.isCover = true;
      changed = true;
    } else if (changes.is_cover === false && page.isCover) {
      page.isCover = false;
      changed = true;
    }
    const previousContent = page.content;
    const titleChanged = changes.title !== undefined && changes.title !== page.title;
    const contentChanged = changes.content !== undefined && changes.content !== page.content;
    if (titleChanged) page.title = changes.title!;
    if (contentChanged) page.content = changes.content!;
    if (titleChanged || contentChanged) {
      recordVersion(tx, page, author, previousContent);
      changed = true;
    }
    if (changed) {
      page.lockVersion += 1;
      page.updatedAt = currentTime();
    }
    await tx.flush();
    return page;
  });
}

async function movePage(em: EntityManager, page: Page, parentId: number | null, limits: Limits): Promise<void> {
  if (parentId !== null) {
    const parent = await em.findOne(Page, { id: parentId, note: page.note.id });
    if (!parent) throw unprocessable('unprocessable', 'page[parent] is not a page of this note', [{ pointer: '/page/parent', detail: 'not a page of this note' }]);
    const lineage = (await ancestries(em, [parentId])).get(parentId)!;
    if (lineage.ids.includes(page.id)) {
      throw unprocessable('unprocessable', 'a page cannot be moved under itself or one of its descendants', [{ pointer: '/page/parent', detail: 'would make a cycle' }]);
    }
    if (lineage.ids.length + (await subtreeHeight(em, page.id)) > limits.pageTreeDepth) throw tooDeep(limits);
  }
  page.position = await nextPosition(em, page.note.id, parentId);
  page.parent = parentId === null ? null : em.getReference(Page, parentId);
}

/** Makes a version's title and content current again, as a new version (nothing when they already are). */
export async function restoreVersion(em: EntityManager, author: User, pageId: number, version: PageVersion, limits: Limits): Promise<Page> {
  return updatePage(em, author, pageId, { title: version.title, content: version.content }, undefined, limits);
}

/** Deletes the page and its subtree (foreign keys cascade to versions and comments). */
export async function deletePage(em: EntityManager, page: Page): Promise<void> {
  await em.transactional(async (tx) => {
    await lockNote(tx, page.note.id);
    await tx.execute('delete from pages where id = ?', [page.id]);
    if (page.isCover) {
      // the note keeps a cover while it has pages: its first top-level page
      await tx.execute(
        `update pages set is_cover = true where id = (
           select id from pages where note_id = ? and parent_id is null order by position, id limit 1)`,
        [page.note.id],
      );
    }
  });
}

function etagMatches(ifMatch: string, etag: string): boolean {
  return ifMatch.split(',').some((candidate) => {
    const value = candidate.trim().replace(/^W\//, '');
    return value === '*' || value === etag;
  });
}
