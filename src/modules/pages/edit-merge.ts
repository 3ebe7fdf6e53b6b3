// Merge-on-write (updatePage with an older `page[base_version]`): the write's title and content merged three ways with
// the page as it is now, over the version the write was based on. The merge engine of requests (text/merge3.ts:
// blocks, then words by Intl.Segmenter) does the content; the title merges as one region. Pure, no database; bounded
// like a request's merge (size, pieces, time): past the bound the result is `unknown`, never a guessed merge.
import type { EditConflict } from '../../../generated/client/types.gen.ts';
import { budgetOf, hasConflicts, MergeBoundExceeded, mergeText, mergeWhole, regionsOf, resolveChunks, type Budget, type Chunk } from '../text/merge3.ts';

export type PageText = { title: string; content: string };

export type EditMerge =
  | { status: 'clean'; result: PageText }
  | { status: 'conflict'; conflicts: EditConflict[] }
  | { status: 'unknown'; reason: string };

/** Merges `theirs` (the write) into `ours` (the page now), both derived from `base` (the version the write names). */
export function mergeEdit(base: PageText, ours: PageText, theirs: PageText, budget: Budget = budgetOf()): EditMerge {
  let content: Chunk[];
  try {
    content = mergeText(base.content, ours.content, theirs.content, budget);
  } catch (error) {
    if (error instanceof MergeBoundExceeded) return { status: 'unknown', reason: error.reason };
    throw error;
  }
  const title = mergeWhole(base.title, ours.title, theirs.title);
  const conflicts: EditConflict[] = [];
  if (hasConflicts(title)) conflicts.push({ kind: 'title', regions: regionsOf(title) });
  if (hasConflicts(content)) conflicts.push({ kind: 'content', regions: regionsOf(content) });
  if (conflicts.length > 0) return { status: 'conflict', conflicts };
  return { status: 'clean', result: { title: resolveChunks(title, 'ours'), content: resolveChunks(content, 'ours') } };
}
