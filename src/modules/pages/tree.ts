// The page tree: paths, orders, and a note's tree order kept in memory. Each question the database answers about
// ancestors, descendants or tree order is one recursive query (pages.repository.ts), whatever the depth of the tree
// or the size of the note.
import type { Reader } from '../../cache/memory.ts';
import { tags } from '../../cache/tags.ts';
import { allPageIdsInTreeOrder } from './pages.repository.ts';

export const joinPath = (titles: readonly string[]) => titles.join(' / ');

/**
 * A note's page ids in tree order: the whole tree is walked and sorted to find any page of results, so the order is
 * kept in memory while the change feed says no page of the note changed (its note's tag); page 500 then costs what
 * page 1 does.
 */
export async function pageIdsInTreeOrder(reader: Reader, noteId: number, descending: boolean): Promise<readonly number[]> {
  const key = `${noteId}:${descending ? 'desc' : 'asc'}`;
  const cache = reader.memory.treeOrders;
  const kept = reader.fresh ? undefined : cache.get(key);
  if (kept) return kept;
  const mark = cache.mark();
  const ids = await allPageIdsInTreeOrder(reader.em, noteId, descending);
  if (!reader.fresh) cache.keep(key, ids, [tags.note(noteId)], mark);
  return ids;
}
