// The page tree in SQL: each question about ancestors, descendants or tree order is one recursive query, whatever
// the depth of the tree or the size of the note. The depth limit (32 by default) keeps every recursion short.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Reader } from '../../cache/memory.ts';
import { tags } from '../../cache/tags.ts';

const intArray = (ids: readonly number[]) => `{${ids.join(',')}}`;

export type Ancestry = {
  /** Titles from the root down to the page itself. */
  titles: string[];
  /** Ids from the root down to the page itself. */
  ids: number[];
};

/** For each page (of `noteId`, when given): the titles and ids of its ancestors and itself, root first. One query. */
export async function ancestries(em: EntityManager, pageIds: readonly number[], noteId?: number): Promise<Map<number, Ancestry>> {
  const result = new Map<number, Ancestry>();
  if (pageIds.length === 0) return result;
  const rows = await em.execute<{ start_id: number; id: number; title: string; level: number }[]>(
    `with recursive up as (
       select id as start_id, id, parent_id, title, 0 as level from pages where id = any(?::int[]) ${noteId === undefined ? '' : 'and note_id = ?'}
       union all
       select up.start_id, p.id, p.parent_id, p.title, up.level + 1 from pages p join up on p.id = up.parent_id
        where up.level < 1000
     )
     select start_id, id, title, level from up order by start_id, level desc`,
    noteId === undefined ? [intArray(pageIds)] : [intArray(pageIds), noteId],
  );
  for (const row of rows) {
    const entry = result.get(row.start_id) ?? { titles: [], ids: [] };
    entry.titles.push(row.title);
    entry.ids.push(row.id);
    result.set(row.start_id, entry);
  }
  return result;
}

export const joinPath = (titles: readonly string[]) => titles.join(' / ');

/** How many levels the page's subtree spans: 1 for a page without children. One query. */
export async function subtreeHeight(em: EntityManager, pageId: number): Promise<number> {
  const rows = await em.execute<{ height: number }[]>(
    `with recursive down as (
       select id, 1 as level from pages where id = ?
       union all
       select p.id, down.level + 1 from pages p join down on p.parent_id = down.id where down.level < 1000
     )
     select max(level)::int as height from down`,
    [pageId],
  );
  return rows[0]?.height ?? 1;
}

export type TreeOrder = { column: 'position' | 'title' | 'created_at' | 'updated_at'; descending: boolean };

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

/**
 * Every page id of the note in tree order: a page comes right after its parent, siblings by position; the sort key is
 * the path of (position, id) pairs from the root. One query; the caller keeps the order (pages.handlers.ts).
 */
export async function allPageIdsInTreeOrder(em: EntityManager, noteId: number, descending: boolean): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(
    `with recursive tree as (
       select id, array[position, id] as sort_key, 1 as depth from pages where note_id = ? and parent_id is null
       union all
       select p.id, tree.sort_key || array[p.position, p.id], tree.depth + 1
         from pages p join tree on p.parent_id = tree.id where tree.depth < 1000
     )
     select id from tree order by sort_key ${descending ? 'desc' : 'asc'}`,
    [noteId],
  );
  return rows.map((row) => row.id);
}

/**
 * The ids of a note's pages in a flat order (one column, or the children of one parent by position), with each
 * page's text in bytes as stored (octet_length reads a value's size without reading the value), for cutting the
 * list into pages of results (pages.handlers.ts). The tree order of all pages is `allPageIdsInTreeOrder`. Only ids
 * and sizes are read here; the caller loads the few pages it presents.
 */
export async function pageIdsInOrder(em: EntityManager, noteId: number, parent: 'all' | 'root' | number, order: TreeOrder): Promise<{ id: number; bytes: number }[]> {
  const direction = order.descending ? 'desc' : 'asc';
  const filter = parent === 'all' ? '' : parent === 'root' ? 'and parent_id is null' : 'and parent_id = ?';
  const params: unknown[] = [noteId];
  if (typeof parent === 'number') params.push(parent);
  const rows = await em.execute<{ id: number; bytes: string | number }[]>(
    `select id, octet_length(content) as bytes from pages where note_id = ? ${filter} order by ${order.column} ${direction}, id ${direction}`,
    params,
  );
  return rows.map((row) => ({ id: row.id, bytes: Number(row.bytes) }));
}
