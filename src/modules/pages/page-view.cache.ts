// Presented page views, kept in this process and served again while nothing they show has changed. Whether that is
// so is decided by the database, not by this process: the request's scope statement reads the newest revisions of
// the note, its team and (for a fork) the original and its team (src/db/migrations/0002-revisions.sql), which
// triggers bump in the same transaction as any change, made by any process. A view is served only when the stamp it
// was built at equals the one just read, so a process never serves a view older than a write it can see. Views are
// per role (the caller's role in the note's team and in the original's), since `role`, `can_*` depend on it.
import type { Page as PageBody } from '../../../generated/client/types.gen.ts';
import { serialiseOnce } from '../../http/json.ts';
import type { PageScope } from '../access/scope.ts';

const MAX_ENTRIES = 5000;
const MAX_CHARS = 32 * 1024 * 1024;

type Entry = { stamp: string; body: PageBody; chars: number };

export class PageViewCache {
  readonly #views = new Map<string, Entry>();
  #totalChars = 0;

  /** The presented view of the scope's page, when one was built at the stamp the scope was just loaded with. */
  get(scope: PageScope): PageBody | undefined {
    const entry = this.#views.get(scope.view.key);
    if (!entry) return undefined;
    if (entry.stamp !== scope.view.stamp) {
      this.#drop(scope.view.key);
      return undefined;
    }
    // least recently used goes first: move to the end
    this.#views.delete(scope.view.key);
    this.#views.set(scope.view.key, entry);
    return entry.body;
  }

  /** Keeps a view presented from data read after the scope's stamp (so never older than the stamp says). */
  keep(scope: PageScope, body: PageBody): void {
    const chars = serialiseOnce(body).length; // served again as this very text
    if (chars > MAX_CHARS / 16) return;
    this.#drop(scope.view.key);
    this.#views.set(scope.view.key, { stamp: scope.view.stamp, body, chars });
    this.#totalChars += chars;
    while (this.#views.size > MAX_ENTRIES || this.#totalChars > MAX_CHARS) this.#drop(this.#views.keys().next().value!);
  }

  #drop(key: string): void {
    const entry = this.#views.get(key);
    if (!entry) return;
    this.#totalChars -= entry.chars;
    this.#views.delete(key);
  }
}
