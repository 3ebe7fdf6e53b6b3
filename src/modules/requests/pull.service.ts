// Pulling: bringing a fork up to date with its original, three ways per page (ours: the fork, theirs: the original),
// content and place in the tree alike. A page only the original changed is taken, a page both changed is merged, a
// page only the fork changed stays; changed pages get a version in the fork, every page's base (version and parent)
// moves to the original's, and pages created in the original since the last pull are copied in. Conflicts left
// unresolved: 409 and nothing written.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits } from '../../config.ts';
import { currentTime } from '../../db/timestamps.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { lockTree, movePage, removePage } from '../pages/tree.service.ts';
import { recordVersion, touch } from '../pages/versions.writer.ts';
import { budgetOf } from '../text/merge3.ts';
import { mergePage, mergeParent, treeSide, wholeContent, type PageConflict, type PageText, type ParentKey, type Resolution } from './merge/pages.ts';
import { deepestFirst, mergeConflict } from './merge.service.ts';
import { confirmDeletions, planDeletions } from './pull-deletions.ts';
import { copyOriginalPagesIn, forkCopiesOf, linkCopiedParents, lockForkCopies, moveBasesToOriginal, pullRows, type PullRow } from './requests.repository.ts';

const key = (pageId: number | null): ParentKey => (pageId === null ? '' : String(pageId));

/** The fork page's parent as a key: '' top level, the original's page id, or `fork:<id>` for a page only the fork has. */
function forkParentKey(row: PullRow): ParentKey {
  if (row.f_parent === null) return '';
  return row.f_parent_origin === null ? `fork:${row.f_parent}` : String(row.f_parent_origin);
}

type Outcome = { content?: PageText; parent?: ParentKey };

/** Merges one page both ways (content, parent); what needs no change is left out of the outcome. */
function mergeRow(row: PullRow, resolution: Resolution | undefined, budget: ReturnType<typeof budgetOf>, conflicts: PageConflict[], bounded: { pageId: number; reason: string }[]): Outcome {
  const outcome: Outcome = {};
  const ours = { title: row.f_title, content: row.f_content };
  if (row.b_title === null || ours.title !== row.u_title || ours.content !== row.u_content) {
    const base = row.b_title === null ? null : { title: row.b_title, content: row.b_content ?? '' };
    const merge = mergePage(row.id, base, ours, { title: row.u_title, content: row.u_content }, budget);
    const result = merge.status === 'clean' ? merge.result
      : merge.status === 'conflict' && resolution ? merge.resolve(resolution)
      : merge.status === 'unknown' && wholeContent(resolution) !== undefined ? { title: ours.title, content: wholeContent(resolution)! }
      : undefined;
    if (merge.status === 'conflict' && result === undefined) conflicts.push(merge.conflict);
    if (merge.status === 'unknown' && result === undefined) bounded.push({ pageId: row.id, reason: merge.reason });
    if (result && (result.title !== ours.title || result.content !== ours.content)) outcome.content = result;
  }
  const tree = mergeParent(row.id, key(row.b_parent), forkParentKey(row), key(row.u_parent));
  const parent = tree.status === 'clean' ? tree.parent : resolution === undefined ? undefined : treeSide(resolution) === 'theirs' ? key(row.u_parent) : forkParentKey(row);
  if (tree.status === 'conflict' && parent === undefined) conflicts.push(tree.conflict);
  if (parent !== undefined && parent !== forkParentKey(row)) outcome.parent = parent;
  return outcome;
}

export async function pullFork(em: EntityManager, actor: Actor, fork: Note, original: Note, resolutions: Map<number, Resolution>, limits: Limits): Promise<number> {
  return em.transactional(async (tx) => {
    await lockTree(tx, fork.id);
    await lockForkCopies(tx, fork.id);
    const rows = await pullRows(tx, fork.id);
    const budget = budgetOf();
    const conflicts: PageConflict[] = [];
    const bounded: { pageId: number; reason: string }[] = [];
    const outcomes = new Map<number, Outcome>();
    for (const row of rows) {
      const outcome = mergeRow(row, resolutions.get(row.id), budget, conflicts, bounded);
      if (outcome.content || outcome.parent !== undefined) outcomes.set(row.id, outcome);
    }
    const deletions = await planDeletions(tx, fork.id, resolutions, conflicts);
    if (conflicts.length > 0 || bounded.length > 0) mergeConflict(conflicts, bounded);

    const changing = outcomes.size === 0 ? [] : await tx.find(Page, { id: { $in: [...outcomes.keys()] } });
    const copies = await copiesOf(tx, fork.id, [...outcomes.values()].flatMap((o) => (o.parent ? [Number(o.parent)] : [])));
    for (const page of changing) {
      const { content, parent } = outcomes.get(page.id)!;
      if (content) {
        const previous = page.content;
        page.title = content.title;
        page.content = content.content;
        recordVersion(tx, page, actor, previous);
      }
      // moved in the original only: under the fork's copy of the new parent (left in place when the fork has none)
      const target = parent === undefined ? undefined : parent === '' ? null : copies.get(Number(parent));
      if (target !== undefined) await movePage(tx, page, target, limits, false);
      touch(page);
    }
    const lastPulled = fork.pulledAt ?? fork.createdAt;
    fork.pulledAt = currentTime();
    await tx.flush();
    if (rows.length > 0) {
      await moveBasesToOriginal(tx, rows.map((row) => ({ id: row.id, latestId: row.latest_id, parent: row.u_parent })));
    }
    // deletions: fork pages whose original page is gone, and pages the fork deleted that the original changed
    const removing = deletions.remove.length === 0 ? [] : await tx.find(Page, { id: { $in: deletions.remove } });
    for (const page of deepestFirst(removing)) await removePage(tx, actor, fork, page);
    const rewritten = deletions.detach.filter((page) => page.content !== undefined);
    for (const page of rewritten.length === 0 ? [] : await tx.find(Page, { id: { $in: rewritten.map((row) => row.id) } })) {
      const previous = page.content;
      page.content = rewritten.find((row) => row.id === page.id)!.content!;
      if (page.content !== previous) recordVersion(tx, page, actor, previous);
      touch(page);
    }
    await tx.flush();
    await confirmDeletions(tx, fork.id, deletions);
    const added = await copyIn(tx, fork, original, { since: lastPulled }) + await copyIn(tx, fork, original, { ids: deletions.restore });
    const count = changing.length + added + removing.length + rewritten.length;
    await recordEvent(tx, { type: 'fork.pulled', actor, note: fork, original, pages: count });
    return count;
  });
}

/** The fork's copies of the original's pages given: original page id -> fork page id. */
async function copiesOf(tx: EntityManager, forkId: number, originalIds: number[]): Promise<Map<number, number>> {
  if (originalIds.length === 0) return new Map();
  const rows = await forkCopiesOf(tx, forkId, originalIds);
  return new Map(rows.map((row) => [row.origin_page_id, row.id]));
}

/**
 * Pages of the original the fork lacks, copied in set-based: those created since the fork last pulled (`since`;
 * not those the fork deleted on purpose), or the ones given (`ids`: deleted in the fork, taken back by a pull).
 */
async function copyIn(tx: EntityManager, fork: Note, original: Note, which: { since: Date } | { ids: number[] }): Promise<number> {
  if ('ids' in which && which.ids.length === 0) return 0;
  const now = currentTime();
  const added = await copyOriginalPagesIn(tx, fork.id, original.id, now, which);
  if (added.length === 0) return 0;
  await linkCopiedParents(tx, fork.id, added);
  return added.length;
}
