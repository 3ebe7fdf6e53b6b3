// mergeEdit (src/modules/pages/edit-merge.ts), the pure part of merge-on-write: the write (theirs) merged into the
// page now (ours) over the version the write names (base). Content merges by blocks, then words; the title is one
// region; past the engine's bound the answer is `unknown`, never a guess.
import { describe, expect, it } from 'vitest';
import { mergeEdit, type PageText } from '../../src/modules/pages/edit-merge.ts';
import { budgetOf, DEFAULT_MERGE_LIMITS } from '../../src/modules/text/merge3.ts';

const text = (content: string, title = 'Page'): PageText => ({ title, content });
const DOC = '<h1>Deploy</h1>\n<p>Run make deploy from a clean checkout.</p>\n<p>Then watch the dashboard.</p>\n';
const edit = (from: string, to: string, source = DOC): string => {
  expect(source).toContain(from);
  return source.replace(from, to);
};

describe('content', () => {
  it('merges edits of different paragraphs cleanly, keeping both', () => {
    const merged = mergeEdit(text(DOC), text(edit('Deploy<', 'Deploying<')), text(edit('dashboard', 'deploy dashboard')));
    expect(merged).toEqual({ status: 'clean', result: text(edit('dashboard', 'deploy dashboard', edit('Deploy<', 'Deploying<'))) });
  });

  it('merges edits of different words of one paragraph', () => {
    const merged = mergeEdit(text(DOC), text(edit('Run make', 'Always run make')), text(edit('clean checkout', 'clean git checkout')));
    expect(merged).toEqual({ status: 'clean', result: text(edit('Run make deploy from a clean checkout', 'Always run make deploy from a clean git checkout')) });
  });

  it('takes the one side that changed, and identical edits once', () => {
    const changed = edit('watch', 'check');
    expect(mergeEdit(text(DOC), text(DOC), text(changed))).toEqual({ status: 'clean', result: text(changed) });
    expect(mergeEdit(text(DOC), text(changed), text(DOC))).toEqual({ status: 'clean', result: text(changed) });
    expect(mergeEdit(text(DOC), text(changed), text(changed))).toEqual({ status: 'clean', result: text(changed) });
  });

  it('answers a conflict with each disputed block as it is in the base, now and in the write', () => {
    const merged = mergeEdit(text(DOC), text(edit('clean checkout', 'fresh clone')), text(edit('clean checkout', 'tagged release')));
    expect(merged).toEqual({ status: 'conflict', conflicts: [{ kind: 'content', regions: [{
      base: '<p>Run make deploy from a clean checkout.</p>\n',
      ours: '<p>Run make deploy from a fresh clone.</p>\n',
      theirs: '<p>Run make deploy from a tagged release.</p>\n',
    }] }] });
  });

  it('lists every disputed region in order, and none of the blocks that merged cleanly', () => {
    const ours = edit('Then watch', 'Then read', edit('clean checkout', 'fresh clone', edit('Deploy<', 'Ship<')));
    const theirs = edit('Then watch', 'Then ignore', edit('clean checkout', 'tagged release'));
    const merged = mergeEdit(text(DOC), text(ours), text(theirs));
    expect(merged.status).toBe('conflict');
    if (merged.status !== 'conflict') return;
    expect(merged.conflicts).toHaveLength(1);
    expect(merged.conflicts[0]!.regions.map((region) => [region.base, region.ours, region.theirs])).toEqual([
      ['<p>Run make deploy from a clean checkout.</p>\n', '<p>Run make deploy from a fresh clone.</p>\n', '<p>Run make deploy from a tagged release.</p>\n'],
      ['<p>Then watch the dashboard.</p>\n', '<p>Then read the dashboard.</p>\n', '<p>Then ignore the dashboard.</p>\n'],
    ]);
    expect(JSON.stringify(merged.conflicts)).not.toContain('Ship');
  });

  it('conflicts when one side deletes a paragraph the other edits', () => {
    const merged = mergeEdit(text(DOC), text(edit('<p>Then watch the dashboard.</p>\n', '')), text(edit('watch', 'check')));
    expect(merged.status).toBe('conflict');
  });
});

describe('title: one region', () => {
  it.each([
    ['only the page now changed it', 'Base', 'Ours', 'Base', 'Ours'],
    ['only the write changed it', 'Base', 'Base', 'Theirs', 'Theirs'],
    ['both changed it the same way', 'Base', 'Same', 'Same', 'Same'],
    ['neither changed it', 'Base', 'Base', 'Base', 'Base'],
  ])('%s: clean', (_name, base, ours, theirs, expected) => {
    expect(mergeEdit(text(DOC, base), text(DOC, ours), text(DOC, theirs))).toEqual({ status: 'clean', result: text(DOC, expected) });
  });

  it('both changed it differently: a title conflict, even where words of content would merge', () => {
    const merged = mergeEdit(text(DOC, 'Deploy guide'), text(DOC, 'Deploy handbook'), text(DOC, 'Release guide'));
    expect(merged).toEqual({ status: 'conflict', conflicts: [{ kind: 'title', regions: [{ base: 'Deploy guide', ours: 'Deploy handbook', theirs: 'Release guide' }] }] });
  });

  it('a title change on one side merges with a content change on the other; both conflicting lists title first', () => {
    expect(mergeEdit(text(DOC, 'A'), text(DOC, 'B'), text(edit('watch', 'check'), 'A'))).toEqual({ status: 'clean', result: text(edit('watch', 'check'), 'B') });
    const both = mergeEdit(text(DOC, 'A'), text(edit('watch', 'read'), 'B'), text(edit('watch', 'check'), 'C'));
    expect(both.status === 'conflict' && both.conflicts.map((conflict) => conflict.kind)).toEqual(['title', 'content']);
  });
});

describe('Japanese, full-width and half-width', () => {
  const WEATHER = '<p>今日は晴れです。明日は雨が降るでしょう。週末は出かけます。</p>';

  it('merges edits of different sentences of one paragraph', () => {
    const merged = mergeEdit(text(WEATHER), text(edit('晴れ', '曇り', WEATHER)), text(edit('出かけます', '家にいます', WEATHER)));
    expect(merged).toEqual({ status: 'clean', result: text('<p>今日は曇りです。明日は雨が降るでしょう。週末は家にいます。</p>') });
  });

  it('merges edits of the first and the middle sentence too', () => {
    const merged = mergeEdit(text(WEATHER), text(edit('今日は晴れ', '今日も晴れ', WEATHER)), text(edit('雨が降る', '雪が降る', WEATHER)));
    expect(merged).toEqual({ status: 'clean', result: text('<p>今日も晴れです。明日は雪が降るでしょう。週末は出かけます。</p>') });
  });

  it('conflicts when both change the same words differently', () => {
    const ours = edit('晴れ', '曇り', WEATHER);
    const theirs = edit('晴れ', '雪', WEATHER);
    expect(mergeEdit(text(WEATHER), text(ours), text(theirs))).toEqual({ status: 'conflict', conflicts: [{ kind: 'content', regions: [{ base: WEATHER, ours, theirs }] }] });
  });

  it('a Japanese title is one region as well', () => {
    const merged = mergeEdit(text(WEATHER, '天気予報'), text(WEATHER, '今週の天気予報'), text(WEATHER, '天気予報（東京）'));
    expect(merged.status === 'conflict' && merged.conflicts[0]).toEqual({ kind: 'title', regions: [{ base: '天気予報', ours: '今週の天気予報', theirs: '天気予報（東京）' }] });
  });

  const WIDE = '<p>ＡＢＣ</p>\n<p>１２３</p>\n';

  it('treats a change of width as a change: each side\'s width change is kept', () => {
    const merged = mergeEdit(text(WIDE), text(edit('ＡＢＣ', 'ABC', WIDE)), text(edit('１２３', '123', WIDE)));
    expect(merged).toEqual({ status: 'clean', result: text('<p>ABC</p>\n<p>123</p>\n') });
    // the other way round: a half-width base made full-width on one side stays full-width (no folding)
    expect(mergeEdit(text('<p>ABC</p>'), text('<p>ＡＢＣ</p>'), text('<p>ABC</p>'))).toEqual({ status: 'clean', result: text('<p>ＡＢＣ</p>') });
    expect(mergeEdit(text('<p>ABC</p>', 'ｶﾅ'), text('<p>ABC</p>', 'カナ'), text('<p>ABC</p>', 'ｶﾅ'))).toEqual({ status: 'clean', result: text('<p>ABC</p>', 'カナ') });
  });

  it('conflicts when one side changes the width and the other the letters', () => {
    const merged = mergeEdit(text(WIDE), text(edit('ＡＢＣ', 'ABC', WIDE)), text(edit('ＡＢＣ', 'ＡＢＤ', WIDE)));
    expect(merged).toEqual({ status: 'conflict', conflicts: [{ kind: 'content', regions: [{ base: '<p>ＡＢＣ</p>\n', ours: '<p>ABC</p>\n', theirs: '<p>ＡＢＤ</p>\n' }] }] });
    // full-width and half-width forms of the same letters are different texts: no false agreement
    const widths = mergeEdit(text('<p>abc</p>', 'T'), text('<p>ＸＹＺ</p>', 'T'), text('<p>XYZ</p>', 'T'));
    expect(widths.status).toBe('conflict');
  });
});

describe('the bound', () => {
  const blocks = (count: number, change: (i: number) => string | undefined) =>
    Array.from({ length: count }, (_, i) => `<p>${change(i) ?? i}</p>`).join('');
  const limits = { ...DEFAULT_MERGE_LIMITS, maxBlocks: 10 };

  it('answers unknown when more pieces than the bound lie between the two edits', () => {
    const base = blocks(12, () => undefined);
    const ours = blocks(12, (i) => (i === 0 ? 'first' : undefined));
    const theirs = blocks(12, (i) => (i === 11 ? 'last' : undefined));
    expect(mergeEdit(text(base), text(ours), text(theirs), budgetOf(limits))).toEqual({ status: 'unknown', reason: 'more than 10 pieces changed' });
    // within the bound the same edits merge cleanly
    expect(mergeEdit(text(base), text(ours), text(theirs), budgetOf({ ...limits, maxBlocks: 12 }))).toEqual({
      status: 'clean', result: text(blocks(12, (i) => (i === 0 ? 'first' : i === 11 ? 'last' : undefined))),
    });
  });

  it('answers unknown for a side past the size bound, or a merge past its time', () => {
    const big = mergeEdit(text(DOC), text(edit('Deploy<', 'Ship<')), text(edit('watch', 'check')), budgetOf({ ...DEFAULT_MERGE_LIMITS, maxBytes: 64 }));
    expect(big).toEqual({ status: 'unknown', reason: 'a side is larger than 64 bytes' });
    const late = mergeEdit(text(DOC), text(edit('Deploy<', 'Ship<')), text(edit('watch', 'check')), budgetOf({ ...DEFAULT_MERGE_LIMITS, timeBudgetMs: -1 }));
    expect(late).toEqual({ status: 'unknown', reason: 'the merge took longer than -1 ms' });
  });

  it('is unknown, not a conflict, past the bound even when the title conflicts too', () => {
    const merged = mergeEdit(text(DOC, 'A'), text(edit('Deploy<', 'Ship<'), 'B'), text(edit('watch', 'check'), 'C'), budgetOf({ ...DEFAULT_MERGE_LIMITS, maxBytes: 64 }));
    expect(merged.status).toBe('unknown');
  });

  it('needs no merge, so meets no bound, when the write left the content as it was in the base', () => {
    const merged = mergeEdit(text(DOC, 'A'), text(edit('watch', 'check'), 'A'), text(DOC, 'B'), budgetOf({ maxBytes: 8, maxBlocks: 1, timeBudgetMs: -1 }));
    expect(merged).toEqual({ status: 'clean', result: text(edit('watch', 'check'), 'B') });
  });

  it('leaves its inputs as they were', () => {
    const base = text(DOC, 'A');
    const ours = text(edit('Deploy<', 'Ship<'), 'B');
    const theirs = text(edit('watch', 'check'), 'A');
    const copies = structuredClone([base, ours, theirs]);
    expect(mergeEdit(base, ours, theirs).status).toBe('clean');
    expect([base, ours, theirs]).toEqual(copies);
  });
});
