// A change shown as the page reads (rendered-diff.ts), with the source line diff one click away (a <details>): what
// the diff view, the version view and each page of a request show. The two sides are read back from the line diff
// the API answers (pages/diff.ts writes every line of both versions, unchanged, deleted or inserted, escaped, with
// changed words in <strong>), so a view needs no other read: the diff it already has holds both texts.
import { html, trusted, type Html } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { renderedDiff } from '../rendered-diff.ts';
import { keyboardScrollable } from './parts.ts';

const LINE = /<li class="(unchanged|del|ins)">(?:<span>|<del>|<ins>)([^]*?)(?:<\/span>|<\/del>|<\/ins>)<\/li>/g;

const unescape = (text: string) =>
  text.replace(/<\/?strong>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (_entity, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);

/** Both texts of a line diff: the unchanged and deleted lines, and the unchanged and inserted ones. */
export function sidesOfLineDiff(markup: string): { before: string; after: string } {
  const before: string[] = [];
  const after: string[] = [];
  for (const [, kind, line] of markup.matchAll(LINE)) {
    const text = unescape(line!);
    if (kind !== 'ins') before.push(text);
    if (kind !== 'del') after.push(text);
  }
  return { before: before.join('\n'), after: after.join('\n') };
}

/** Headings one level down under the view's own <h1> (the rendered diff keeps attributes: `<h2 class="removed">`). */
const headingsDown = (markup: string) =>
  markup.replace(/<(\/?)h([1-6])(\s[^>]*)?>/g, (_tag, slash: string, level: string, attributes: string | undefined) => `<${slash}h${Math.min(6, Number(level) + 1)}${attributes ?? ''}>`);

/** The change as the page reads, then the source diff behind "Source"; the source alone when the change is too large to render. */
export function changes(locale: Locale, lineDiff: string): Html {
  const { t } = locale;
  if (lineDiff === '<div class="diff"></div>') return html`<p class="muted">${t.noDiff}</p>`;
  const { before, after } = sidesOfLineDiff(lineDiff);
  const rendered = renderedDiff(before, after);
  const source = html`<details class="source"><summary>${t.sourceDiff}</summary>${trusted(lineDiff)}</details>`;
  if ('tooLarge' in rendered) return html`<p class="muted">${t.tooLargeToRender}</p>${trusted(lineDiff)}`;
  return html`<div class="content rendered-diff">${trusted(keyboardScrollable(headingsDown(rendered.html)))}</div>${source}`;
}
