// Merging one page three ways: its base (the upstream version the fork copied or last pulled), ours (the side being
// written to) and theirs (the side brought in). For a request, ours is the upstream and theirs the fork; for a pull,
// ours is the fork and theirs the upstream. `null` is a page that is not there (deleted, or never existed).
import { conflict } from '../../errors.ts';
import { budgetOf, decideChunks, hasConflicts, MergeBoundExceeded, mergeText, mergeWhole, regionsOf, resolveChunks, type Budget, type Chunk, type Region, type RegionChoice } from '../../text/merge3.ts';

export type PageText = { title: string; content: string };
export type Side = PageText | null;

/** From the fork's point of view: B the base, U the upstream now, F the fork now. */
export type Classification = 'unchanged' | 'fork_only' | 'upstream_only' | 'identical' | 'diverged';
export type ConflictKind = 'content' | 'delete_modify' | 'tree';
export type PageConflict = { page_id: number; kind: ConflictKind; regions: Region[] };
export type { RegionChoice };
/**
 * `ours`, `theirs` (each conflicting region from that side), the page's final HTML, or a decision per region (the
 * title's region first, then the content's; `take` decides a tree conflict of the same page, ours when absent).
 */
export type Resolution = 'ours' | 'theirs' | { content: string } | { regions: readonly RegionChoice[]; take?: 'ours' | 'theirs' | undefined };

/** The page's final HTML where the resolution gives it whole (what decides a page the merge could not read). */
export function wholeContent(resolution: Resolution | undefined): string | undefined {
  return typeof resolution === 'object' && 'content' in resolution ? resolution.content : undefined;
}

/** The side a tree conflict takes under this resolution (ours unless it says theirs). */
export function treeSide(resolution: Resolution): 'ours' | 'theirs' {
  if (typeof resolution === 'string') return resolution;
  return 'regions' in resolution && resolution.take === 'theirs' ? 'theirs' : 'ours';
}

/** The regions' decisions, when there is one for each of `count` regions: else the page changed since they were read. */
function choicesFor(pageId: number, resolution: { regions: readonly RegionChoice[] }, count: number): readonly RegionChoice[] {
  if (resolution.regions.length !== count) {
    throw conflict('stale_resolution', `page ${pageId} has ${count} conflicting region(s) now; the resolution decides ${resolution.regions.length}: read the conflicts again`);
  }
  return resolution.regions;
}

/** The decision for a conflict of one region (delete_modify): the resolution itself, or its one region's. */
export function oneRegion(pageId: number, resolution: Resolution): RegionChoice {
  return typeof resolution === 'object' && 'regions' in resolution ? choicesFor(pageId, resolution, 1)[0]! : resolution;
}

export type PageMerge =
  | { status: 'clean'; result: Side }
  | { status: 'conflict'; conflict: PageConflict; resolve: (resolution: Resolution) => Side }
  | { status: 'unknown'; reason: string };

const same = (x: Side, y: Side): boolean => (x === null ? y === null : y !== null && x.title === y.title && x.content === y.content);

export function classify(base: Side, upstream: Side, fork: Side): Classification {
  const forkMoved = !same(fork, base);
  const upstreamMoved = !same(upstream, base);
  if (!forkMoved) return upstreamMoved ? 'upstream_only' : 'unchanged';
  if (!upstreamMoved) return 'fork_only';
  return same(fork, upstream) ? 'identical' : 'diverged';
}

/** Merges one page; `budget` bounds the time spent (shared across the pages of one request). */
export function mergePage(pageId: number, base: Side, ours: Side, theirs: Side, budget: Budget = budgetOf()): PageMerge {
  if (same(ours, theirs) || same(theirs, base)) return { status: 'clean', result: ours };
  if (same(ours, base)) return { status: 'clean', result: theirs };
  // both moved, differently
  if (ours === null || theirs === null) {
    const kept = (ours ?? theirs)!;
    const region: Region = { base: base?.content ?? '', ours: ours?.content ?? '', theirs: theirs?.content ?? '' };
    return {
      status: 'conflict',
      conflict: { page_id: pageId, kind: 'delete_modify', regions: [region] },
      resolve: (resolution) => {
        const decided = oneRegion(pageId, resolution);
        return decided === 'ours' ? ours : decided === 'theirs' ? theirs : { title: kept.title, content: decided.content };
      },
    };
  }
  const from = base ?? { title: ours.title, content: '' };
  let content: Chunk[];
  try {
    content = mergeText(from.content, ours.content, theirs.content, budget);
  } catch (error) {
    if (error instanceof MergeBoundExceeded) return { status: 'unknown', reason: error.reason };
    throw error;
  }
  const title = mergeWhole(from.title, ours.title, theirs.title);
  if (!hasConflicts(content) && !hasConflicts(title)) {
    return { status: 'clean', result: { title: resolveChunks(title, 'ours'), content: resolveChunks(content, 'ours') } };
  }
  return {
    status: 'conflict',
    conflict: { page_id: pageId, kind: 'content', regions: [...regionsOf(title), ...regionsOf(content)] },
    resolve: (resolution) => {
      if (typeof resolution === 'string') return { title: resolveChunks(title, resolution), content: resolveChunks(content, resolution) };
      if ('content' in resolution) return { title: resolveChunks(title, 'ours'), content: resolution.content };
      const choices = choicesFor(pageId, resolution, regionsOf(title).length + regionsOf(content).length);
      const decidedTitle = decideChunks(title, choices, 0);
      return { title: decidedTitle.text, content: decideChunks(content, choices, decidedTitle.next).text };
    },
  };
}

/**
 * Where a page sits, as a key both sides share: '' the top level, the original's page id (`'12'`) for a parent that
 * exists on both sides, `'fork:34'` for a parent only the fork has.
 */
export type ParentKey = string;
export type ParentMerge = { status: 'clean'; parent: ParentKey } | { status: 'conflict'; conflict: PageConflict };

/** Three-way merge of a page's parent: moved on one side -> moved; moved to different parents on both -> `tree`. */
export function mergeParent(pageId: number, base: ParentKey, ours: ParentKey, theirs: ParentKey): ParentMerge {
  if (ours === theirs || theirs === base) return { status: 'clean', parent: ours };
  if (ours === base) return { status: 'clean', parent: theirs };
  return { status: 'conflict', conflict: { page_id: pageId, kind: 'tree', regions: [{ base, ours, theirs }] } };
}
