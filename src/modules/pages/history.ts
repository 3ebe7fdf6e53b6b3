// A note as it was at a moment (`?at=` on getNote, listPages and getPage, issue 23): the tree then, each page's version
// then, pages deleted since shown and pages created later absent. Read-only; who may read is today's permissions (the
// scope was loaded as for any read). The tree comes in one statement (history.repository.ts), the contents of the
// pages shown in one more, so a read of the past costs a fixed number of statements whatever the note's size.
import type { Reader } from '../../cache/memory.ts';
import { tags } from '../../cache/tags.ts';
import { shared } from '../../http/json.ts';
import { unprocessable } from '../errors.ts';
import type { Note } from '../notes/note.entity.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { contentsThen, pagesThen, type PageThen } from './history.repository.ts';
import type { PageView, PlacedPage } from './page.presenter.ts';
import type { TreeOrder } from './pages.repository.ts';
import { joinPath } from './tree.ts';

/** Versions and notes are stamped to the second (rounded): a note is taken to exist from half a second before its stamp. */
const STAMP_ROUNDING_MS = 500;

/** The moment `at` names, checked against the note and the request's arrival (422 otherwise). */
export function momentOf(note: Note, at: string, arrivedAt: number): Date {
  const moment = new Date(at);
  if (moment.getTime() > arrivedAt) throw unprocessable('at_in_future', `${at} is after this request arrived`, [{ pointer: '/at', detail: 'a moment in the future' }]);
  if (moment.getTime() < note.createdAt.getTime() - STAMP_ROUNDING_MS) {
    throw unprocessable('at_before_note', `the note was created at ${note.createdAt.toISOString()}, after ${at}`, [{ pointer: '/at', detail: 'before the note existed' }]);
  }
  return moment;
}

/** The note's tree at a moment: its pages then by id, and each parent's children in position order. */
export type TreeThen = { at: Date; pages: Map<number, PageThen>; children: Map<number | null, PageThen[]> };

/**
 * Kept in memory per note and moment while the change feed says nothing of the note changed (a later change can
 * still change what the past shows: a page's times, once it is changed after the moment), so a client reading the
 * note as it was, page of results by page of results, has the tree read once.
 */
export async function treeThen(reader: Reader, note: Note, at: Date): Promise<TreeThen> {
  const key = `${note.id} ${at.toISOString()}`;
  const cache = reader.memory.treesThen;
  const kept = reader.fresh ? undefined : cache.get(key);
  if (kept) return kept;
  const mark = cache.mark();
  const tree = await readTreeThen(reader, note, at);
  if (!reader.fresh) cache.keep(key, tree, [tags.note(note.id)], mark);
  return tree;
}

async function readTreeThen(reader: Reader, note: Note, at: Date): Promise<TreeThen> {
  const rows = await pagesThen(reader.em, note.id, at);
  const pages = new Map(rows.map((page) => [page.id, page]));
  const children = new Map<number | null, PageThen[]>();
  for (const page of rows) {
    // a page whose parent was not there then (never happens through the API) is shown at the top
    const parent = page.parentId !== null && pages.has(page.parentId) ? page.parentId : null;
    const siblings = children.get(parent) ?? [];
    siblings.push(page);
    children.set(parent, siblings);
  }
  for (const siblings of children.values()) siblings.sort((a, b) => a.position - b.position || a.id - b.id);
  return { at, pages, children };
}

/** The page and its ancestors, from the root down, in the tree then. */
function ancestryThen(tree: TreeThen, page: PageThen): PageThen[] {
  const line: PageThen[] = [];
  const seen = new Set<number>();
  for (let current: PageThen | undefined = page; current && !seen.has(current.id); current = current.parentId === null ? undefined : tree.pages.get(current.parentId)) {
    seen.add(current.id);
    line.unshift(current);
  }
  return line;
}

/** The pages in tree order (depth first, children by position), or reversed. */
function inTreeOrder(tree: TreeThen, descending: boolean): PageThen[] {
  const ordered: PageThen[] = [];
  const stack = [...(tree.children.get(null) ?? [])].reverse();
  const seen = new Set<number>();
  while (stack.length > 0) {
    const page = stack.pop()!;
    if (seen.has(page.id)) continue;
    seen.add(page.id);
    ordered.push(page);
    stack.push(...[...(tree.children.get(page.id) ?? [])].reverse());
  }
  return descending ? ordered.reverse() : ordered;
}

const sortKey: Record<TreeOrder['column'], (page: PageThen) => string | number> = {
  position: (page) => page.position,
  title: (page) => page.title,
  created_at: (page) => page.createdAt.getTime(),
  updated_at: (page) => page.updatedAt.getTime(),
};

/** listPages' orders over the tree then: `parent` all (tree order for `position`), root or a page id (404 by the caller). */
export function orderedThen(tree: TreeThen, parent: 'all' | 'root' | number, order: TreeOrder): PageThen[] {
  if (parent === 'all' && order.column === 'position') return inTreeOrder(tree, order.descending);
  const chosen = parent === 'all' ? [...tree.pages.values()] : [...(tree.children.get(parent === 'root' ? null : parent) ?? [])];
  const key = sortKey[order.column];
  const direction = order.descending ? -1 : 1;
  return chosen.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return (x < y ? -1 : x > y ? 1 : a.id - b.id) * direction;
  });
}

/** Views of the pages given as they were, with their contents then (one statement), in the order given. */
export async function viewsThen(reader: Reader, note: Note, tree: TreeThen, pages: readonly PageThen[]): Promise<PageView[]> {
  if (pages.length === 0) return [];
  const [noteView, contents] = await Promise.all([loadNoteView(reader, note), contentsThen(reader.em, note.id, pages)]);
  const noteBody = shared(presentNote(noteView, reader.urls, 'read'));
  const heading = (page: PageThen) => ({ id: page.id, title: page.title, createdAt: page.createdAt, updatedAt: page.updatedAt });
  return pages.map((page) => {
    const line = ancestryThen(tree, page);
    const titles = line.map((then) => then.title);
    const parent = page.parentId === null ? undefined : tree.pages.get(page.parentId);
    const placedParent: PlacedPage | undefined = parent ? { page: heading(parent), path: joinPath(titles.slice(0, -1)) } : undefined;
    return {
      page: { ...heading(page), content: contents.get(page.id) ?? '', versionSequence: page.version },
      note: noteBody,
      // the cover is today's: which page was the cover is not part of the tree's history
      coverPageId: note.coverPageId ?? null,
      path: joinPath(titles),
      ancestors: line.slice(0, -1).map((then) => ({ id: then.id, title: then.title })),
      parent: placedParent,
      children: (tree.children.get(page.id) ?? []).map((child) => ({ page: heading(child), path: joinPath([...titles, child.title]) })),
    };
  });
}

/** The ETag of a page read at a moment: names its version then, which no write takes as current. */
export function pageThenEtag(page: PageThen): string {
  return `"page-${page.id}-at-${page.version}"`;
}
