// The browser views read both texts of a change back from the API's line diff (src/modules/web/views/changes.ts):
// every line of both versions is in it, so the texts come back exactly (less a last newline, which HTML ignores).
import { describe, expect, it } from 'vitest';
import { renderDiff } from '../../src/modules/pages/diff.ts';
import { sidesOfLineDiff } from '../../src/modules/web/views/changes.ts';

const cases: [string, string, string][] = [
  ['a word changed', '<h1>Deploy</h1>\n<p>Run make deploy from a clean checkout.</p>\n', '<h1>Deploy</h1>\n<p>Run make deploy from a fresh clone.</p>\n'],
  ['escapes and quotes', '<p>a &amp; b &lt; c "q" \'s\'</p>', '<p>a &amp; b &gt; c "q" \'s\'</p>\n<p>new &amp; line</p>'],
  ['from nothing', '', '<p>first</p>\n<ul>\n<li>one</li>\n</ul>'],
  ['to nothing', '<p>gone</p>', ''],
  ['Japanese', '<p>今日は良い天気です</p>', '<p>今日は悪い天気です</p>'],
  ['text that looks like markup of the diff', '<p>&lt;/span&gt;&lt;/li&gt; <strong>bold</strong></p>', '<p>&lt;/span&gt;&lt;/li&gt; <strong>bolder</strong></p>'],
];

describe('sidesOfLineDiff', () => {
  it.each(cases)('gives back both versions: %s', (_name, before, after) => {
    const sides = sidesOfLineDiff(renderDiff(before, after).html);
    expect(sides).toEqual({ before: before.replace(/\n$/, ''), after: after.replace(/\n$/, '') });
  });

  it('a bounded diff (all deleted, then all inserted) still holds both', () => {
    const before = Array.from({ length: 40 }, (_, i) => `<p>old ${i}</p>`).join('\n');
    const after = Array.from({ length: 40 }, (_, i) => `<p>new ${i}</p>`).join('\n');
    const diff = renderDiff(before, after, { maxEditCost: 5 });
    expect(diff.bounded).toBe(true);
    expect(sidesOfLineDiff(diff.html)).toEqual({ before, after });
  });
});
