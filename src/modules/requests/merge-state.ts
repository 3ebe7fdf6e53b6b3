// Where a request stands: for each page it carries, the three sides (B the fork's base when the request was made,
// U the original's page now, F the proposed version), its classification and its merge; for the request, whether it
// can merge now. Loaded in one statement for any number of requests; merges are computed lazily, when a request is
// presented or merged, and kept in memory by the versions involved (a change on either side is a new key).
import type { EntityManager } from '@mikro-orm/postgresql';
import { mergeInBackground, type BackgroundMerge } from './merge/background.ts';
import { budgetOf, type Budget } from '../text/merge3.ts';
import {
  classify, mergePage, mergeParent, oneRegion, type Classification, type PageConflict, type PageMerge, type ParentKey, type ParentMerge, type Side,
} from './merge/pages.ts';
import { requestPageContents, requestPageRows, type RequestPageRow } from './requests.repository.ts';


/** The page a request page's conflicts and resolutions name: the fork's page, or the original's for a `delete`. */
export const conflictPageId = (row: RequestPageRow): number => row.from_page_id ?? row.to_page_id ?? 0;

/** Most bytes of page content a list of requests loads to compute merges (read the request itself for the rest). */
export const LIST_CONTENT_BYTES = 8 * 1024 * 1024;

/**
 * The pages of the requests given, in order, with the titles of their sides where the request is still open; the
 * contents of the sides (a second statement) only where needed: every one with `all` (a merge), else those whose
 * merge is not in memory yet, up to `contentBytes` in all.
 */
export async function loadRequestPages(
  em: EntityManager,
  requestIds: readonly number[],
  options: { all: true } | { contentBytes: number },
): Promise<RequestPageRow[]> {
  if (requestIds.length === 0) return [];
  const rows = await requestPageRows(em, requestIds);
  let left = 'all' in options ? Infinity : options.contentBytes;
  const loading = rows.filter((row) => {
    row.loaded = false;
    if (!row.active || (!('all' in options) && cache.has(keyOf(row))) || Number(row.bytes) > left) return false;
    left -= Number(row.bytes);
    return true;
  });
  if (loading.length === 0) return rows;
  const contents = await requestPageContents(em, loading.map((row) => row.id));
  const byId = new Map(contents.map((row) => [row.id, row]));
  for (const row of loading) {
    const content = byId.get(row.id);
    if (!content) continue;
    Object.assign(row, content, { loaded: true });
  }
  return rows;
}

export type PageState = { classification: Classification; merge: PageMerge; tree: ParentMerge | undefined };

const parentKey = (pageId: number | null): ParentKey => (pageId === null ? '' : String(pageId));

/** The parents (ours: the original's, theirs: the fork's), for an `update` whose original page is there. */
export function parentsOf(row: RequestPageRow): { base: ParentKey; ours: ParentKey; theirs: ParentKey } | undefined {
  if (row.type !== 'update' || row.to_page_id === null) return undefined;
  const theirs = row.f_parent === null ? '' : row.f_parent_origin === null ? `fork:${row.f_parent}` : String(row.f_parent_origin);
  return { base: parentKey(row.b_parent), ours: parentKey(row.u_parent), theirs };
}

const side = (title: string | null, content: string | null | undefined): Side => (title === null ? null : { title, content: content ?? '' });

/**
 * The sides of a page: a page new in the fork has no base and no upstream page; an `update` whose upstream page is
 * gone was deleted there since the fork's base (a `delete_modify` conflict, with the base unknown: empty).
 */
export function sidesOf(row: RequestPageRow): { base: Side; ours: Side; theirs: Side; deletedUpstream: boolean } {
  const theirs = side(row.f_title, row.f_content);
  const ours = side(row.u_title, row.u_content);
  const deletedUpstream = row.type === 'update' && row.to_page_id === null;
  const base = deletedUpstream ? { title: theirs?.title ?? '', content: '' } : side(row.b_title, row.b_content);
  return { base, ours, theirs, deletedUpstream };
}

/** Past this many bytes (the three sides together), a diverged page is merged in a worker when a request is read. */
export const INLINE_MERGE_BYTES = 256 * 1024;

/** As PageState, where the merge may have come from the worker (a conflict's data without its resolver). */
export type ReadPageState = { classification: Classification | null; merge: PageMerge | BackgroundMerge; tree: ParentMerge | undefined };

const cache = new Map<string, ReadPageState>();
const CACHE_ENTRIES = 1000;

function remember(key: string, state: ReadPageState): void {
  // a merge past the time budget may fit another time: only what is certain is kept
  if (state.merge.status === 'unknown') return;
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, state);
}

const keyOf = (row: RequestPageRow): string =>
  `${row.id}:${row.page_version_id}:${row.base_version_id}:${row.to_page_id}@${row.u_lock}:${row.u_parent}:${row.b_parent}:${row.f_parent}`;

function shapeOf(row: RequestPageRow) {
  const sides = sidesOf(row);
  const parents = parentsOf(row);
  const tree = parents && mergeParent(conflictPageId(row), parents.base, parents.ours, parents.theirs);
  return { sides, tree, classification: classify(sides.base, sides.ours, sides.theirs) };
}

/**
 * A deletion the merge would make (the original did not change the page) is still a `delete_modify` conflict while
 * the original's page has sub-pages the request does not delete: deleting it would take them along unasked.
 * `theirs` deletes the page with them, `ours` (or final content) keeps it.
 */
function keepSubPages(row: RequestPageRow, merge: PageMerge): PageMerge {
  if (row.type !== 'delete' || merge.status !== 'clean' || merge.result !== null || !Number(row.u_kept_children)) return merge;
  const ours = sidesOf(row).ours;
  if (ours === null) return merge;
  return {
    status: 'conflict',
    conflict: {
      page_id: conflictPageId(row),
      kind: 'delete_modify',
      regions: [{ base: row.b_content ?? '', ours: ours.content, theirs: '' }],
    },
    resolve: (resolution) => {
      const decided = oneRegion(conflictPageId(row), resolution);
      return decided === 'theirs' ? null : decided === 'ours' ? ours : { title: ours.title, content: decided.content };
    },
  };
}

/** The classification and merge of one open request page (ours: the original, theirs: the fork), for a write. */
export function pageState(row: RequestPageRow, budget: Budget = budgetOf()): PageState {
  const { sides, tree, classification } = shapeOf(row);
  const merge = keepSubPages(row, mergePage(conflictPageId(row), sides.base, sides.ours, sides.theirs, budget));
  const state = { classification, merge, tree };
  remember(keyOf(row), state);
  return state;
}

const size = (side: Side): number => (side === null ? 0 : side.content.length + side.title.length);

/**
 * As pageState, for a read: kept in memory by the versions involved; a big diverged page not merged yet is handed
 * to the worker and shows as unknown ("being computed") until its result is in.
 */
export function readPageState(row: RequestPageRow, budget: Budget): ReadPageState {
  const key = keyOf(row);
  const known = cache.get(key);
  if (known) return known;
  if (!row.loaded) {
    return { classification: null, merge: { status: 'unknown', reason: 'too much to merge in one list of requests: read the request itself' }, tree: undefined };
  }
  const { sides, tree, classification } = shapeOf(row);
  if (classification === 'diverged' && size(sides.base) + size(sides.ours) + size(sides.theirs) > INLINE_MERGE_BYTES) {
    mergeInBackground(key, conflictPageId(row), sides, (merge) => remember(key, { classification, merge, tree }));
    return { classification, merge: { status: 'unknown', reason: 'the merge is being computed; read the request again in a moment' }, tree };
  }
  return pageState(row, budget);
}

export type Mergeability = {
  mergeable: boolean | null;
  state: 'clean' | 'conflicting' | 'outdated' | 'merged' | 'closed' | null;
  reason: string | null;
  pages: Map<number, { classification: Classification | null; conflicts: PageConflict[] }>;
};

/** Whether a request can merge now, from its status and its pages' states. */
export function mergeabilityOf(status: string, rows: readonly RequestPageRow[]): Mergeability {
  const pages = new Map<number, { classification: Classification | null; conflicts: PageConflict[] }>();
  if (status === 'merged' || status === 'closed') {
    for (const row of rows) pages.set(row.id, { classification: null, conflicts: [] });
    return { mergeable: false, state: status, reason: null, pages };
  }
  const budget = budgetOf();
  let conflicting = false;
  let outdated = false;
  let unknown: string | null = null;
  for (const row of rows) {
    const { classification, merge, tree } = readPageState(row, budget);
    const conflicts = [...(merge.status === 'conflict' ? [merge.conflict] : []), ...(tree?.status === 'conflict' ? [tree.conflict] : [])];
    pages.set(row.id, { classification, conflicts });
    if (conflicts.length > 0) conflicting = true;
    if (merge.status === 'unknown') unknown ??= merge.reason;
    if (classification === 'upstream_only' || classification === 'identical' || classification === 'diverged') outdated = true;
  }
  if (conflicting) return { mergeable: false, state: 'conflicting', reason: null, pages };
  if (unknown !== null) return { mergeable: null, state: null, reason: unknown, pages };
  return { mergeable: true, state: outdated ? 'outdated' : 'clean', reason: null, pages };
}
