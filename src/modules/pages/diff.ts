// Line diff of two page versions rendered as HTML (design.md, "Diff markup").
//
// Bounds (so a diff never blocks the event loop for long, whatever the input):
// - The line diff (jsdiff's Myers, O((N+M)·D)) runs on the lines left once the common prefix and
//   suffix are trimmed, with `maxEditLength` = DIFF_MAX_EDIT_COST lines (overridable by
//   `maxEditCost`) and a DIFF_TIMEOUT_MS safety net. Before running it, a linear-time lower bound
//   on the edit distance (N + M − 2·multiset intersection) skips it when it could only fail.
//   Past the bound the trimmed middle is shown as all lines deleted, then all lines inserted,
//   `bounded` is true and the outer div gets the class `diff-bounded`.
// - Words are highlighted (`<strong>`) only in paired lines of at most WORD_DIFF_MAX_LINE_CHARS
//   characters each, with at most WORD_DIFF_MAX_EDIT_COST word/space tokens of edit distance, and
//   for at most WORD_DIFF_BUDGET_CHARS characters per call; other changed lines are shown whole.
//   No word highlighting in a bounded diff (its pairs are unrelated lines).
import { diffArrays, diffWordsWithSpace } from 'diff';

export const DIFF_MAX_EDIT_COST = 1000;
export const DIFF_TIMEOUT_MS = 250;
export const WORD_DIFF_MAX_LINE_CHARS = 2000;
export const WORD_DIFF_MAX_EDIT_COST = 100;
export const WORD_DIFF_BUDGET_CHARS = 128 * 1024;

export interface DiffOptions {
  /** Maximum line edit distance computed exactly (default DIFF_MAX_EDIT_COST). */
  maxEditCost?: number;
}

export interface DiffResult {
  html: string;
  /** True when the edit bound was hit and the changed region is shown as all deleted, all inserted. */
  bounded: boolean;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return /[&<>"']/.test(text) ? text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c) : text;
}

/** Splits on `\n` (`\r\n` counts as `\n`); a trailing newline adds no empty line; '' has no lines. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Consecutive lines of one kind, as the line diff gives them (never copied line by line). */
type Run = { kind: 'same' | 'del' | 'ins'; lines: readonly string[] };

/** Lower bound on the line edit distance: N + M − 2·(lines the two sides could share). */
function editLowerBound(a: readonly string[], b: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let shared = 0;
  for (const line of b) {
    const n = counts.get(line) ?? 0;
    if (n > 0) {
      shared++;
      counts.set(line, n - 1);
    }
  }
  return a.length + b.length - 2 * shared;
}

/** Exact line diff of the middle, or undefined past the bound. */
function diffMiddle(a: string[], b: string[], maxEditCost: number): Run[] | undefined {
  if (a.length === 0 || b.length === 0) return [{ kind: 'del', lines: a }, { kind: 'ins', lines: b }];
  if (editLowerBound(a, b) > maxEditCost) return undefined;
  const changes = diffArrays(a, b, { maxEditLength: maxEditCost, timeout: DIFF_TIMEOUT_MS });
  if (changes === undefined) return undefined;
  return changes.map((change): Run => ({ kind: change.added ? 'ins' : change.removed ? 'del' : 'same', lines: change.value }));
}

type Segment = { text: string; changed: boolean };

/** Renders one side of a changed pair with its changed words in <strong>. */
function renderSide(segments: Segment[]): string {
  // Whitespace between two changed words is part of the change ("<strong>two three</strong>").
  const marked = segments.map((s, i) => ({
    text: s.text,
    changed: s.changed || (/^\s+$/.test(s.text) && segments[i - 1]?.changed === true && segments[i + 1]?.changed === true),
  }));
  let html = '';
  let run: string[] = [];
  let runChanged = false;
  const flush = (): void => {
    const text = escapeHtml(run.join(''));
    if (text !== '') html += runChanged ? `<strong>${text}</strong>` : text;
    run = [];
  };
  for (const s of marked) {
    if (s.changed !== runChanged) {
      flush();
      runChanged = s.changed;
    }
    run.push(s.text);
  }
  flush();
  return html;
}

/** Word-level rendering of a deleted/inserted pair, or undefined when out of bounds. */
function wordPair(before: string, after: string, budget: { chars: number }): [string, string] | undefined {
  if (before.length > WORD_DIFF_MAX_LINE_CHARS || after.length > WORD_DIFF_MAX_LINE_CHARS) return undefined;
  if (budget.chars < before.length + after.length) return undefined;
  budget.chars -= before.length + after.length;
  const changes = diffWordsWithSpace(before, after, { maxEditLength: WORD_DIFF_MAX_EDIT_COST });
  if (changes === undefined) return undefined;
  const del = changes.filter((c) => !c.added).map((c) => ({ text: c.value, changed: c.removed }));
  const ins = changes.filter((c) => !c.removed).map((c) => ({ text: c.value, changed: c.added }));
  return [renderSide(del), renderSide(ins)];
}

/**
 * Appends a changed region to `out`: its deleted lines, then its inserted ones, the n-th deleted and n-th inserted
 * line paired for word highlighting. The markup goes out in pieces, joined once for the whole diff (a diff of two
 * 1 MiB versions is a few MB of HTML: no string per line or per region on the way).
 */
function renderHunk(out: string[], dels: readonly string[], inss: readonly string[], words: boolean, budget: { chars: number }): void {
  const pairs: ([string, string] | undefined)[] = [];
  if (words) for (let i = 0; i < Math.min(dels.length, inss.length); i++) pairs.push(wordPair(dels[i]!, inss[i]!, budget));
  for (let i = 0; i < dels.length; i++) out.push('<li class="del"><del>', pairs[i]?.[0] ?? escapeHtml(dels[i]!), '</del></li>');
  for (let i = 0; i < inss.length; i++) out.push('<li class="ins"><ins>', pairs[i]?.[1] ?? escapeHtml(inss[i]!), '</ins></li>');
}

function renderSame(out: string[], lines: readonly string[], from: number, to: number): void {
  for (let i = from; i < to; i++) out.push('<li class="unchanged"><span>', escapeHtml(lines[i]!), '</span></li>');
}

export function renderDiff(before: string, after: string, options: DiffOptions = {}): DiffResult {
  const maxEditCost = options.maxEditCost ?? DIFF_MAX_EDIT_COST;
  const a = splitLines(before);
  const b = splitLines(after);
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  if (prefix === a.length && prefix === b.length) return { html: '<div class="diff"></div>', bounded: false };

  const aMid = a.slice(prefix, a.length - suffix);
  const bMid = b.slice(prefix, b.length - suffix);
  const exact = diffMiddle(aMid, bMid, maxEditCost);
  const bounded = exact === undefined;
  const runs: Run[] = exact ?? [{ kind: 'del', lines: aMid }, { kind: 'ins', lines: bMid }];

  const budget = { chars: WORD_DIFF_BUDGET_CHARS };
  const out: string[] = [bounded ? '<div class="diff diff-bounded"><ul>' : '<div class="diff"><ul>'];
  renderSame(out, a, 0, prefix);
  // a changed region: the deleted and inserted lines between two unchanged ones
  let dels: readonly string[] = [];
  let inss: readonly string[] = [];
  const flushHunk = (): void => {
    if (dels.length > 0 || inss.length > 0) renderHunk(out, dels, inss, !bounded, budget);
    dels = [];
    inss = [];
  };
  for (const run of runs) {
    if (run.kind === 'del') dels = dels.length === 0 ? run.lines : [...dels, ...run.lines];
    else if (run.kind === 'ins') inss = inss.length === 0 ? run.lines : [...inss, ...run.lines];
    else {
      flushHunk();
      renderSame(out, run.lines, 0, run.lines.length);
    }
  }
  flushHunk();
  renderSame(out, a, a.length - suffix, a.length);
  out.push('</ul></div>');
  return { html: out.join(''), bounded };
}
