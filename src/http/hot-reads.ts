// Answers kept whole in this process and served again without touching the database: the hot reads (a page, as
// getPage answers it to one token). An entry is tagged with what it shows (its note and team, the original of a fork
// and its team, the token) and dropped the moment the database announces a change to any of them (change-feed.ts),
// or this process changes them itself. Served only while the change feed is live; an entry built from reads that
// began before the last announcement is not kept (it might predate that change).
//
// What this gives up, stated plainly: a change committed by another process is heard here when PostgreSQL delivers
// its notification (normally well under a millisecond after the commit); until then this process may answer with
// the view it had. Changes made through this process, and every change on the embedded database, are heard before
// the request that made them is answered.
import type { RequestHandler } from 'express';
import type { Change, ChangeFeed } from '../db/change-feed.ts';

type Entry = { text: string; etag: string; tags: readonly string[] };

const MAX_ENTRIES = 10_000;
const MAX_CHARS = 64 * 1024 * 1024;

export class HotReads {
  readonly #feed: ChangeFeed;
  readonly #entries = new Map<string, Entry>();
  readonly #byTag = new Map<string, Set<string>>();
  #chars = 0;

  constructor(feed: ChangeFeed) {
    this.#feed = feed;
    feed.subscribe((change) => this.#heard(change));
  }

  /** Whether entries may be served and kept (the feed hears every change). */
  get live(): boolean {
    return this.#feed.live;
  }

  /** A mark to take before reading what an entry will hold; `keep` refuses the entry if a change was heard since. */
  mark(): number {
    return this.#feed.heard;
  }

  get(key: string): Entry | undefined {
    if (!this.#feed.live) return undefined;
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  keep(key: string, entry: Entry, mark: number): void {
    if (!this.#feed.live || this.#feed.heard !== mark || entry.text.length > MAX_CHARS / 64) return;
    this.#drop(key);
    this.#entries.set(key, entry);
    this.#chars += entry.text.length;
    for (const tag of entry.tags) {
      let keys = this.#byTag.get(tag);
      if (!keys) this.#byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
    while (this.#entries.size > MAX_ENTRIES || this.#chars > MAX_CHARS) this.#drop(this.#entries.keys().next().value!);
  }

  /** Forgets every entry tagged with one of these (what this process itself just changed). */
  forget(tags: readonly string[]): void {
    for (const tag of tags) for (const key of [...(this.#byTag.get(tag) ?? [])]) this.#drop(key);
  }

  #heard(change: Change): void {
    if ('everything' in change) {
      this.#entries.clear();
      this.#byTag.clear();
      this.#chars = 0;
      return;
    }
    this.forget(change.tags);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#chars -= entry.text.length;
    for (const tag of entry.tags) {
      const keys = this.#byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.#byTag.delete(tag);
    }
  }
}

export function hotReadKey(tokenId: number, path: string): string {
  return `${tokenId} ${path}`;
}

/** Serves a GET from the hot reads when one is kept for this token and path; otherwise the request goes on. */
export function serveHotReads(hot: HotReads): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' || !req.caller || !hot.live) return next();
    const entry = hot.get(hotReadKey(req.caller.tokenId, req.path));
    if (!entry) return next();
    res.status(200).set({ 'Content-Type': 'application/json; charset=utf-8', ETag: entry.etag }).send(entry.text);
  };
}
