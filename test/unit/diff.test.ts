import { describe, expect, it } from 'vitest';
import { renderDiff, WORD_DIFF_MAX_LINE_CHARS } from '../../src/modules/pages/diff.ts';

const EMPTY = '<div class="diff"></div>';
const wrap = (items: string) => `<div class="diff"><ul>${items}</ul></div>`;
const same = (s: string) => `<li class="unchanged"><span>${s}</span></li>`;
const del = (s: string) => `<li class="del"><del>${s}</del></li>`;
const ins = (s: string) => `<li class="ins"><ins>${s}</ins></li>`;

/** Deterministic pseudo-random lines (LCG), ~52 characters each, all distinct within a seed. */
function randomLines(seed: number, count: number): string[] {
  let state = seed >>> 0;
  const next = (): string => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state.toString(36).padStart(7, '0');
  };
  return Array.from({ length: count }, (_, i) => `s${seed} line ${i} ${next()} ${next()} ${next()} ${next()} ${next()}`);
}

/** The <li> items of a diff as [class, text] pairs (text still escaped, <strong> removed). */
function items(html: string): Array<[string, string]> {
  return [...html.matchAll(/<li class="(\w+)"><(?:span|del|ins)>(.*?)<\/(?:span|del|ins)><\/li>/g)].map((m) => [
    m[1] ?? '',
    (m[2] ?? '').replace(/<\/?strong>/g, ''),
  ]);
}

describe('renderDiff markup', () => {
  it.each([
    ['identical', 'a\nb\n', 'a\nb\n', EMPTY],
    ['both empty', '', '', EMPTY],
    ['only line endings differ (CRLF)', 'a\r\nb\r\n', 'a\nb\n', EMPTY],
    ['only the trailing newline differs', 'a\nb', 'a\nb\n', EMPTY],
    ['first version (from empty)', '', 'one\ntwo\n', wrap(ins('one') + ins('two'))],
    ['everything deleted', 'one\ntwo', '', wrap(del('one') + del('two'))],
    ['pure insert in the middle', 'a\nc', 'a\nb\nc', wrap(same('a') + ins('b') + same('c'))],
    ['pure delete at the end', 'a\nb\nc\n', 'a\nb\n', wrap(same('a') + same('b') + del('c'))],
    ['unchanged lines around a change', 'a\nx\nc', 'a\ny\nc', wrap(same('a') + del('<strong>x</strong>') + ins('<strong>y</strong>') + same('c'))],
    ['an empty line inserted', 'a\nb', 'a\n\nb', wrap(same('a') + ins('') + same('b'))],
    ['CRLF before, LF after', 'a\r\nb\r\nc\r\n', 'a\nB\nc\n', wrap(same('a') + del('<strong>b</strong>') + ins('<strong>B</strong>') + same('c'))],
    ['a trailing newline adds no empty line', 'a\n', 'a\nb\n', wrap(same('a') + ins('b'))],
    [
      'changed words in <strong>',
      'the quick fox',
      'the slow fox',
      wrap(del('the <strong>quick</strong> fox') + ins('the <strong>slow</strong> fox')),
    ],
    [
      'adjacent changed words share one <strong>',
      'one two three four',
      'one 2 3 four',
      wrap(del('one <strong>two three</strong> four') + ins('one <strong>2 3</strong> four')),
    ],
    [
      'an inserted word only marks the new line',
      'hello world',
      'hello big world',
      wrap(del('hello world') + ins('hello <strong>big </strong>world')),
    ],
    [
      'lines of a hunk are paired in order, extra lines shown whole',
      'k\na1 x\nb1 x\nk2',
      'k\na2 x\nb2 x\nc x\nk2',
      wrap(
        same('k') +
          del('<strong>a1</strong> x') +
          del('<strong>b1</strong> x') +
          ins('<strong>a2</strong> x') +
          ins('<strong>b2</strong> x') +
          ins('c x') +
          same('k2'),
      ),
    ],
    [
      'escaping of <script>, & and quotes',
      `<script>alert("x")</script>\nsame & 'q'`,
      `<script>alert("y")</script>\nsame & 'q'`,
      wrap(
        del('&lt;script&gt;alert(&quot;<strong>x</strong>&quot;)&lt;/script&gt;') +
          ins('&lt;script&gt;alert(&quot;<strong>y</strong>&quot;)&lt;/script&gt;') +
          same('same &amp; &#39;q&#39;'),
      ),
    ],
    [
      'entities in the source are escaped before <strong> is added',
      'a &amp; b',
      'a &lt; b',
      wrap(del('a &amp;<strong>amp</strong>; b') + ins('a &amp;<strong>lt</strong>; b')),
    ],
  ])('%s', (_name, before, after, html) => {
    expect(renderDiff(before, after)).toEqual({ html, bounded: false });
  });

  it('shows a long changed line whole, without <strong>', () => {
    const long = 'w '.repeat(WORD_DIFF_MAX_LINE_CHARS);
    const { html, bounded } = renderDiff(`${long}a`, `${long}b`);
    expect(bounded).toBe(false);
    expect(html).toBe(wrap(del(`${long}a`) + ins(`${long}b`)));
  });
});

describe('renderDiff bounds', () => {
  it('falls back past maxEditCost, keeping the common prefix and suffix', () => {
    const result = renderDiff('top\na\nb\nc\nbottom', 'top\nx\ny\nz\nbottom', { maxEditCost: 5 });
    expect(result).toEqual({
      html:
        '<div class="diff diff-bounded"><ul>' +
        same('top') + del('a') + del('b') + del('c') + ins('x') + ins('y') + ins('z') + same('bottom') +
        '</ul></div>',
      bounded: true,
    });
    expect(renderDiff('top\na\nb\nc\nbottom', 'top\nx\ny\nz\nbottom', { maxEditCost: 6 }).bounded).toBe(false);
  });

  const before = randomLines(1, 20_000);
  const unrelated = randomLines(2, 20_000);

  it('generates 1 MiB inputs', () => {
    expect(before.join('\n').length).toBeGreaterThan(1024 * 1024);
    expect(unrelated.join('\n').length).toBeGreaterThan(1024 * 1024);
  });

  it('two unrelated 1 MiB texts: bounded, every line deleted then inserted', () => {
    const { html, bounded } = renderDiff(before.join('\n'), unrelated.join('\n'));
    expect(bounded).toBe(true);
    expect(html.startsWith('<div class="diff diff-bounded"><ul>')).toBe(true);
    expect(html).not.toContain('<strong>');
    expect(items(html)).toEqual([
      ...before.map((l): [string, string] => ['del', l]),
      ...unrelated.map((l): [string, string] => ['ins', l]),
    ]);
  });

  it('the same 1 MiB of lines reordered: bounded by the edit length', () => {
    const shuffled = [...before];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j] ?? '', shuffled[i] ?? ''];
    }
    const { html, bounded } = renderDiff(before.join('\n'), shuffled.join('\n'));
    expect(bounded).toBe(true);
    const kinds = items(html).map(([kind]) => kind);
    expect(kinds.filter((k) => k === 'del').length + kinds.filter((k) => k === 'unchanged').length).toBe(20_000);
    expect(kinds.filter((k) => k === 'ins').length + kinds.filter((k) => k === 'unchanged').length).toBe(20_000);
  });

  it('two 1 MiB texts differing in a few lines: exact', () => {
    const changedAt = [0, 4_321, 10_000, 19_999];
    const after = before.map((line, i) => (changedAt.includes(i) ? line.replace(' line ', ' LINE ') : line));
    const { html, bounded } = renderDiff(before.join('\n'), after.join('\n'));
    expect(bounded).toBe(false);
    expect(html.startsWith('<div class="diff"><ul>')).toBe(true);
    const expected: Array<[string, string]> = [];
    before.forEach((line, i) => {
      const changed = after[i] ?? '';
      if (changedAt.includes(i)) expected.push(['del', line], ['ins', changed]);
      else expected.push(['unchanged', line]);
    });
    expect(items(html)).toEqual(expected);
    expect(html.match(/<strong>line<\/strong>/g)).toHaveLength(4);
    expect(html.match(/<strong>LINE<\/strong>/g)).toHaveLength(4);
  });
});
