// The in-process caches hold at most their share of CACHE_BYTES, counted by what their entries keep alive.
import { describe, expect, it } from 'vitest';
import type { Page as PageBody } from '../../generated/client/types.gen.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { ChangeFeed } from '../../src/db/change-feed.ts';
import { FeedCache } from '../../src/cache/feed-cache.ts';
import { createMemory } from '../../src/cache/memory.ts';
import { tags } from '../../src/cache/tags.ts';
import { answerWith } from '../../src/http/answer.ts';
import { serialiseOnce } from '../../src/http/json.ts';
import type { PageScope } from '../../src/modules/access/scope.ts';
import { PageViewCache, pageViewBytes } from '../../src/cache/page-views.ts';

const liveFeed = (): ChangeFeed => ({ live: true, heard: 0, subscribe: () => undefined, sync: async () => undefined, close: async () => undefined });

const MiB = 1024 * 1024;

function pageBody(id: number, content: string): PageBody {
  return { id, title: `Page ${id}`, content, children: [], model: 'page' } as unknown as PageBody;
}
const scopeOf = (id: number) => ({ view: { key: `${id}:manager:-`, stamp: '1:1:null:null' } }) as PageScope;

describe('FeedCache', () => {
  it('holds at most its bytes, dropping the least recently used first', () => {
    const cache = new FeedCache<string>(liveFeed(), { entries: 1000, bytes: 100_000, largest: 50_000, sizeOf: (value: string) => 2 * value.length });
    for (let i = 0; i < 100; i++) {
      cache.keep(`k${i}`, 'x'.repeat(5000), [tags.note(i)], 0);
      if (i === 50) expect(cache.get('k45')).toBeDefined(); // used: moves to the end
      expect(cache.bytes).toBeLessThanOrEqual(100_000);
    }
    expect(cache.get('k99')).toBeDefined();
    expect(cache.get('k0')).toBeUndefined();
    expect(cache.get('k45')).toBeUndefined(); // used long ago by now
  });

  it('refuses an entry larger than its largest, and counts each entry\'s own overhead', () => {
    const cache = new FeedCache<string>(liveFeed(), { entries: 1000, bytes: 100_000, largest: 10_000, sizeOf: (value: string) => value.length });
    cache.keep('big', 'x'.repeat(10_000), [], 0);
    expect(cache.get('big')).toBeUndefined();
    cache.keep('small', 'x', [tags.note(1), tags.team(2)], 0);
    expect(cache.bytes).toBeGreaterThan(1);
  });

  it('hot reads keep an answer of a 16th of their share at most', () => {
    // CACHE_BYTES of 64 MiB: a quarter for the hot reads
    const { hot } = createMemory(liveFeed(), 64 * MiB);
    hot.keep('1 /a', { body: Buffer.alloc(MiB - 4096), etag: '"page-1-1"' }, [tags.note(1)], 0);
    hot.keep('1 /b', { body: Buffer.alloc(MiB + 1), etag: '"page-2-1"' }, [tags.note(1)], 0);
    expect(hot.get('1 /a')).toBeDefined();
    expect(hot.get('1 /b')).toBeUndefined();
    for (let i = 0; i < 40; i++) hot.keep(`1 /${i}`, { body: Buffer.alloc(MiB / 2), etag: '"e"' }, [tags.note(1)], 0);
    expect(hot.bytes).toBeLessThanOrEqual(16 * MiB);
  });
});

describe('PageViewCache', () => {
  it('counts a view as its JSON and the presented object, and holds at most its bytes', () => {
    const cache = new PageViewCache(16 * MiB);
    for (let i = 0; i < 40; i++) {
      const body = pageBody(i, `<p>${'a'.repeat(MiB / 2)}</p>`);
      cache.keep(scopeOf(i), answerWith(body, { etag: `"page-${i}-1"` }));
      expect(cache.bytes).toBeLessThanOrEqual(16 * MiB);
    }
    expect(cache.get(scopeOf(39))).toBeDefined();
    expect(cache.get(scopeOf(0))).toBeUndefined();
  });

  it('keeps no view larger than a quarter of its bytes', () => {
    const cache = new PageViewCache(8 * MiB);
    const body = pageBody(1, 'a'.repeat(MiB));
    cache.keep(scopeOf(1), answerWith(body, {}));
    expect(pageViewBytes(serialiseOnce(body).length, body.content.length)).toBeGreaterThan(2 * MiB);
    expect(cache.get(scopeOf(1))).toBeUndefined();
  });
});

describe('serialiseOnce', () => {
  it('keeps bytes of their own, not a slice of the shared pool', () => {
    const bytes = serialiseOnce({ small: 'answer' });
    expect(bytes.toString()).toBe('{"small":"answer"}');
    expect(bytes.buffer.byteLength).toBe(bytes.length);
  });
});

describe('CACHE_BYTES', () => {
  it('is 16 MiB by default, a whole number of bytes from 1 MiB up', () => {
    expect(loadConfig({}).cacheBytes).toBe(16 * MiB);
    expect(loadConfig({ CACHE_BYTES: String(MiB) }).cacheBytes).toBe(MiB);
    expect(loadConfig({ CACHE_BYTES: '1073741824' }).cacheBytes).toBe(1024 * MiB);
    for (const bad of ['1048575', '32M', '-1', '1e9', '0x100000']) expect(() => loadConfig({ CACHE_BYTES: bad })).toThrow(ConfigError);
  });
});
