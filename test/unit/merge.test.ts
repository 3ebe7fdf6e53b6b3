import { describe, expect, it } from 'vitest';
import { budgetOf, DEFAULT_MERGE_LIMITS, mergeText, resolveChunks, type Chunk } from '../../src/modules/text/merge3.ts';
import { classify, mergePage, mergeParent, type Side } from '../../src/modules/requests/merge/pages.ts';
import { splitBlocks, splitWords } from '../../src/modules/text/merge-tokens.ts';

const page = (content: string, title = 'Page'): Side => ({ title, content });
const BASE = '<h1>Deploy</h1>\n<p>Run make deploy from a clean checkout.</p>\n<p>Then check the dashboard.</p>\n<ul><li>one</li><li>two</li></ul>';

describe('splitting', () => {
  it.each([
    BASE,
    '<p>a</p><p>b</p>',
    'loose text <b>bold</b><p>x</p> tail',
    '<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>',
    '<table><tr><td><p>cell</p></td></tr></table><pre>x\ny</pre>',
    '<p>unclosed',
    '',
  ])('blocks and words join back to the input: %s', (html) => {
    expect(splitBlocks(html).join('')).toBe(html);
    expect(splitWords(html).join('')).toBe(html);
  });

  it('blocks are the paragraphs, headings and list items', () => {
    expect(splitBlocks(BASE)).toEqual([
      '<h1>Deploy</h1>\n',
      '<p>Run make deploy from a clean checkout.</p>\n',
      '<p>Then check the dashboard.</p>\n',
      '<ul>',
      '<li>one',
      '</li>',
      '<li>two',
      '</li>',
      '</ul>',
    ]);
    expect(splitBlocks('<table><tr><td><p>x</p></td></tr></table><p>y</p>')).toEqual(['<table><tr><td><p>x</p></td></tr></table>', '<p>y</p>']);
  });

  it('words keep tags whole and split Japanese into words', () => {
    expect(splitWords('<p class="a">Hello, world</p>')).toEqual(['<p class="a">', 'Hello', ',', ' ', 'world', '</p>']);
    expect(splitWords('<p>今日は良い天気です</p>').length).toBeGreaterThan(4);
  });
});

type Case = [name: string, base: Side, ours: Side, theirs: Side, expected: { clean: Side } | { kind: 'content' | 'delete_modify'; regions: number }];
const edit = (from: string, to: string): string => BASE.replace(from, to);

describe('mergePage: the table of cases', () => {
  const cases: Case[] = [
    ['fork only (theirs) edited', page(BASE), page(BASE), page(edit('clean', 'fresh')), { clean: page(edit('clean', 'fresh')) }],
    ['upstream only (ours) edited', page(BASE), page(edit('clean', 'fresh')), page(BASE), { clean: page(edit('clean', 'fresh')) }],
    [
      'both edited different paragraphs: clean',
      page(BASE),
      page(edit('Deploy<', 'Deploying<')),
      page(edit('dashboard', 'deploy dashboard')),
      { clean: page(edit('Deploy<', 'Deploying<').replace('dashboard', 'deploy dashboard')) },
    ],
    [
      'both edited different words of one paragraph: clean at word level',
      page(BASE),
      page(edit('Run make', 'Run `make')),
      page(edit('clean checkout', 'clean git checkout')),
      { clean: page(edit('Run make', 'Run `make').replace('clean checkout', 'clean git checkout')) },
    ],
    ['both edited the same sentence differently: conflict', page(BASE), page(edit('clean checkout', 'fresh clone')), page(edit('clean checkout', 'tagged release')), { kind: 'content', regions: 1 }],
    ['identical edits: clean', page(BASE), page(edit('two', 'three')), page(edit('two', 'three')), { clean: page(edit('two', 'three')) }],
    ['deleted upstream, edited in the fork: conflict', page(BASE), null, page(edit('two', 'three')), { kind: 'delete_modify', regions: 1 }],
    ['edited upstream, deleted in the fork: conflict', page(BASE), page(edit('two', 'three')), null, { kind: 'delete_modify', regions: 1 }],
    ['deleted on one side, untouched on the other: deleted', page(BASE), page(BASE), null, { clean: null }],
    [
      'Japanese: different words of one sentence edited on both sides: clean',
      page('<p>今日は東京で会議があります。</p>'),
      page('<p>明日は東京で会議があります。</p>'),
      page('<p>今日は大阪で会議があります。</p>'),
      { clean: page('<p>明日は大阪で会議があります。</p>') },
    ],
    ['title changed on one side, content on the other: clean', page(BASE, 'A'), page(BASE, 'B'), page(edit('two', '2'), 'A'), { clean: page(edit('two', '2'), 'B') }],
    ['titles changed differently: conflict', page(BASE, 'A'), page(BASE, 'B'), page(BASE, 'C'), { kind: 'content', regions: 1 }],
    ['list items added at both ends: clean', page('<ul><li>a</li><li>b</li></ul>'), page('<ul><li>0</li><li>a</li><li>b</li></ul>'), page('<ul><li>a</li><li>b</li><li>c</li></ul>'), { clean: page('<ul><li>0</li><li>a</li><li>b</li><li>c</li></ul>') }],
  ];

  it.each(cases)('%s', (_name, base, ours, theirs, expected) => {
    const merged = mergePage(7, base, ours, theirs);
    if ('clean' in expected) {
      expect(merged).toEqual({ status: 'clean', result: expected.clean });
    } else {
      expect(merged.status).toBe('conflict');
      if (merged.status !== 'conflict') return;
      expect(merged.conflict.page_id).toBe(7);
      expect(merged.conflict.kind).toBe(expected.kind);
      expect(merged.conflict.regions).toHaveLength(expected.regions);
    }
  });

  it('a conflict is data, and resolves to either side or a given text, never with markers', () => {
    const merged = mergePage(1, page(BASE), page(edit('clean checkout', 'fresh clone').replace('Deploy<', 'Ship<')), page(edit('clean checkout', 'tagged release')));
    if (merged.status !== 'conflict') throw new Error('expected a conflict');
    expect(merged.conflict.regions).toEqual([
      { base: '<p>Run make deploy from a clean checkout.</p>\n', ours: '<p>Run make deploy from a fresh clone.</p>\n', theirs: '<p>Run make deploy from a tagged release.</p>\n' },
    ]);
    // the clean part (the heading) stays merged whichever side resolves the region
    expect(merged.resolve('theirs')).toEqual(page(edit('clean checkout', 'tagged release').replace('Deploy<', 'Ship<')));
    expect(merged.resolve('ours')).toEqual(page(edit('clean checkout', 'fresh clone').replace('Deploy<', 'Ship<')));
    expect(merged.resolve({ content: '<p>mine</p>' })).toEqual(page('<p>mine</p>'));
  });

  it('classifies pages from the fork side', () => {
    const b = page('x');
    expect(classify(b, b, b)).toBe('unchanged');
    expect(classify(b, b, page('y'))).toBe('fork_only');
    expect(classify(b, page('y'), b)).toBe('upstream_only');
    expect(classify(b, page('y'), page('y'))).toBe('identical');
    expect(classify(b, page('y'), page('z'))).toBe('diverged');
    expect(classify(null, null, page('new'))).toBe('fork_only');
  });
});

describe('mergeParent: the tree', () => {
  it.each([
    ['unmoved', '1', '1', '1', { status: 'clean', parent: '1' }],
    ['moved by ours only', '1', '2', '1', { status: 'clean', parent: '2' }],
    ['moved by theirs only (to the top level)', '1', '1', '', { status: 'clean', parent: '' }],
    ['moved to the same parent on both sides', '', '3', '3', { status: 'clean', parent: '3' }],
    ['moved to different parents on both sides', '1', '2', 'fork:9', { status: 'conflict', conflict: { page_id: 5, kind: 'tree', regions: [{ base: '1', ours: '2', theirs: 'fork:9' }] } }],
  ])('%s', (_name, base, ours, theirs, expected) => {
    expect(mergeParent(5, base, ours, theirs)).toEqual(expected);
  });
});

describe('bounds', () => {
  it('past the size cap the merge is unknown, with a reason', () => {
    const big = `<p>${'x'.repeat(2000)}</p>`;
    const merged = mergePage(1, page(big), page(`${big}<p>a</p>`), page(`<p>b</p>${big}`), budgetOf({ maxBytes: 1000, maxBlocks: 100, timeBudgetMs: 1000 }));
    expect(merged).toEqual({ status: 'unknown', reason: 'a side is larger than 1000 bytes' });
  });

  it('past the time budget the merge is unknown', () => {
    const paragraphs = Array.from({ length: 200 }, (_, i) => `<p>paragraph ${i} with words</p>`);
    const ours = paragraphs.map((p, i) => (i % 2 === 0 ? p.replace('with', 'WITH') : p)).join('');
    const theirs = paragraphs.map((p, i) => (i % 2 === 0 ? p.replace('words', 'WORDS') : p)).join('');
    const merged = mergePage(1, page(paragraphs.join('')), page(ours), page(theirs), { deadline: Date.now() - 1, limits: { maxBytes: 1e7, maxBlocks: 1e5, timeBudgetMs: 0 } });
    expect(merged.status).toBe('unknown');
  });

  it('merges a 1 MiB page edited on both sides within the budget', () => {
    const paragraphs = Array.from({ length: 14_400 }, (_, i) => `<p>Paragraph ${i}: the quick brown fox jumps over the lazy dog ${i * 7}.</p>\n`);
    const base = paragraphs.join('');
    const ours = paragraphs.map((p, i) => (i % 100 === 0 ? p.replace('quick', 'slow') : p)).join('');
    const theirs = paragraphs.map((p, i) => (i % 100 === 0 ? p.replace('lazy', 'busy') : i % 250 === 1 ? p.replace('fox', 'cat') : p)).join('');
    expect(Buffer.byteLength(base)).toBeGreaterThan(1024 * 1024);
    const started = performance.now();
    // a generous budget: the figure is measured, not bounded (the machine is shared; the default is 2 s)
    const chunks: Chunk[] = mergeText(base, ours, theirs, budgetOf({ ...DEFAULT_MERGE_LIMITS, timeBudgetMs: 60_000 }));
    const elapsed = performance.now() - started;
    expect(chunks).toHaveLength(1);
    const merged = resolveChunks(chunks, 'ours');
    expect(merged).toContain('<p>Paragraph 0: the slow brown fox jumps over the busy dog 0.</p>');
    expect(merged).toContain('<p>Paragraph 1: the quick brown cat jumps over the lazy dog 7.</p>');
    console.log(`merge of ${Buffer.byteLength(base)} bytes, 144 paragraphs changed on both sides: ${elapsed.toFixed(0)} ms`);
  });
});
