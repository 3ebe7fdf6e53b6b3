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

type Op = { kind: 'same' | 'del' | 'ins'; line: string };

/** Lower bound on the line edit distance: N + M − 2·(lines the two sides could share). */
function editLowerBound(a: string[], b: string[]): number {
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
function diffMiddle(a: string[], b: string[], maxEditCost: number): Op[] | undefined {
  if (a.length === 0 || b.length === 0) {
    return [...a.map((line): Op => ({ kind: 'del', line })), ...b.map((line): Op => ({ kind: 'ins', line }))];
  }
  if (editLowerBound(a, b) > maxEditCost) return undefined;
  const changes = diffArrays(a, b, { maxEditLength: maxEditCost, timeout: DIFF_TIMEOUT_MS });
  if (changes === undefined) return undefined;
  const ops: Op[] = [];
  for (const change of changes) {
    const kind = change.added ? 'ins' : change.removed ? 'del' : 'same';
    for (const line of change.value) ops.push({ kind, line });
  }
  return ops;
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

function renderHunk(dels: string[], inss: string[], words: boolean, budget: { chars: number }): string {
  const delHtml = dels.map(escapeHtml);
  const insHtml = inss.map(escapeHtml);
  if (words) {
    for (let i = 0; i < Math.min(dels.length, inss.length); i++) {
      const pair = wordPair(dels[i] ?? '', inss[i] ?? '', budget);
      if (pair) [delHtml[i], insHtml[i]] = pair;
    }
  }
  return (
    delHtml.map((h) => `<li class="del"><del>${h}</del></li>`).join('') +
    insHtml.map((h) => `<li class="ins"><ins>${h}</ins></li>`).join('')
  );
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
  const ops: Op[] = [
    ...a.slice(0, prefix).map((line): Op => ({ kind: 'same', line })),
    ...(exact ?? [...aMid.map((line): Op => ({ kind: 'del', line })), ...bMid.map((line): Op => ({ kind: 'ins', line }))]),
    ...a.slice(a.length - suffix).map((line): Op => ({ kind: 'same', line })),
  ];

  const budget = { chars: WORD_DIFF_BUDGET_CHARS };
  const parts: string[] = [bounded ? '<div class="diff diff-bounded"><ul>' : '<div class="diff"><ul>'];
  let dels: string[] = [];
  let inss: string[] = [];
  const flushHunk = (): void => {
    if (dels.length > 0 || inss.length > 0) parts.push(renderHunk(dels, inss, !bounded, budget));
    dels = [];
    inss = [];
  };
  for (const op of ops) {
    if (op.kind === 'del') dels.push(op.line);
    else if (op.kind === 'ins') inss.push(op.line);
    else {
      flushHunk();
      parts.push(`<li class="unchanged"><span>${escapeHtml(op.line)}</span></li>`);
    }
  }
  flushHunk();
  parts.push('</ul></div>');
  return { html: parts.join(''), bounded };
}
