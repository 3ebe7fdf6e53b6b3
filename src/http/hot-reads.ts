// What this process keeps in memory between requests on the word of the change feed (change-feed.ts): answers and
// presented objects tagged with what they show (`n<note>`, `t<team>`, `k<token>`), dropped the moment the database
// announces a change to any of them, or this process changes them itself. They are used only while the feed is live,
// and one built from reads that began before the last announcement heard is not kept (it might predate that change).
//
// A change committed by another process is heard when PostgreSQL delivers its notification, normally well under a
// millisecond after the commit, but a request can arrive first (a client that wrote through process A and reads
// through B at once). So before anything kept is served to a GET, the feed is synced (ChangeFeed.sync: one round trip
// on the listening connection, shared by every request waiting, run beside the request's scope statement): whatever
// was committed before the request arrived is heard, and dropped, first. Changes made through this process, and
// every change on the embedded database, are heard before the request that made them is answered.
import type { RequestHandler } from 'express';
import type { Change, ChangeFeed } from '../db/change-feed.ts';
import { ifNoneMatchHits } from './etag.ts';

/** What one entry costs beside its value: its key, its tags, the entry and the slots of the maps that index it. */
function entryOverheadBytes(key: string, tags: readonly string[]): number {
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
  readonly #entries = new Map<string, { value: Value; tags: readonly string[]; size: number }>();
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

  keep(key: string, value: Value, tags: readonly string[], mark: number): void {
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
  forget(tags: readonly string[]): void {
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

/** A hot read: an answer kept whole, as sent (a page, as getPage answers it to one token). */
export type HotRead = { body: Buffer; etag: string };
export type HotReads = FeedCache<HotRead>;

/** `bytes`: the most the kept answers may hold; one answer may take a 16th of it at most. */
export function hotReads(feed: ChangeFeed, bytes: number): HotReads {
  return new FeedCache<HotRead>(feed, { entries: 10_000, bytes, largest: bytes / 16, sizeOf: (entry) => entry.body.length + 2 * entry.etag.length });
}

export function hotReadKey(tokenId: number, path: string): string {
  return `${tokenId} ${path}`;
}

/** Serves a GET from the hot reads when one is kept for this token and path; otherwise the request goes on. */
export function serveHotReads(hot: HotReads): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'GET' || !req.caller || !hot.live) return next();
    const key = hotReadKey(req.caller.tokenId, req.path);
    if (!hot.get(key)) return next();
    // a change committed through another process before this request arrived is heard first (it drops the entry)
    await hot.sync();
    const entry = hot.get(key);
    if (!entry) return next();
    res.locals.operationId = 'getPage';
    if (ifNoneMatchHits(req.get('if-none-match'), entry.etag)) {
      res.status(304).set('ETag', entry.etag).end();
      return;
    }
    res.status(200).set({ 'Content-Type': 'application/json; charset=utf-8', ETag: entry.etag }).send(entry.body);
  };
}
