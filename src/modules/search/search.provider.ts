// The search provider: what the rest of the service asks of search, so that another implementation can replace the
// built-in n-gram index by configuration. Built in: `ngram` (search_documents with a GIN index over hashed n-grams,
// search.indexer.ts and search.query.ts), which runs the same on PGlite and on any PostgreSQL. An operator whose
// PostgreSQL has PGroonga or pg_bigm could add a provider here (indexing the source tables with that extension's
// operators, `index` then doing nothing) and select it by name; none is built (see README, "Search").
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../http/logger.ts';
import { reindex, type ReindexReport, type SearchDocument, writeDocuments } from './search.indexer.ts';
import { searchIndex, type SearchHits, type SearchRequest } from './search.query.ts';

export interface SearchProvider {
  readonly name: string;
  /** Writes (or replaces) the documents of a change, inside the change's transaction (`em` is the transaction's). */
  index(em: EntityManager, documents: readonly SearchDocument[]): Promise<void>;
  /** Rebuilds everything from the notes, pages, issues and comments (`npm run admin -- reindex`). */
  rebuild(em: EntityManager): Promise<ReindexReport>;
  /**
   * One page of the notes `callerId` may read that match, with their best matches: permissions applied before the
   * page is cut, in a fixed number of statements however many match (`log`: for trouble in the background).
   */
  search(em: EntityManager, callerId: number, request: SearchRequest, log: Logger): Promise<SearchHits>;
}

export const ngramProvider: SearchProvider = {
  name: 'ngram',
  index: writeDocuments,
  rebuild: (em) => reindex(em),
  search: searchIndex,
};

const providers: Record<string, SearchProvider> = { ngram: ngramProvider };

let active: SearchProvider = ngramProvider;

/** The provider in use. */
export function searchProvider(): SearchProvider {
  return active;
}

/** Selects a provider by name (a configuration setting would call this at start-up). */
export function useSearchProvider(name: string): void {
  const provider = providers[name];
  if (!provider) throw new Error(`unknown search provider "${name}" (known: ${Object.keys(providers).join(', ')})`);
  active = provider;
}
