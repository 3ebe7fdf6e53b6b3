// How common the index's tokens are, from PostgreSQL's column statistics of `search_documents.tokens` (ANALYZE keeps
// them: the most common elements and their shares of the documents; migration 0013 asks for 10,000 of them). Held in
// memory for STATS_LIFETIME_MS per database and refreshed in the background, so a search reads them from a map
// instead of unpacking pg_stats in its statement (milliseconds for every search).
//
// They only choose how a search runs (search.query.ts), never what it finds: `few` (at most `bound` candidates: rank
// them all), `many` (more: walk the notes in order), `count` (not settled: the statement counts, up to the bound).
// A stale or missing answer costs time, not correctness.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../http/logger.ts';
import { readTokenStats, STATS_STATEMENT_MARK } from './search.repository.ts';

export { STATS_STATEMENT_MARK };

export type Candidates = 'few' | 'many' | 'count';

/** How long statistics are used before they are read again (in the background; the old ones serve meanwhile). */
export const STATS_LIFETIME_MS = 60_000;

type TokenStats = {
  /** Documents in the table (its planner estimate). */
  documents: number;
  /** A common token's share of the documents. */
  shares: Map<number, number>;
  /** The least share among the common tokens: any other token has at most this share. */
  floor: number;
};

type Entry = { stats: TokenStats | undefined; loadedAt: number; loading: Promise<void> | undefined };

// per database (the ORM's configuration object): tests run many databases in one process
const entries = new WeakMap<object, Entry>();

async function readStats(em: EntityManager): Promise<TokenStats | undefined> {
  const row = await readTokenStats(em);
  if (!row || !row.elems || !row.freqs || row.elems.length === 0 || !(row.documents > 0)) return undefined;
  // the shares of the elements, then three more numbers (least share, greatest share, null share)
  const shares = new Map<number, number>();
  let floor = 1;
  row.elems.forEach((element, index) => {
    const share = row.freqs![index]!;
    shares.set(element, share);
    floor = Math.min(floor, share);
  });
  return { documents: row.documents, shares, floor };
}

function refresh(em: EntityManager, entry: Entry, log: Logger): Promise<void> {
  entry.loading ??= readStats(em.fork())
    .then((stats) => {
      entry.stats = stats;
    })
    .catch((error: unknown) => {
      log.warn({ error: error instanceof Error ? error.message : String(error) }, 'search: reading the token statistics failed; searches count their candidates');
    })
    .finally(() => {
      entry.loadedAt = Date.now();
      entry.loading = undefined;
    });
  return entry.loading;
}

/** The statistics (the first call per database waits for them; later ones get them refreshed behind them). */
async function currentStats(em: EntityManager, log: Logger): Promise<TokenStats | undefined> {
  let entry = entries.get(em.config);
  if (!entry) {
    entry = { stats: undefined, loadedAt: 0, loading: undefined };
    entries.set(em.config, entry);
    await refresh(em, entry, log);
  } else if (entry.loading === undefined && Date.now() - entry.loadedAt > STATS_LIFETIME_MS) {
    void refresh(em, entry, log);
  }
  return entry.stats;
}

/** Drops what is held for this database: the next search reads the statistics again (reindex calls it after ANALYZE). */
export function forgetTokenStats(em: EntityManager): void {
  entries.delete(em.config);
}

/**
 * How many documents have every one of `tokens`: `few` when the rarest token bounds them under `bound` (or under twice
 * the bound, see below), `many` when there is one token and it is a common one past the bound (its share says how
 * many); otherwise `count`.
 */
export async function candidates(em: EntityManager, log: Logger, tokens: readonly number[], bound: number): Promise<Candidates> {
  const stats = await currentStats(em, log);
  if (!stats || tokens.length === 0) return 'count';
  let least = Infinity;
  let known = false;
  for (const token of tokens) {
    const share = stats.shares.get(token);
    if ((share ?? stats.floor) < least) {
      least = share ?? stats.floor;
      known = share !== undefined;
    }
  }
  const upper = least * stats.documents;
  if (upper <= bound) return 'few';
  if (tokens.length === 1 && known) return 'many';
  // not settled, but at most twice the bound: ranking them costs about what counting to the bound and then walking
  // would (a heap visit per candidate either way), and it answers in one statement
  return upper <= 2 * bound ? 'few' : 'count';
}
