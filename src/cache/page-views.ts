// Presented page views, kept in this process and served again while nothing they show has changed. Whether that is
// so is decided by the database, not by this process: the request's scope statement reads the newest revisions of
// the note, its team and (for a fork) the original and its team (src/db/migrations/0002-revisions.sql), which
// triggers bump in the same transaction as any change, made by any process. A view is served only when the stamp it
// was built at equals the one just read, so a process never serves a view older than a write it can see. Views are
// per role (the caller's role in the note's team and in the original's), since `role`, `can_*` depend on it.
//
// Bounded by bytes (its share of CACHE_BYTES, src/app.ts): each view counts what it keeps alive, its JSON as served
// and the presented object it was made from (pageViewBytes).
import type { Page as PageBody } from '../../generated/client/types.gen.ts';
import type { Answer } from '../http/answer.ts';
import { serialiseOnce } from '../http/json.ts';
import type { PageScope } from '../modules/access/scope.ts';

const MAX_ENTRIES = 5000;

/** What a key, its entry and the map's slot cost beside the view itself. */
const ENTRY_OVERHEAD_BYTES = 512;

/**
 * The memory a kept view holds, an upper bound: its JSON (a Buffer), the content string (at most two bytes per
 * character), and the rest of the presented object at most three times its JSON (objects and short strings weigh
 * more on the heap than in JSON; the JSON of the rest is at most what is left once the content's characters are
 * taken out). Team members it embeds are counted by their own cache.
 */
export function pageViewBytes(jsonBytes: number, contentChars: number): number {
  return jsonBytes + 2 * contentChars + 3 * Math.max(0, jsonBytes - contentChars) + ENTRY_OVERHEAD_BYTES;
}

type Entry = { stamp: string; answer: Answer<PageBody>; bytes: number };

export class PageViewCache {
  readonly #views = new Map<string, Entry>();
  readonly #maxBytes: number;
  #totalBytes = 0;

  /** `bytes`: the most the kept views may hold; one view may take a quarter of it at most. */
  constructor(bytes: number) {
    this.#maxBytes = bytes;
  }

  /** The presented view of the scope's page (with its ETag), when one was built at the stamp the scope was just loaded with. */
  get(scope: PageScope): Answer<PageBody> | undefined {
    const entry = this.#views.get(scope.view.key);
    if (!entry) return undefined;
    if (entry.stamp !== scope.view.stamp) {
      this.#drop(scope.view.key);
      return undefined;
    }
    // least recently used goes first: move to the end
    this.#views.delete(scope.view.key);
    this.#views.set(scope.view.key, entry);
    return entry.answer;
  }

  /** Keeps a view presented from data read after the scope's stamp (so never older than the stamp says). */
  keep(scope: PageScope, answer: Answer<PageBody>): void {
    // served again as this very JSON, made now and kept with the body
    const bytes = pageViewBytes(serialiseOnce(answer.body).length, answer.body.content.length);
    if (bytes > this.#maxBytes / 4) return;
    this.#drop(scope.view.key);
    this.#views.set(scope.view.key, { stamp: scope.view.stamp, answer, bytes });
    this.#totalBytes += bytes;
    while (this.#views.size > MAX_ENTRIES || this.#totalBytes > this.#maxBytes) this.#drop(this.#views.keys().next().value!);
  }

  /** What the kept views hold, as counted (tests). */
  get bytes(): number {
    return this.#totalBytes;
  }

  #drop(key: string): void {
    const entry = this.#views.get(key);
    if (!entry) return;
    this.#totalBytes -= entry.bytes;
    this.#views.delete(key);
  }
}
