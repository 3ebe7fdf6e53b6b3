// Merging a request into its original, in one transaction: the request's row and the original's pages it carries are
// locked, every page is merged three ways (merge-state.ts) from the sides as they are now, and only when nothing is
// left unresolved is anything written: a new version per changed page (recording the request and the fork version),
// new pages for `create` entries, the request merged, the fork pages' bases moved forward. A conflict answers 409
// and the transaction writes nothing.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits } from '../../config.ts';
import { currentTime } from '../../db/timestamps.ts';
import { badRequest, conflict, DomainError, unprocessable, type FieldError } from '../errors.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import type { Page } from '../pages/page.entity.ts';
import { createPage, lockTree, movePage, removePage } from '../pages/tree.service.ts';
import { lockPage, recordVersion, touch } from '../pages/versions.writer.ts';
import { User } from '../users/user.entity.ts';
import { budgetOf } from '../text/merge3.ts';
import { treeSide, wholeContent, type PageConflict, type RegionChoice, type Resolution, type Side } from './merge/pages.ts';
import { MergeRequest } from './merge-request.entity.ts';
import { conflictPageId, loadRequestPages, pageState, sidesOf } from './merge-state.ts';
import type { RequestPageRow } from './requests.repository.ts';
import { forkPagesWithParentOrigin, headVersions, markRequestPagesMerged, markVersionsFromRequest, rebaseForkPages, type ForkPageRow } from './requests.repository.ts';

type Choice = { take?: 'ours' | 'theirs' | null | undefined; content?: string | null | undefined };
export type ResolutionInput = Choice & { page_id: number; regions?: readonly Choice[] | null | undefined };
export type MergeOptions = { expectedHeadVersions?: readonly number[] | null | undefined; resolutions?: readonly ResolutionInput[] | null | undefined };

/** The decision given for each page (by the fork page's id). */
export function resolutionsByPage(inputs: readonly ResolutionInput[] | null | undefined): Map<number, Resolution> {
  const map = new Map<number, Resolution>();
  for (const [at, input] of (inputs ?? []).entries()) {
    if (typeof input.content === 'string') map.set(input.page_id, { content: input.content });
    else if (Array.isArray(input.regions)) {
      const regions = input.regions.map((choice, index): RegionChoice => {
        if (typeof choice.content === 'string') return { content: choice.content };
        if (choice.take) return choice.take;
        throw badRequest('a region decision takes `take` (ours or theirs) or `content`', [{ pointer: `/resolutions/${at}/regions/${index}`, detail: 'decides nothing' }]);
      });
      map.set(input.page_id, { regions, take: input.take ?? undefined });
    } else if (input.take) map.set(input.page_id, input.take);
  }
  return map;
}

/** 409 `merge_conflict` naming every page left unresolved, with its regions. */
export function mergeConflict(conflicts: PageConflict[], bounded: { pageId: number; reason: string }[]): never {
  const errors: FieldError[] = [
    ...conflicts.map((c) => ({ detail: `page ${c.page_id}: ${c.kind} conflict in ${c.regions.length} region(s)` })),
    ...bounded.map((b) => ({ detail: `page ${b.pageId}: not merged automatically (${b.reason}); resolve it with its final content` })),
  ];
  throw new DomainError('conflict', 'merge_conflict', `${errors.length} page(s) cannot be merged without a resolution; nothing was changed`, { errors, extensions: { conflicts } });
}

/** `parent`: where the original's page goes (a ParentKey), when it moves. */
type Merged = { row: RequestPageRow; result: Side; parent?: string | undefined };

/** Each page's merged result, or 409 with every conflict left. */
function mergeAll(rows: readonly RequestPageRow[], resolutions: Map<number, Resolution>): Merged[] {
  const budget = budgetOf();
  const conflicts: PageConflict[] = [];
  const bounded: { pageId: number; reason: string }[] = [];
  const merged: Merged[] = [];
  for (const row of rows) {
    const { merge, tree } = pageState(row, budget);
    const resolution = resolutions.get(conflictPageId(row));
    let result: Side | undefined;
    if (merge.status === 'clean') result = merge.result;
    else if (merge.status === 'conflict') {
      if (resolution) result = merge.resolve(resolution);
      else conflicts.push(merge.conflict);
    } else if (wholeContent(resolution) !== undefined) {
      const { theirs, ours } = sidesOf(row);
      result = { title: (theirs ?? ours)?.title ?? '', content: wholeContent(resolution)! };
    } else bounded.push({ pageId: conflictPageId(row), reason: merge.reason });
    let parent: string | undefined;
    if (tree?.status === 'clean') parent = tree.parent;
    else if (tree?.status === 'conflict') {
      const [region] = tree.conflict.regions;
      if (resolution) parent = treeSide(resolution) === 'theirs' ? region!.theirs : region!.ours;
      else conflicts.push(tree.conflict);
    }
    if (result !== undefined) merged.push({ row, result, parent });
  }
  if (conflicts.length > 0 || bounded.length > 0) mergeConflict(conflicts, bounded);
  return merged;
}

/** 409 `version_conflict` when a carried fork page has a newer version than the caller saw. */
async function checkHeads(tx: EntityManager, rows: readonly RequestPageRow[], expected: readonly number[]): Promise<void> {
  const forkPageIds = rows.flatMap((row) => (row.from_page_id === null ? [] : [row.from_page_id]));
  if (forkPageIds.length === 0) return;
  const heads = await headVersions(tx, forkPageIds);
  const seen = new Set(expected);
  const moved = heads.filter((head) => !seen.has(head.id));
  if (moved.length > 0) {
    throw conflict('version_conflict', 'the fork changed since the versions given in expected_head_versions', moved.map((head) => ({
      pointer: '/expected_head_versions',
      detail: `page ${head.page_id} of the fork is now at version ${head.id}`,
    })));
  }
}

export async function mergeRequest(
  em: EntityManager,
  actor: Actor,
  note: Note,
  request: MergeRequest,
  author: User,
  options: MergeOptions,
  limits: Limits,
): Promise<void> {
  await em.transactional(async (tx) => {
    await lockTree(tx, note.id);
    const locked = await tx.findOneOrFail(MergeRequest, request.id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (locked.status === 'merged' || locked.status === 'closed') throw conflict('invalid_state', `the request is ${locked.status}; only an opened request can be merged`);
    if (locked.status === 'draft' || locked.isWip) throw unprocessable('work_in_progress', 'the request is a work in progress; open it before merging');
    if (locked.fromNote === null) throw unprocessable('fork_missing', 'the request came with an imported note, without its fork: there is nothing to merge from');
    const carried = await loadRequestPages(tx, [locked.id], { contentBytes: 0 });
    if (options.expectedHeadVersions) await checkHeads(tx, carried, options.expectedHeadVersions);
    // the original's pages, locked in one order for everyone, then the sides read again as they are now
    const upstream = new Map<number, Page>();
    for (const id of carried.flatMap((row) => (row.to_page_id === null ? [] : [row.to_page_id])).sort((a, b) => a - b)) {
      upstream.set(id, await lockPage(tx, id));
    }
    const rows = await loadRequestPages(tx, [locked.id], { all: true });
    const merged = mergeAll(rows, resolutionsByPage(options.resolutions));

    const forkPages = new Map((await forkPagesWithParentOrigin(tx, rows.flatMap((row) => (row.from_page_id === null ? [] : [row.from_page_id])))).map((page) => [page.id, page]));
    const origin = { requestId: locked.id };
    const landed = new Map<number, number>(); // fork page -> original page
    // pages of the original that are there: a new version where the merge changed them
    const deleting: Page[] = [];
    for (const { row, result } of merged) {
      const page = row.to_page_id === null ? undefined : upstream.get(row.to_page_id);
      if (!page) continue;
      if (result === null) {
        if (row.type === 'delete') deleting.push(page);
        continue;
      }
      if (row.from_page_id !== null) landed.set(row.from_page_id, page.id);
      if (page.title === result.title && page.content === result.content) continue;
      const previous = page.content;
      page.title = result.title;
      page.content = result.content;
      recordVersion(tx, page, actor, previous, { ...origin, fromVersionId: row.page_version_id });
      touch(page);
    }
    // pages new in the fork (or gone from the original and kept): created, parents first
    let pending = merged.filter(({ row, result }) => result !== null && row.type !== 'delete' && (row.to_page_id === null || !upstream.has(row.to_page_id)));
    while (pending.length > 0) {
      const waiting = new Set(pending.map(({ row }) => forkPageId(row)));
      const ready = pending.filter(({ row }) => !waiting.has(forkPages.get(forkPageId(row))?.parent_id ?? -1));
      for (const { row, result } of ready.length > 0 ? ready : pending) {
        const forkPage = forkPages.get(forkPageId(row));
        const parent = forkPage?.parent_id == null ? null : (landed.get(forkPage.parent_id) ?? forkPage.parent_origin);
        const page = await createPage(tx, actor, note, { title: result!.title, content: result!.content, parent }, limits);
        await markVersionsFromRequest(tx, locked.id, row.page_version_id, page.id);
        landed.set(forkPageId(row), page.id);
      }
      const done = new Set((ready.length > 0 ? ready : pending).map(({ row }) => row.id));
      pending = pending.filter(({ row }) => !done.has(row.id));
    }
    // moves: where the fork moved a page (and the original did not), under the original's page, or the page this
    // merge created for a parent new in the fork
    for (const { row, parent } of merged) {
      const page = row.to_page_id === null ? undefined : upstream.get(row.to_page_id);
      if (!page || parent === undefined || parent === (page.parent?.id === undefined ? '' : String(page.parent.id))) continue;
      const target = parent === '' ? null : parent.startsWith('fork:') ? landed.get(Number(parent.slice(5))) : Number(parent);
      if (target === undefined) continue;
      await movePage(tx, page, target, limits, false);
      touch(page);
    }
    // pages the fork deleted and the original did not change: deleted, sub-pages first (a page's subtree goes with
    // it; one with sub-pages the request does not delete was a conflict above unless resolved `theirs`)
    for (const page of deepestFirst(deleting)) await removePage(tx, actor, note, page);
    await tx.flush();
    await moveForkBases(tx, merged, forkPages, landed);
    await markRequestPagesMerged(tx, rows.map((row) => ({ id: row.id, toPageId: row.from_page_id === null ? undefined : landed.get(row.from_page_id) })));
    locked.status = 'merged';
    locked.isWip = false;
    locked.mergedAt = currentTime();
    locked.mergedBy = tx.getReference(User, actor.id);
    await recordEvent(tx, { type: 'request.merged', actor, note, request: locked, author });
  });
}

/** The fork page of a request page that has one (every type but `delete`). */
function forkPageId(row: RequestPageRow): number {
  if (row.from_page_id === null) throw new Error(`request page ${row.id} (${row.type}) has no fork page`);
  return row.from_page_id;
}

/** The pages given, each after those of them below it. */
export function deepestFirst(pages: readonly Page[]): Page[] {
  const byId = new Map(pages.map((page) => [page.id, page]));
  const depth = (page: Page): number => {
    const parent = page.parent === null || page.parent === undefined ? undefined : byId.get(page.parent.id);
    return parent ? 1 + depth(parent) : 0;
  };
  return [...pages].sort((a, b) => depth(b) - depth(a));
}

/**
 * A fork page whose content is now the original's (the merged result) takes the original's latest version as its
 * base (and, for a page new in the fork, the new page as its origin); one that differs keeps its base, so a pull
 * brings the original's side in later, three ways.
 */
async function moveForkBases(tx: EntityManager, merged: readonly Merged[], forkPages: Map<number, ForkPageRow>, landed: Map<number, number>): Promise<void> {
  const moving = merged.filter(({ row, result }) => {
    const forkPage = row.from_page_id === null ? undefined : forkPages.get(row.from_page_id);
    return result !== null && forkPage !== undefined && landed.has(forkPage.id) && forkPage.title === result.title && forkPage.content === result.content;
  });
  if (moving.length === 0) return;
  await rebaseForkPages(tx, moving.map(({ row }) => ({ forkPageId: forkPageId(row), originId: landed.get(forkPageId(row))! })));
}
