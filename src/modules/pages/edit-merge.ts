// Merge-on-write (updatePage with an older `page[base_version]`): the write's title and content merged three ways with
// the page as it is now, over the version the write was based on. The merge engine of requests (text/merge3.ts:
// blocks, then words by Intl.Segmenter) does the content; the title merges as one region. Pure, no database; bounded
// like a request's merge (size, pieces, time): past the bound the result is `unknown`, never a guessed merge.
import type { EditConflict } from '../../../generated/client/types.gen.ts';
import { budgetOf, decideChunks, hasConflicts, MergeBoundExceeded, mergeText, mergeWhole, regionsOf, resolveChunks, type Budget, type Chunk, type RegionChoice } from '../text/merge3.ts';

export type PageText = { title: string; content: string };

export type EditMerge =
  | { status: 'clean'; result: PageText }
  | { status: 'conflict'; conflicts: EditConflict[] }
  | { status: 'unknown'; reason: string };

/** Merges `theirs` (the write) into `ours` (the page now), both derived from `base` (the version the write names). */
export function mergeEdit(base: PageText, ours: PageText, theirs: PageText, budget: Budget = budgetOf()): EditMerge {
  const merged = chunksOf(base, ours, theirs, budget);
  if ('reason' in merged) return { status: 'unknown', reason: merged.reason };
  const { title, content } = merged;
  const conflicts: EditConflict[] = [];
  if (hasConflicts(title)) conflicts.push({ kind: 'title', regions: regionsOf(title) });
  if (hasConflicts(content)) conflicts.push({ kind: 'content', regions: regionsOf(content) });
  if (conflicts.length > 0) return { status: 'conflict', conflicts };
  return { status: 'clean', result: { title: resolveChunks(title, 'ours'), content: resolveChunks(content, 'ours') } };
}

function chunksOf(base: PageText, ours: PageText, theirs: PageText, budget: Budget): { title: Chunk[]; content: Chunk[] } | { reason: string } {
  try {
    return { title: mergeWhole(base.title, ours.title, theirs.title), content: mergeText(base.content, ours.content, theirs.content, budget) };
  } catch (error) {
    if (error instanceof MergeBoundExceeded) return { reason: error.reason };
    throw error;
  }
}

/**
 * The same merge with its conflicts decided region by region, in the order `mergeEdit` lists them (the title's
 * region, then the content's): the text to write over `ours`; `stale` when `choices` does not decide exactly the
 * regions there are (the sides are not the ones the choices were made on), `unknown` past the merge's bounds.
 */
export function decideEdit(base: PageText, ours: PageText, theirs: PageText, choices: readonly RegionChoice[], budget: Budget = budgetOf()): PageText | 'stale' | { unknown: string } {
  const merged = chunksOf(base, ours, theirs, budget);
  if ('reason' in merged) return { unknown: merged.reason };
  if (regionsOf(merged.title).length + regionsOf(merged.content).length !== choices.length) return 'stale';
  const title = decideChunks(merged.title, choices, 0);
  return { title: title.text, content: decideChunks(merged.content, choices, title.next).text };
}
