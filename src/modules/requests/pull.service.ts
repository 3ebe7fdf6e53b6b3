// Pulling: bringing a fork up to date with its original, three ways per page (ours: the fork, theirs: the original),
// content and place in the tree alike. A page only the original changed is taken, a page both changed is merged, a
// page only the fork changed stays; changed pages get a version in the fork, every page's base (version and parent)
// moves to the original's, and pages created in the original since the last pull are copied in. Conflicts left
// unresolved: 409 and nothing written.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits } from '../../config.ts';
import { currentTime } from '../../db/timestamps.ts';
import { recordEvent, type Actor } from '../events/events.ts';
import type { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { lockTree, movePage, removePage } from '../pages/tree.service.ts';
import { recordVersion, touch } from '../pages/versions.writer.ts';
import { budgetOf } from './merge/merge3.ts';
import { mergePage, mergeParent, type PageConflict, type PageText, type ParentKey, type Resolution } from './merge/pages.ts';
import { deepestFirst, mergeConflict } from './merge.service.ts';
import { confirmDeletions, planDeletions } from './pull-deletions.ts';

type PullRow = {
  id: number;
  f_title: string;
  f_content: string;
  b_title: string | null;
  b_content: string | null;
  u_title: string;
  u_content: string;
  latest_id: number;
  f_parent: number | null;
  f_parent_origin: number | null;
  b_parent: number | null;
  u_parent: number | null;
};

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
      : merge.status === 'unknown' && resolution && typeof resolution !== 'string' ? { title: ours.title, content: resolution.content }
      : undefined;
    if (merge.status === 'conflict' && result === undefined) conflicts.push(merge.conflict);
    if (merge.status === 'unknown' && result === undefined) bounded.push({ pageId: row.id, reason: merge.reason });
    if (result && (result.title !== ours.title || result.content !== ours.content)) outcome.content = result;
  }
  const tree = mergeParent(row.id, key(row.b_parent), forkParentKey(row), key(row.u_parent));
  const parent = tree.status === 'clean' ? tree.parent : resolution === 'theirs' ? key(row.u_parent) : resolution ? forkParentKey(row) : undefined;
  if (tree.status === 'conflict' && parent === undefined) conflicts.push(tree.conflict);
  if (parent !== undefined && parent !== forkParentKey(row)) outcome.parent = parent;
  return outcome;
}

export async function pullFork(em: EntityManager, actor: Actor, fork: Note, original: Note, resolutions: Map<number, Resolution>, limits: Limits): Promise<number> {
  return em.transactional(async (tx) => {
    await lockTree(tx, fork.id);
    await tx.execute('select id from pages where note_id = ? and origin_page_id is not null order by id for update', [fork.id]);
    const rows = await tx.execute<PullRow[]>(
      `select fp.id, fp.title as f_title, fp.content as f_content, b.title as b_title, b.content as b_content,
              u.title as u_title, u.content as u_content, latest.id as latest_id,
              fp.parent_id as f_parent, fpp.origin_page_id as f_parent_origin, fp.base_parent_id as b_parent, u.parent_id as u_parent
         from pages fp
         join pages u on u.id = fp.origin_page_id
         join page_versions latest on latest.page_id = u.id and latest.index = u.version_sequence
         left join page_versions b on b.id = fp.base_version_id
         left join pages fpp on fpp.id = fp.parent_id
        where fp.note_id = ? and (fp.base_version_id is distinct from latest.id or fp.base_parent_id is distinct from u.parent_id)
        order by fp.id`,
      [fork.id],
    );
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
      await tx.execute(
        `update pages p set base_version_id = x.base, base_parent_id = x.parent
           from unnest(?::int[], ?::int[], ?::int[]) as x (id, base, parent) where p.id = x.id`,
        [
          `{${rows.map((row) => row.id).join(',')}}`,
          `{${rows.map((row) => row.latest_id).join(',')}}`,
          `{${rows.map((row) => row.u_parent ?? 'NULL').join(',')}}`,
        ],
      );
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
  const rows = await tx.execute<{ id: number; origin_page_id: number }[]>(
    'select id, origin_page_id from pages where note_id = ? and origin_page_id = any(?::int[])',
    [forkId, `{${originalIds.join(',')}}`],
  );
  return new Map(rows.map((row) => [row.origin_page_id, row.id]));
}

/**
 * Pages of the original the fork lacks, copied in set-based: those created since the fork last pulled (`since`;
 * not those the fork deleted on purpose), or the ones given (`ids`: deleted in the fork, taken back by a pull).
 */
async function copyIn(tx: EntityManager, fork: Note, original: Note, which: { since: Date } | { ids: number[] }): Promise<number> {
  if ('ids' in which && which.ids.length === 0) return 0;
  const now = currentTime();
  const [condition, parameters] = 'since' in which
    ? ['u.created_at >= ? and not exists (select 1 from fork_deletions d where d.note_id = ? and d.upstream_page_id = u.id)', [which.since, fork.id]]
    : ['u.id = any(?::int[])', [`{${which.ids.join(',')}}`]];
  const added = await tx.execute<{ id: number }[]>(
    `insert into pages (note_id, parent_id, position, title, content, lock_version, version_sequence, origin_page_id, base_version_id, base_parent_id, created_at, updated_at)
     select ?, null, u.position, u.title, u.content, 1, 0, u.id, latest.id, u.parent_id, ?, ?
       from pages u join page_versions latest on latest.page_id = u.id and latest.index = u.version_sequence
      where u.note_id = ? and ${condition}
        and not exists (select 1 from pages fp where fp.note_id = ? and fp.origin_page_id = u.id)
      order by u.id
     returning id`,
    [fork.id, now, now, original.id, ...parameters, fork.id],
  );
  if (added.length === 0) return 0;
  await tx.execute(
    `update pages child set parent_id = parent_copy.id
       from pages origin, pages parent_copy
      where child.id = any(?::int[]) and origin.id = child.origin_page_id and origin.parent_id is not null
        and parent_copy.note_id = ? and parent_copy.origin_page_id = origin.parent_id`,
    [`{${added.map((row) => row.id).join(',')}}`, fork.id],
  );
  return added.length;
}
