// The text side of the n-gram search (design.md, "Search"): markup to plain text, normalization (foldCase: NFKC and
// case folding, as for tags and names; white space collapsed), the index tokens of a text, and the tokens a query
// term needs. Pure functions: the indexer (search.indexer.ts) and the query (search.query.ts) use the very same ones,
// so what is indexed and what is looked up always agree; the database only compares what they made (strpos).
//
// Tokens are 32-bit hashes (FNV-1a) of short strings, stored as an int[] under a GIN index: compact and fast to
// compare. A hash collision only adds a candidate; every candidate is rechecked against the normalized text.
//   - CJK runs (Han, Hiragana, Katakana): every unigram and bigram ("会議室" -> 会, 議, 室, 会議, 議室), so any
//     substring of one or more characters can be looked up; plus the run itself as a word when it is of one script
//     (used only for ranking: "キャプチャ" is a whole word in "画面キャプチャを", a substring in "キャプチャツール").
//   - other scripts: each word (letters, digits, marks) with its prefixes of 2 to 16 characters, so prefixes work;
//     plus the whole word, marked as such, for ranking.
import { foldCase } from '../text/fold.ts';

/** foldCase (NFKC, case folding), every run of white space one space: the text every match is checked against. */
export function normalize(text: string): string {
  return foldCase(text).replace(/[\u0000-\u0008\u000e-\u001f]/g, '').replace(/\s+/gu, ' ').trim();
}

const BLOCK_TAGS = /^(?:p|div|br|hr|li|ul|ol|dl|dt|dd|h[1-6]|tr|td|th|table|thead|tbody|tfoot|blockquote|pre|section|article|header|footer|figure|figcaption|aside|nav|details|summary)$/i;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The text of HTML: scripts and styles dropped, block elements separate words, inline ones do not, entities decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/?([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g, (_tag, name: string) => (BLOCK_TAGS.test(name) ? ' ' : ''))
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (entity, body: string) => {
      if (body[0] === '#') {
        const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
        return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : ' ';
      }
      return ENTITIES[body.toLowerCase()] ?? entity;
    })
    .replace(/\s+/gu, ' ')
    .trim();
}

/** 32-bit FNV-1a over the UTF-16 code units, as a signed integer (PostgreSQL `int`). */
export function tokenHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

type Script = 'han' | 'hiragana' | 'katakana' | 'word' | 'other';

const HAN = /[\p{Script=Han}々〆ヶ]/u;
const HIRAGANA = /\p{Script=Hiragana}/u;
const KATAKANA = /[\p{Script=Katakana}ー]/u;
const WORD = /[\p{L}\p{N}\p{M}_]/u;

function scriptOf(char: string): Script {
  const code = char.codePointAt(0)!;
  // fast paths for the common ranges; the Unicode properties for the rest
  if (code < 0x80) return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x5f || (code >= 0x41 && code <= 0x5a) ? 'word' : 'other';
  if (code >= 0x3041 && code <= 0x309f) return 'hiragana';
  if ((code >= 0x30a0 && code <= 0x30ff && code !== 0x30f6 && code !== 0x30fb) || (code >= 0x31f0 && code <= 0x31ff)) return 'katakana';
  if ((code >= 0x4e00 && code <= 0x9fff) || code === 0x3005 || code === 0x3006 || code === 0x30f6) return 'han';
  if (code >= 0x3000 && code <= 0x303f) return 'other'; // CJK punctuation: 、。「」
  if (HAN.test(char)) return 'han';
  if (KATAKANA.test(char)) return 'katakana';
  if (HIRAGANA.test(char)) return 'hiragana';
  return WORD.test(char) ? 'word' : 'other';
}

const isCjk = (script: Script) => script === 'han' || script === 'hiragana' || script === 'katakana';

/** A run of characters of one kind: `cjk` (any mix of Han and kana) or `word` (letters and digits of other scripts). */
type Run = { kind: 'cjk' | 'word'; chars: string[] };

/** Splits normalized text into CJK runs and words; everything else separates them. */
function runsOf(normalized: string): Run[] {
  const runs: Run[] = [];
  let current: Run | undefined;
  for (const char of normalized) {
    const script = scriptOf(char);
    const kind = isCjk(script) ? 'cjk' : script === 'word' ? 'word' : undefined;
    if (kind === undefined) {
      current = undefined;
      continue;
    }
    if (!current || current.kind !== kind) {
      current = { kind, chars: [] };
      runs.push(current);
    }
    current.chars.push(char);
  }
  return runs;
}

const MAX_PREFIX = 16;
const MAX_WORD = 32;
const wordToken = (word: string) => tokenHash(`\u0001${word}`);

const FNV_OFFSET = 0x811c9dc5;

/** tokenHash continued over `text` from `from` to `to` (code units): FNV-1a is incremental, so no substring is made. */
function extendHash(hash: number, text: string, from: number, to: number): number {
  for (let i = from; i < to; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
const WORD_MARK = extendHash(FNV_OFFSET, '\u0001', 0, 1);

/**
 * The index tokens of a normalized text (distinct), the same as hashing the strings the header describes, in one
 * pass over the text's code points without making them: a page of 1 MiB is indexed without a string per character.
 */
export function indexTokens(normalized: string): number[] {
  const tokens = new Set<number>();
  const text = normalized;
  let at = 0;
  while (at < text.length) {
    const first = scriptOf(String.fromCodePoint(text.codePointAt(at)!));
    if (first === 'other') {
      at += text.codePointAt(at)! > 0xffff ? 2 : 1;
      continue;
    }
    if (first === 'word') at = indexWord(text, at, tokens);
    else at = indexCjk(text, at, tokens);
  }
  return [...tokens];
}

/** A word from `start`: its prefixes of 2 to 16 characters (itself when it has one), and itself as a word. */
function indexWord(text: string, start: number, tokens: Set<number>): number {
  let prefix: number = FNV_OFFSET;
  let word = WORD_MARK;
  let count = 0;
  let at = start;
  while (at < text.length) {
    const width = text.codePointAt(at)! > 0xffff ? 2 : 1;
    if (scriptOf(text.slice(at, at + width)) !== 'word') break;
    count += 1;
    if (count <= MAX_PREFIX) {
      prefix = extendHash(prefix, text, at, at + width);
      if (count >= 2) tokens.add(prefix);
    }
    if (count <= MAX_WORD) word = extendHash(word, text, at, at + width);
    at += width;
  }
  if (count === 1) tokens.add(prefix);
  if (count <= MAX_WORD) tokens.add(word);
  return at;
}

/** A CJK run from `start`: every unigram and bigram, then the maximal runs of one script in it as words. */
function indexCjk(text: string, start: number, tokens: Set<number>): number {
  let at = start;
  let previous = -1;
  while (at < text.length) {
    const width = text.codePointAt(at)! > 0xffff ? 2 : 1;
    if (!isCjk(scriptOf(text.slice(at, at + width)))) break;
    if (previous >= 0) tokens.add(extendHash(FNV_OFFSET, text, previous, at + width));
    tokens.add(extendHash(FNV_OFFSET, text, at, at + width));
    previous = at;
    at += width;
  }
  const end = at;
  let wordStart = start;
  let wordScript = scriptOf(text.slice(start, start + (text.codePointAt(start)! > 0xffff ? 2 : 1)));
  let length = 0;
  for (let i = start; i <= end;) {
    const width = i < end && text.codePointAt(i)! > 0xffff ? 2 : 1;
    const script = i < end ? scriptOf(text.slice(i, i + width)) : undefined;
    if (script !== wordScript) {
      if (length <= MAX_WORD) tokens.add(extendHash(WORD_MARK, text, wordStart, i));
      if (i === end) break;
      wordStart = i;
      wordScript = script!;
      length = 0;
    }
    length += 1;
    i += width;
  }
  return end;
}

/** The tokens every text containing `term` (normalized) has: the lookup side of indexTokens. */
export function lookupTokens(term: string): number[] {
  const tokens = new Set<number>();
  for (const run of runsOf(term)) {
    const { chars } = run;
    if (run.kind === 'word') {
      // its prefix of up to 16 characters (a word of 1 character is indexed only as itself: it matches as a word)
      tokens.add(tokenHash(chars.slice(0, MAX_PREFIX).join('')));
      continue;
    }
    if (chars.length === 1) {
      tokens.add(tokenHash(chars[0]!));
      continue;
    }
    // bigrams, at most 8 spread over the run (the recheck does the rest)
    const bigrams = chars.length - 1;
    const step = Math.max(1, Math.ceil(bigrams / 8));
    for (let i = 0; i < bigrams; i += step) tokens.add(tokenHash(chars[i]! + chars[i + 1]!));
    tokens.add(tokenHash(chars[bigrams - 1]! + chars[bigrams]!));
  }
  return [...tokens];
}

/** The token of `term` as a whole word, when it is one word of one script (for ranking); otherwise null. */
export function wholeWordToken(term: string): number | null {
  const runs = runsOf(term);
  if (runs.length !== 1 || runs[0]!.chars.length > MAX_WORD || runs[0]!.chars.join('') !== term) return null;
  const { chars } = runs[0]!;
  if (runs[0]!.kind === 'cjk' && chars.some((char) => scriptOf(char) !== scriptOf(chars[0]!))) return null;
  return wordToken(term);
}

/** Whether the normalized term has anything the index can look up (a letter, digit or CJK character). */
export function isSearchable(term: string): boolean {
  return runsOf(term).length > 0;
}
