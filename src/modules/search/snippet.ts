// Highlighted snippets: a short window of the original (un-normalized) text around the first match, HTML-escaped,
// with every occurrence of a term wrapped in <mark>. The only markup a snippet ever carries is <mark>. The text is
// folded as the index folds it (foldCase), so a term is found where the search found it.
import { foldCase } from '../text/fold.ts';

/** Escapes everything that could be markup (the snippet's own <mark> tags are added after). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Characters of context shown before the first match, and the snippet's length. */
const BEFORE = 40;
const LENGTH = 160;

type Segment = { start: number; end: number; normalized: string };

/** The text cut into segments (a character with the combining marks after it), each normalized on its own. */
function segmentsOf(text: string): { segments: Segment[]; joined: string; offsets: number[] } {
  const segments: Segment[] = [];
  const pattern = /[\s\S][\p{M}\u{FF9E}\u{FF9F}]*/gu;
  for (const match of text.matchAll(pattern)) {
    const normalized = foldCase(match[0]).replace(/\s+/gu, ' ');
    segments.push({ start: match.index, end: match.index + match[0].length, normalized });
  }
  // offsets[i]: the segment that the i-th code unit of the joined normalized text comes from
  const offsets: number[] = [];
  let joined = '';
  segments.forEach((segment, index) => {
    joined += segment.normalized;
    for (let i = 0; i < segment.normalized.length; i += 1) offsets.push(index);
  });
  return { segments, joined, offsets };
}

/** [start, end) ranges of the original text where a term occurs, merged and in order. */
function matchRanges(text: string, terms: readonly string[]): { start: number; end: number }[] {
  const ranges: { start: number; end: number }[] = [];
  const whole = foldCase(text).replace(/\s/gu, ' ');
  if (whole.length === text.length) {
    // the usual case: normalizing kept every character in place (no half-width kana, ligatures, ...)
    for (const term of terms) {
      if (!term) continue;
      for (let at = whole.indexOf(term); at !== -1; at = whole.indexOf(term, at + term.length)) ranges.push({ start: at, end: at + term.length });
    }
  } else {
    const { segments, joined, offsets } = segmentsOf(text);
    for (const term of terms) {
      if (!term) continue;
      for (let at = joined.indexOf(term); at !== -1; at = joined.indexOf(term, at + term.length)) {
        ranges.push({ start: segments[offsets[at]!]!.start, end: segments[offsets[at + term.length - 1]!]!.end });
      }
    }
  }
  ranges.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: { start: number; end: number }[] = [];
  for (const range of ranges) {
    const last = merged[merged.length - 1];
    if (last && range.start <= last.end) last.end = Math.max(last.end, range.end);
    else merged.push({ ...range });
  }
  return merged;
}

/** Moves an index off the middle of a surrogate pair. */
function onBoundary(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/**
 * A snippet of `text` (plain, original) for the normalized `terms`: escaped, with <mark> around the matches, `…` where
 * the text goes on (`cut`: `text` is itself a window of a longer text). Without a match it is the start of the text.
 */
export function snippet(text: string, terms: readonly string[], cut: { before: boolean; after: boolean } = { before: false, after: false }): string {
  const ranges = matchRanges(text, terms);
  const first = ranges[0];
  let start = first ? Math.max(0, first.start - BEFORE) : 0;
  if (start > 0) {
    // start at a word boundary where one is near
    const space = text.lastIndexOf(' ', first!.start);
    if (space > start - 20 && space < first!.start) start = space + 1;
  }
  start = onBoundary(text, start);
  const end = onBoundary(text, Math.min(text.length, start + LENGTH));
  let html = start > 0 || cut.before ? '…' : '';
  let at = start;
  for (const range of ranges) {
    if (range.end <= start || range.start >= end) continue;
    const from = Math.max(range.start, start);
    const to = Math.min(range.end, end);
    html += `${escapeHtml(text.slice(at, from))}<mark>${escapeHtml(text.slice(from, to))}</mark>`;
    at = to;
  }
  html += escapeHtml(text.slice(at, end));
  if (end < text.length || cut.after) html += '…';
  return html;
}
