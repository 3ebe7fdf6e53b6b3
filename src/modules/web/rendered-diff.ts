// The change between two versions of a page shown as the page reads: the newer version, rendered, with what was
// removed in <del> and what was added in <ins>, where it happened (the line diff of pages/diff.ts shows the source).
//
// Both versions go through the sanitizer first: the output is markup the views show as it is (`trusted`), and the
// sanitizer's output is regular enough (balanced, attributes double-quoted, text escaped the same way) for the
// small tokenizer below. Each version becomes a list of tokens: every tag whole, and the text in words as
// Intl.Segmenter cuts them (whitespace and punctuation are tokens of their own, and Japanese or Chinese, written
// without spaces, is cut by ICU's dictionary, so one changed word is marked rather than the whole sentence). Text is
// compared decoded (`&amp;` is `&`) together with the tags around it, so a word that became bold, or a link whose
// href changed, reads as its old text removed and its new text added; an attribute change shows no other way.
//
// Structure follows the newer version, as in the classic htmldiff: every tag of `after` is written once, in order,
// and our own elements open and close within one run of text, so the output is as well-formed as `after`. What was
// removed is written where it was: a removed run that forms whole elements in the very same place (a paragraph,
// a list item, a table row) keeps its tags, the outermost with class "removed"; otherwise only its text is written,
// in a <del>, inside a <li>, <td> or <tr><td> with class "removed" where text may not stand (directly in a list or a
// table). Whole elements added get class "added", so a row or an item can be shown as new. Before writing, a run of
// changed tokens is slid along the same tokens around it to where it forms whole elements (the token diff may as
// well cut `a</p><p>b` as `<p>b</p>`), and whitespace between two changed words joins them into one mark.
//
// Bounds: more than `maxTokens` tokens on either side, or an edit that is not found within DIFF_MAX_EDIT_TOKENS
// changed tokens (or DIFF_TIMEOUT_MS), answers `tooLarge`, and the caller shows the source diff instead.
import { diffArrays } from 'diff';
import { sanitizeHtml } from '../notes/description.ts';

export const RENDERED_DIFF_MAX_TOKENS = 20_000;
const DIFF_MAX_EDIT_TOKENS = 1_500; // about 0.2 s when nothing matches; a few hundred changed words pass
const DIFF_TIMEOUT_MS = 250;
const MAX_SLIDE = 64;

type Token = { type: 'text' | 'open' | 'close' | 'void'; key: string; html: string; name: string; space: boolean };
type Operation = { kind: '=' | '-' | '+'; token: Token };

const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*(\/?)>/g;
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
const INLINE = new Set(['a', 'abbr', 'b', 'code', 'del', 'em', 'i', 'img', 'ins', 'mark', 's', 'small', 'span', 'strong', 'sub', 'sup', 'u']);
// Where text may not stand, the element a run of marked text is put in instead
const TEXT_HOLDER: Record<string, (kind: string) => [string, string]> = {
  ul: (kind) => [`<li class="${kind}">`, '</li>'],
  ol: (kind) => [`<li class="${kind}">`, '</li>'],
  tr: (kind) => [`<td class="${kind}">`, '</td>'],
  table: (kind) => [`<tr class="${kind}"><td>`, '</td></tr>'],
  thead: (kind) => [`<tr class="${kind}"><td>`, '</td></tr>'],
  tbody: (kind) => [`<tr class="${kind}"><td>`, '</td></tr>'],
  tfoot: (kind) => [`<tr class="${kind}"><td>`, '</td></tr>'],
};
const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
// A fixed locale, so the marks do not depend on the server's; ICU cuts Chinese, Japanese and Thai by dictionary
const words = new Intl.Segmenter('ja', { granularity: 'word' });

function decodeText(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (entity, body: string) => {
    if (body[0] !== '#') return NAMED_ENTITIES[body] ?? entity;
    const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}

const escapeText = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The tokens of sanitized markup, or undefined past `limit` (before segmenting all of a huge page). */
function tokenize(markup: string, limit: number): Token[] | undefined {
  const tokens: Token[] = [];
  const open: Array<{ name: string; key: string }> = [];
  let context = ''; // the open tags around the text, part of each word's key
  const addText = (raw: string) => {
    if (raw === '') return;
    for (const { segment } of words.segment(decodeText(raw))) {
      tokens.push({ type: 'text', key: `${context}\u0000${segment}`, html: escapeText(segment), name: '', space: /^\s+$/.test(segment) });
    }
  };
  let at = 0;
  for (const match of markup.matchAll(TAG)) {
    addText(markup.slice(at, match.index));
    at = match.index + match[0].length;
    const name = match[2]!.toLowerCase();
    const key = `<${match[1]}${name}${match[3]!.replace(/\s+/g, ' ')}>`;
    const type = match[1] ? 'close' : VOID.has(name) || match[4] ? 'void' : 'open';
    tokens.push({ type, key, html: match[0], name, space: false });
    if (type === 'open') open.push({ name, key });
    else if (type === 'close') closeIn(open, name);
    context = open.map((tag) => tag.key).join('');
    if (tokens.length > limit) return undefined;
  }
  addText(markup.slice(at));
  return tokens.length > limit ? undefined : tokens;
}

/** Closes `name` in a stack of open elements, and whatever it left open inside. */
function closeIn<T extends { name: string } | string>(stack: T[], name: string): void {
  for (let index = stack.length - 1; index >= 0; index -= 1) {
    const entry = stack[index]!;
    if ((typeof entry === 'string' ? entry : entry.name) === name) {
      stack.length = index;
      return;
    }
  }
}

function operations(before: Token[], after: Token[]): Operation[] | undefined {
  const keys = (tokens: Token[]) => tokens.map((token) => token.key);
  const changes = diffArrays(keys(before), keys(after), { maxEditLength: DIFF_MAX_EDIT_TOKENS, timeout: DIFF_TIMEOUT_MS });
  if (!changes) return undefined;
  const result: Operation[] = [];
  let inBefore = 0;
  let inAfter = 0;
  for (const change of changes) {
    for (let index = 0; index < change.count; index += 1) {
      // an unchanged token is written as `after` has it: structure follows the newer version
      if (!change.added) inBefore += 1;
      if (change.removed) result.push({ kind: '-', token: before[inBefore - 1]! });
      else result.push({ kind: change.added ? '+' : '=', token: after[inAfter++]! });
    }
  }
  return result;
}

/** How well a run of changed tokens reads where it stands: whole elements first, then not starting with a space. */
function fit(tokens: Token[]): number {
  let depth = 0;
  let lowest = 0;
  for (const token of tokens) {
    if (token.type === 'open') depth += 1;
    else if (token.type === 'close') lowest = Math.min(lowest, (depth -= 1));
  }
  return (depth === 0 && lowest === 0 ? 2 : 0) + (tokens[0]?.space ? 0 : 1);
}

/**
 * Moves the run of one kind at [start, end) by one token along equal tokens (`by` = 1: right, -1: left). The
 * unchanged token keeps the `after` token, so a removed run takes the `before` one's place (same key, same markup).
 */
function shift(ops: Operation[], start: number, end: number, by: 1 | -1): void {
  const [joining, leaving] = by === 1 ? [end, start] : [start - 1, end - 1];
  const kind = ops[leaving]!.kind;
  ops[leaving]!.kind = '=';
  ops[joining]!.kind = kind;
  if (kind === '-') [ops[leaving]!.token, ops[joining]!.token] = [ops[joining]!.token, ops[leaving]!.token];
}

/** Slides the run of one kind at [start, end) to where it fits best; answers where it ends. */
function slide(ops: Operation[], start: number, end: number): number {
  const movable = (index: number, like: number) => ops[index]?.kind === '=' && ops[index]!.token.key === ops[like]!.token.key;
  for (let moved = 0; moved < MAX_SLIDE && start > 0 && movable(start - 1, end - 1); moved += 1) shift(ops, start--, end--, -1);
  let best = start;
  let bestFit = fit(ops.slice(start, end).map((op) => op.token));
  for (let moved = 0; moved < 2 * MAX_SLIDE && movable(end, start); moved += 1) {
    shift(ops, start++, end++, 1);
    const here = fit(ops.slice(start, end).map((op) => op.token));
    if (here > bestFit) [best, bestFit] = [start, here];
  }
  while (start > best) shift(ops, start--, end--, -1);
  return end;
}

const isTag = (token: Token) => token.type !== 'text';
const isBlockTag = (token: Token) => token.type !== 'text' && !INLINE.has(token.name);
const changedWord = (op: Operation | undefined) => op !== undefined && op.kind !== '=' && op.token.type === 'text' && !op.token.space;

/** Slides runs of one kind into place, joins changed words across whitespace, and puts removals before additions. */
function tidy(ops: Operation[]): Operation[] {
  for (let start = 0; start < ops.length; start += 1) {
    if (ops[start]!.kind === '=') continue;
    let end = start;
    while (end < ops.length && ops[end]!.kind === ops[start]!.kind) end += 1;
    const alone = (start === 0 || ops[start - 1]!.kind === '=') && (end === ops.length || ops[end]!.kind === '=');
    start = (alone ? slide(ops, start, end) : end) - 1;
  }
  const joined: Operation[] = [];
  for (let index = 0; index < ops.length; index += 1) {
    const op = ops[index]!;
    let next = index;
    if (op.kind === '=' && op.token.space && changedWord(joined.at(-1))) while (ops[next]?.kind === '=' && ops[next]!.token.space) next += 1;
    if (next > index && changedWord(ops[next])) {
      for (const { token } of ops.slice(index, next)) joined.push({ kind: '-', token }, { kind: '+', token });
      index = next - 1;
    } else joined.push(op);
  }
  const result: Operation[] = [];
  for (let start = 0; start < joined.length; ) {
    let end = start;
    while (end < joined.length && joined[end]!.kind !== '=') end += 1;
    const run = joined.slice(start, end);
    result.push(...run.filter((op) => op.kind === '-'), ...run.filter((op) => op.kind === '+'));
    if (end < joined.length) result.push(joined[end]!);
    start = end + 1;
  }
  return result;
}

/** Writes the operations as `after` with the marks; `before`'s open elements decide where removed tags may stay. */
function write(ops: Operation[]): string {
  const out: string[] = [];
  const afterOpen: string[] = [];
  const beforeOpen: string[] = [];
  let mark = '' as '' | 'del' | 'ins';
  let closeMark = '';
  const endMark = () => {
    if (mark) out.push(closeMark);
    mark = '';
  };
  const track = (stack: string[], token: Token) => {
    if (token.type === 'open') stack.push(token.name);
    else if (token.type === 'close') closeIn(stack, token.name);
  };
  let depth = 0; // in a run of whole elements: only the outermost are marked
  const tag = (token: Token, className: string) => {
    endMark();
    const marked = className && depth === 0 && token.type !== 'close';
    out.push(marked ? token.html.replace(/^<([a-zA-Z0-9]+)/, `<$1 class="${className}"`) : token.html);
    if (className) depth += token.type === 'open' ? 1 : token.type === 'close' ? -1 : 0;
    track(afterOpen, token);
  };
  const text = (token: Token, kind: 'del' | 'ins', betweenElements: boolean) => {
    const holder = TEXT_HOLDER[afterOpen.at(-1) ?? ''];
    if (token.space && mark !== kind && (holder || betweenElements)) {
      // whitespace between elements, rows or items: kept when added, dropped when removed, never a mark of its own
      if (kind === 'ins') {
        endMark();
        out.push(token.html);
      }
      return;
    }
    if (mark !== kind) {
      endMark();
      const [open, close] = holder ? holder(kind === 'del' ? 'removed' : 'added') : ['', ''];
      out.push(`${open}<${kind}>`);
      [mark, closeMark] = [kind, `</${kind}>${close}`];
    }
    out.push(token.html);
  };
  const sameContext = () => afterOpen.length === beforeOpen.length && afterOpen.every((name, index) => name === beforeOpen[index]);
  for (let start = 0; start < ops.length; ) {
    const op = ops[start]!;
    if (op.kind === '=') {
      if (op.token.type === 'text') {
        endMark();
        out.push(op.token.html);
      } else {
        tag(op.token, '');
        track(beforeOpen, op.token);
      }
      start += 1;
      continue;
    }
    let end = start;
    while (end < ops.length && ops[end]!.kind !== '=') end += 1;
    const removed = ops.slice(start, end).filter((change) => change.kind === '-').map((change) => change.token);
    const added = ops.slice(start, end).filter((change) => change.kind === '+').map((change) => change.token);
    // whitespace between blocks is no change worth a mark; between inline elements it is
    const removedBlocks = removed.some(isBlockTag);
    if (removed.some(isTag) && fit(removed) >= 2 && sameContext()) {
      // whole elements, removed from the very place `after` is at: they are valid here, shown as they were
      for (const token of removed) {
        if (token.type === 'text') text(token, 'del', removedBlocks);
        else tag(token, 'removed');
        track(beforeOpen, token);
      }
    } else {
      let apart = false; // the removed text crossed a block boundary: keep its words apart
      for (const token of removed) {
        track(beforeOpen, token);
        if (isTag(token)) apart ||= mark === 'del' && isBlockTag(token);
        else {
          if (apart && !token.space && !/\s$/.test(out.at(-1) ?? '')) text({ ...token, html: ' ' }, 'del', false);
          text(token, 'del', removedBlocks);
          apart = false;
        }
      }
    }
    const [addedWhole, addedBlocks] = [added.some(isTag) && fit(added) >= 2, added.some(isBlockTag)];
    for (const token of added) {
      if (token.type === 'text') text(token, 'ins', addedBlocks);
      else tag(token, addedWhole ? 'added' : '');
    }
    start = end;
  }
  endMark();
  return out.join('');
}

/** The page as it reads, `after` with what changed from `before` marked: removed text in <del>, added text in <ins>. */
export function renderedDiff(before: string, after: string, options?: { maxTokens?: number }): { html: string; changed: boolean } | { tooLarge: true } {
  const afterHtml = sanitizeHtml(after);
  if (before === after) return { html: afterHtml, changed: false };
  const limit = options?.maxTokens ?? RENDERED_DIFF_MAX_TOKENS;
  const beforeTokens = tokenize(sanitizeHtml(before), limit);
  const afterTokens = tokenize(afterHtml, limit);
  const ops = beforeTokens && afterTokens && operations(beforeTokens, afterTokens);
  if (!ops) return { tooLarge: true };
  if (ops.every((op) => op.kind === '=')) return { html: afterHtml, changed: false };
  return { html: write(tidy(ops)), changed: true };
}
