// The three-way merge of page versions (design.md, "Forks and requests"): pure, no database. Blocks first (diff3
// over the blocks of the HTML), then words inside the regions where both sides changed the same blocks; what still
// conflicts is returned as data (base, ours, theirs), never written as markers. Bounded: past the size cap or the
// time budget the answer is "unknown" with a reason, never a guessed conflict.
import { diff3Merge } from 'node-diff3';
import { splitBlocks, splitWords } from './merge-tokens.ts';

export type Region = { base: string; ours: string; theirs: string };
/** A merged text as pieces: agreed text, or a region both sides changed differently. */
export type Chunk = { ok: string } | { conflict: Region };

export type MergeLimits = {
  /** Largest side (UTF-8 bytes) merged; a larger one is past the bound. */
  maxBytes: number;
  /** Most blocks compared at once (after the common start and end are set aside). */
  maxBlocks: number;
  /** Time budget of one merge call, in milliseconds. */
  timeBudgetMs: number;
};

export const DEFAULT_MERGE_LIMITS: MergeLimits = { maxBytes: 2 * 1024 * 1024, maxBlocks: 50_000, timeBudgetMs: 2_000 };

/** Thrown when a merge would go past its bound; `reason` says which. */
export class MergeBoundExceeded extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
  }
}

export type Budget = { deadline: number; limits: MergeLimits };

export function budgetOf(limits: MergeLimits = DEFAULT_MERGE_LIMITS): Budget {
  return { deadline: Date.now() + limits.timeBudgetMs, limits };
}

function checkTime(budget: Budget): void {
  if (Date.now() > budget.deadline) throw new MergeBoundExceeded(`the merge took longer than ${budget.limits.timeBudgetMs} ms`);
}

/** diff3 over three sequences, after setting aside what all three share at the start and at the end. */
function merge3Sequences(ours: string[], base: string[], theirs: string[], budget: Budget): { ok?: string[]; conflict?: { a: string[]; o: string[]; b: string[] } }[] {
  let prefix = 0;
  const shortest = Math.min(ours.length, base.length, theirs.length);
  while (prefix < shortest && ours[prefix] === base[prefix] && theirs[prefix] === base[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < shortest - prefix &&
    ours[ours.length - 1 - suffix] === base[base.length - 1 - suffix] &&
    theirs[theirs.length - 1 - suffix] === base[base.length - 1 - suffix]
  ) suffix++;
  const middle = (list: string[]): string[] => list.slice(prefix, list.length - suffix);
  const [a, o, b] = [middle(ours), middle(base), middle(theirs)];
  if (Math.max(a.length, o.length, b.length) > budget.limits.maxBlocks) {
    throw new MergeBoundExceeded(`more than ${budget.limits.maxBlocks} pieces changed`);
  }
  const regions = diff3Merge<string>(a, o, b, { excludeFalseConflicts: true });
  return [{ ok: base.slice(0, prefix) }, ...regions, { ok: base.slice(base.length - suffix) }];
}

/** Three-way merge of two HTML texts derived from `base`: blocks, then words where both changed the same blocks. */
export function mergeText(base: string, ours: string, theirs: string, budget: Budget = budgetOf()): Chunk[] {
  if (ours === theirs || theirs === base) return [{ ok: ours }];
  if (ours === base) return [{ ok: theirs }];
  for (const side of [base, ours, theirs]) {
    if (Buffer.byteLength(side, 'utf8') > budget.limits.maxBytes) throw new MergeBoundExceeded(`a side is larger than ${budget.limits.maxBytes} bytes`);
  }
  const chunks: Chunk[] = [];
  const push = (chunk: Chunk): void => {
    const last = chunks[chunks.length - 1];
    if ('ok' in chunk && last && 'ok' in last) last.ok += chunk.ok;
    else if (!('ok' in chunk) || chunk.ok !== '') chunks.push(chunk);
  };
  for (const region of merge3Sequences(splitBlocks(ours), splitBlocks(base), splitBlocks(theirs), budget)) {
    checkTime(budget);
    if (region.ok) {
      push({ ok: region.ok.join('') });
      continue;
    }
    const { a, o, b } = region.conflict!;
    // the same number of blocks on all sides: block by block (an edit next to a conflict stays merged); else the
    // region as one
    const pairs: [string, string, string][] = a.length === o.length && b.length === o.length
      ? o.map((block, i) => [a[i]!, block, b[i]!])
      : [[a.join(''), o.join(''), b.join('')]];
    for (const [ours, base, theirs] of pairs) push(mergeWords(base, ours, theirs, budget));
  }
  return chunks;
}

/** One region both sides changed, merged word by word: agreed text, or the region as a conflict. */
function mergeWords(base: string, ours: string, theirs: string, budget: Budget): Chunk {
  if (ours === theirs || theirs === base) return { ok: ours };
  if (ours === base) return { ok: theirs };
  const words = merge3Sequences(splitWords(ours), splitWords(base), splitWords(theirs), budget);
  if (words.every((piece) => piece.ok)) return { ok: words.map((piece) => piece.ok!.join('')).join('') };
  return { conflict: { base, ours, theirs } };
}

/** A text merged as one region (a title): the side that changed it, or a conflict when both changed it differently. */
export function mergeWhole(base: string, ours: string, theirs: string): Chunk[] {
  if (ours === theirs || theirs === base) return [{ ok: ours }];
  if (ours === base) return [{ ok: theirs }];
  return [{ conflict: { base, ours, theirs } }];
}

export function hasConflicts(chunks: readonly Chunk[]): boolean {
  return chunks.some((chunk) => 'conflict' in chunk);
}

/** The text with every conflict region taken from one side. */
export function resolveChunks(chunks: readonly Chunk[], side: 'ours' | 'theirs'): string {
  return chunks.map((chunk) => ('ok' in chunk ? chunk.ok : chunk.conflict[side])).join('');
}

/** One disputed region's decision: a side, or the stretch's text as it should read. */
export type RegionChoice = 'ours' | 'theirs' | { content: string };

/** The chunks with their conflicts decided in order from `choices`, starting at `from`. */
export function decideChunks(chunks: readonly Chunk[], choices: readonly RegionChoice[], from: number): { text: string; next: number } {
  let next = from;
  const text = chunks.map((chunk) => {
    if ('ok' in chunk) return chunk.ok;
    const choice = choices[next++]!;
    return typeof choice === 'string' ? chunk.conflict[choice] : choice.content;
  }).join('');
  return { text, next };
}

export function regionsOf(chunks: readonly Chunk[]): Region[] {
  return chunks.flatMap((chunk) => ('conflict' in chunk ? [chunk.conflict] : []));
}
