// A cache of values tagged with what they show (tags.ts), kept in this process while the change feed hears every
// change (src/db/change-feed.ts) and dropped the moment the database announces a change to any of their tags, or this
// process changes them itself. Used only while the feed is live; a value built from reads that began before the last
// announcement heard is not kept (it might predate that change).
import type { Change, ChangeFeed } from '../db/change-feed.ts';
import type { Tag } from './tags.ts';

/** What one entry costs beside its value: its key, its tags, the entry and the slots of the maps that index it. */
function entryOverheadBytes(key: string, tags: readonly Tag[]): number {
  let bytes = 256 + 2 * key.length;
  for (const tag of tags) bytes += 96 + 2 * tag.length;
  return bytes;
}

/**
 * Limits of a cache: at most `entries` entries and `bytes` bytes in all, counted by `sizeOf` (an upper bound of the
 * memory a value keeps alive) plus each entry's own overhead; one entry may take `largest` bytes at most (default a
 * 64th of `bytes`).
 */
export type FeedCacheLimits<Value> = { entries: number; bytes: number; largest?: number; sizeOf: (value: Value) => number };

export class FeedCache<Value> {
  readonly #feed: ChangeFeed;
  readonly #entries = new Map<string, { value: Value; tags: readonly Tag[]; size: number }>();
  readonly #byTag = new Map<string, Set<string>>();
  readonly #maxEntries: number;
  readonly #maxSize: number;
  readonly #largest: number;
  readonly #sizeOf: (value: Value) => number;
  #size = 0;

  constructor(feed: ChangeFeed, limits: FeedCacheLimits<Value>) {
    this.#feed = feed;
    this.#maxEntries = limits.entries;
    this.#maxSize = limits.bytes;
    this.#largest = limits.largest ?? limits.bytes / 64;
    this.#sizeOf = limits.sizeOf;
    feed.subscribe((change) => this.#heard(change));
  }

  /** What the entries hold, as counted (tests). */
  get bytes(): number {
    return this.#size;
  }

  /** Whether entries may be used and kept (the feed hears every change). */
  get live(): boolean {
    return this.#feed.live;
  }

  /** Resolves once every change committed before the call is heard (ChangeFeed.sync). */
  sync(): Promise<void> {
    return this.#feed.sync();
  }

  /** A mark to take before reading what an entry will hold; `keep` refuses the entry if a change was heard since. */
  mark(): number {
    return this.#feed.heard;
  }

  get(key: string): Value | undefined {
    if (!this.#feed.live) return undefined;
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  keep(key: string, value: Value, tags: readonly Tag[], mark: number): void {
    if (!this.#feed.live || this.#feed.heard !== mark) return;
    const size = this.#sizeOf(value) + entryOverheadBytes(key, tags);
    if (size > this.#largest) return;
    this.#drop(key);
    this.#entries.set(key, { value, tags, size });
    this.#size += size;
    for (const tag of tags) {
      let keys = this.#byTag.get(tag);
      if (!keys) this.#byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
    while (this.#entries.size > this.#maxEntries || this.#size > this.#maxSize) this.#drop(this.#entries.keys().next().value!);
  }

  /** Forgets every entry tagged with one of these (what this process itself just changed). */
  forget(tags: readonly Tag[]): void {
    for (const tag of tags) for (const key of [...(this.#byTag.get(tag) ?? [])]) this.#drop(key);
  }

  #heard(change: Change): void {
    if ('everything' in change) {
      this.#entries.clear();
      this.#byTag.clear();
      this.#size = 0;
      return;
    }
    this.forget(change.tags);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#size -= entry.size;
    for (const tag of entry.tags) {
      const keys = this.#byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.#byTag.delete(tag);
    }
  }
}

