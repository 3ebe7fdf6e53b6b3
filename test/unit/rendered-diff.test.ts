// The rendered diff: `after` as it reads, with removed words in <del> and added words in <ins>, always valid HTML.
import { HtmlValidate } from 'html-validate';
import { describe, expect, it } from 'vitest';
import { sanitizeHtml } from '../../src/modules/notes/description.ts';
import { renderedDiff } from '../../src/modules/web/rendered-diff.ts';

// the rules the views are validated with (test/browser/web-views.test.ts), but for the order of heading levels: the
// pages' own headings are the author's, and the views move them one level down
const validator = new HtmlValidate({
  extends: ['html-validate:standard', 'html-validate:document'],
  rules: { 'require-sri': ['error', { target: 'crossorigin' }], 'heading-level': 'off' },
});
const VOID = new Set(['br', 'hr', 'img']);

/** The rendered diff's markup, failing the test when the diff answered tooLarge. */
function diffHtml(before: string, after: string): string {
  const result = renderedDiff(before, after);
  if ('tooLarge' in result) throw new Error('unexpectedly too large');
  return result.html;
}

/** The open tags left unclosed or closed out of order, as a message; '' when balanced. */
function unbalanced(markup: string): string {
  const open: string[] = [];
  for (const [, slash, name] of markup.matchAll(/<(\/?)([a-z][a-z0-9]*)[^>]*>/g)) {
    if (VOID.has(name!)) continue;
    if (!slash) open.push(name!);
    else if (open.pop() !== name) return `</${name}> closes nothing open in ${markup}`;
  }
  return open.length === 0 ? '' : `left open: ${open.join(', ')}`;
}

async function expectWellFormed(markup: string): Promise<void> {
  expect(unbalanced(markup)).toBe('');
  const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Diff</title></head><body><main>${markup}</main></body></html>`;
  const report = await validator.validateString(page);
  expect(report.results.flatMap((result) => result.messages.map((message) => `${message.ruleId}: ${message.message}`))).toEqual([]);
}

/** `after` back from the diff: marks of removal dropped with what they hold, marks of addition unwrapped. */
function withoutRemovals(markup: string): string {
  let out = '';
  let skipping = 0; // depth inside a removed element or a <del>
  for (const [token, slash, name, attributes] of markup.matchAll(/<(\/?)([a-z][a-z0-9]*)([^>]*)>|[^<]+/g)) {
    if (!name) {
      if (!skipping) out += token;
    } else if (skipping) {
      if (!VOID.has(name)) skipping += slash ? -1 : 1;
    } else if (!slash && (name === 'del' || attributes!.includes('class="removed"'))) {
      if (!VOID.has(name)) skipping = 1;
    } else if (name !== 'ins') out += token.replace(' class="added"', '');
  }
  return out;
}

/** The words of `before` back from the diff: what was added dropped, and with it every tag and whitespace. */
function wordsWithoutAdditions(markup: string): string {
  let out = '';
  let skipping = 0; // depth inside an added element or an <ins>
  for (const [token, slash, name, attributes] of markup.matchAll(/<(\/?)([a-z][a-z0-9]*)([^>]*)>|[^<]+/g)) {
    if (!name) {
      if (!skipping) out += token;
    } else if (skipping) {
      if (!VOID.has(name)) skipping += slash ? -1 : 1;
    } else if (!slash && !VOID.has(name) && (name === 'ins' || attributes!.includes('class="added"'))) skipping = 1;
  }
  return out.replace(/\s+/g, '');
}

const wordsOf = (markup: string) => markup.replace(/<[^>]*>|\s+/g, '');

describe('renderedDiff', () => {
  it.each([
    ['a word changed in a paragraph', '<p>The quick brown fox</p>', '<p>The slow brown fox</p>', '<p>The <del>quick</del><ins>slow</ins> brown fox</p>'],
    ['two words changed: the space between joins them', '<p>good day to you</p>', '<p>bad night to you</p>', '<p><del>good day</del><ins>bad night</ins> to you</p>'],
    ['a word inserted', '<p>hello world</p>', '<p>hello big world</p>', '<p>hello <ins>big </ins>world</p>'],
    ['a heading changed', '<h1>Deploy guide</h1><p>x</p>', '<h1>Release guide</h1><p>x</p>', '<h1><del>Deploy</del><ins>Release</ins> guide</h1><p>x</p>'],
    [
      'a list item removed and one added',
      '<ul><li>Buy some milk</li><li>Call the bank</li><li>Fix the bike</li></ul>',
      '<ul><li>Call the bank</li><li>Fix the bike</li><li>Water the plants</li></ul>',
      '<ul><li class="removed"><del>Buy some milk</del></li><li>Call the bank</li><li>Fix the bike</li><li class="added"><ins>Water the plants</ins></li></ul>',
    ],
    [
      'a table cell changed and a row added',
      '<table><thead><tr><th>Name</th><th>Count</th></tr></thead><tbody><tr><td>apples</td><td>1</td></tr></tbody></table>',
      '<table><thead><tr><th>Name</th><th>Count</th></tr></thead><tbody><tr><td>apples</td><td>2</td></tr><tr><td>pears</td><td>3</td></tr></tbody></table>',
      '<table><thead><tr><th>Name</th><th>Count</th></tr></thead><tbody><tr><td>apples</td><td><del>1</del><ins>2</ins></td></tr>' +
        '<tr class="added"><td><ins>pears</ins></td><td><ins>3</ins></td></tr></tbody></table>',
    ],
    [
      'a code block keeps its whitespace and newlines',
      '<pre><code>if (a &lt; b) {\n\tx = 1;\n}\n</code></pre>',
      '<pre><code>if (a &lt;= b) {\n\tx = 2;\n}\n</code></pre>',
      '<pre><code>if (a &lt;<ins>=</ins> b) {\n\tx = <del>1</del><ins>2</ins>;\n}\n</code></pre>',
    ],
    ['Japanese: only the changed word', '<p>今日は良い天気です</p>', '<p>今日は悪い天気です</p>', '<p>今日は<del>良い</del><ins>悪い</ins>天気です</p>'],
    ['entities stay escaped', '<p>Tom &amp; Jerry &lt;3</p>', '<p>Tom &amp; Spike &lt;3 &gt;</p>', '<p>Tom &amp; <del>Jerry</del><ins>Spike</ins> &lt;3<ins> &gt;</ins></p>'],
    ['a paragraph removed', '<p>one</p>\n<p>two words</p>\n<p>three</p>', '<p>one</p>\n<p>three</p>', '<p>one</p>\n<p class="removed"><del>two words</del></p><p>three</p>'],
    ['a paragraph added', '<p>one</p>', '<p>one</p><p>new text</p>', '<p>one</p><p class="added"><ins>new text</ins></p>'],
    ['a heading removed', '<h2>Notes</h2><p>body</p>', '<p>body</p>', '<h2 class="removed"><del>Notes</del></h2><p>body</p>'],
    [
      "a link's address changed: its text removed with the old address and added with the new",
      '<p>see <a href="https://a.example/">the docs</a></p>',
      '<p>see <a href="https://b.example/">the docs</a></p>',
      '<p>see <del>the docs</del><a href="https://b.example/" rel="nofollow noopener"><ins>the docs</ins></a></p>',
    ],
    ['words of two removed paragraphs stay apart', '<p>keep alpha</p><p>beta keep</p>', '<p>keep keep</p>', '<p>keep <del>alpha beta </del>keep</p>'],
  ])('%s', async (_name, before, after, expected) => {
    const result = renderedDiff(before, after);
    expect(result).toEqual({ html: expected, changed: true });
    await expectWellFormed(expected);
    expect(withoutRemovals(expected)).toBe(sanitizeHtml(after));
    expect(wordsWithoutAdditions(expected)).toBe(wordsOf(sanitizeHtml(before)));
  });

  it('answers changed: false, with the page as it is, for the same page', () => {
    const page = '<h1>T</h1><p>a &amp; b</p><ul><li>x</li></ul>';
    expect(renderedDiff(page, page)).toEqual({ html: page, changed: false });
    // the same once sanitized: the dropped script is no change
    expect(renderedDiff(`${page}<script>x()</script>`, page)).toEqual({ html: page, changed: false });
  });

  it('answers tooLarge past maxTokens on either side', () => {
    const long = `<p>${'word '.repeat(50)}</p>`;
    expect(renderedDiff(long, '<p>x</p>', { maxTokens: 60 })).toEqual({ tooLarge: true });
    expect(renderedDiff('<p>x</p>', long, { maxTokens: 60 })).toEqual({ tooLarge: true });
    expect(renderedDiff(long, `${long}<p>x</p>`, { maxTokens: 200 })).toMatchObject({ changed: true });
  });

  it('answers tooLarge for two unrelated long pages: the edit is bounded', () => {
    const page = (seed: string) => Array.from({ length: 2000 }, (_, index) => `<p>${seed}${index} ${seed}${index * 7}</p>`).join('');
    const started = performance.now();
    expect(renderedDiff(page('a'), page('b'))).toEqual({ tooLarge: true });
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('never writes text where it may not stand (removed items of a list that changed kind, a removed row, empty sides)', async () => {
    const cases: Array<[string, string]> = [
      ['<ul><li>a</li><li>b c</li></ul>', '<ol><li>a</li></ol>'],
      ['<table><tr><td>a</td></tr><tr><td>b</td></tr></table>', '<table><tr><td>a</td></tr></table>'],
      ['<ul><li>one</li></ul><p>two</p>', '<ul><li>one</li><li>two</li></ul>'],
      ['<p>a <a href="https://x.example/">link</a> b</p>', '<p>a b</p>'],
      ['<blockquote><p>quoted text</p></blockquote>', '<p>quoted text</p>'],
      ['', '<h1>First</h1><ul><li>version</li></ul>'],
      ['<h1>Last</h1><table><tr><td>version</td></tr></table>', ''],
      ['<p>one<br>two</p><hr><p><img src="/a.png" alt="a"></p>', '<p>one<br>three</p><p><img src="/b.png" alt="b"></p>'],
    ];
    for (const [before, after] of cases) {
      const markup = diffHtml(before, after);
      await expectWellFormed(markup);
      expect(withoutRemovals(markup)).toBe(sanitizeHtml(after));
      expect(wordsWithoutAdditions(markup)).toBe(wordsOf(sanitizeHtml(before)));
    }
  });

  it('is well-formed, `after` once the removals are dropped, and `before` in words once the additions are, for random edits', async () => {
    let state = 7;
    const random = (below: number) => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % below);
    const pick = <T,>(items: readonly T[]): T => items[random(items.length)]!;
    const WORDS = ['alpha', 'beta', 'gamma', '今日', '天気', 'a &amp; b', '&lt;x&gt;'];
    const text = () => Array.from({ length: 1 + random(4) }, () => pick(WORDS)).join(pick([' ', ' ', '']));
    const inline = () => pick([text, () => `<strong>${text()}</strong>`, () => `<a href="https://${pick(['a', 'b'])}.example/">${text()}</a>`, () => `${text()}<br>${text()}`])();
    const block = (): string =>
      pick([
        () => `<p>${inline()} ${inline()}</p>`,
        () => ((level) => `<h${level}>${text()}</h${level}>`)(1 + random(3)),
        () => ((list) => `<${list}>${Array.from({ length: 1 + random(3) }, () => `<li>${inline()}</li>`).join('\n')}</${list}>`)(pick(['ul', 'ol'])),
        () => `<table><tbody>${Array.from({ length: 1 + random(3) }, () => `<tr><td>${text()}</td><td>${text()}</td></tr>`).join('')}</tbody></table>`,
        () => `<pre><code>${text()}\n  ${text()}\n</code></pre>`,
        () => `<blockquote><p>${inline()}</p></blockquote>`,
      ])();
    const page = () => Array.from({ length: 1 + random(5) }, block).join(pick(['', '\n']));
    const edit = (blocks: string[]): string[] => {
      const copy = [...blocks];
      const at = random(copy.length + 1);
      const reword = () => copy.splice(at, 1, (copy[at] ?? '').replace(pick(WORDS), pick(WORDS)));
      pick([() => copy.splice(at, 1), () => copy.splice(at, 0, block()), () => copy.splice(at, 1, block()), reword, reword])();
      return copy;
    };
    for (let run = 0; run < 200; run += 1) {
      const blocks = Array.from({ length: 1 + random(5) }, block);
      const before = blocks.join('\n');
      const after = random(3) === 0 ? page() : edit(edit(blocks)).join('\n');
      const markup = diffHtml(before, after);
      await expectWellFormed(markup);
      expect(withoutRemovals(markup), `${before}\n=>\n${after}`).toBe(sanitizeHtml(after));
      expect(wordsWithoutAdditions(markup), `${before}\n=>\n${after}`).toBe(wordsOf(sanitizeHtml(before)));
    }
  });
});
