// What presenting pages needs, in a fixed number of queries whatever the depth of the tree and the number of pages:
// the note (presented once), every page's ancestry (one recursive query), their children and their parents.
import { shared } from '../../http/json.ts';
import type { Reader } from '../../http/handler.ts';
import type { Note } from '../notes/note.entity.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { Page } from './page.entity.ts';
import type { PageView } from './page.presenter.ts';
import { loadOnePageView } from './page-view.query.ts';
import { ancestries, joinPath } from './tree.ts';

export async function loadPageViews(reader: Reader, note: Note, pages: readonly Page[]): Promise<PageView[]> {
  if (pages.length === 0) return [];
  const { em, urls } = reader;
  const noteBody = shared(presentNote(await loadNoteView(reader, note), urls, 'read'));
  const ids = pages.map((page) => page.id);
  const lineage = await ancestries(em, ids);
  const parentIds = [...new Set(pages.flatMap((page) => (page.parent ? [page.parent.id] : [])))];
  const children = await em.find(Page, { parent: { $in: ids } }, { orderBy: [{ position: 'asc' }, { id: 'asc' }] });
  const parents = parentIds.length === 0 ? [] : await em.find(Page, { id: { $in: parentIds } });
  const parentsById = new Map(parents.map((parent) => [parent.id, parent]));
  return pages.map((page) => {
    const titles = lineage.get(page.id)?.titles ?? [page.title];
    const path = joinPath(titles);
    const parent = page.parent ? parentsById.get(page.parent.id) : undefined;
    return {
      page,
      path,
      note: noteBody,
      coverPageId: note.coverPageId ?? null,
      parent: parent ? { page: parent, path: joinPath(titles.slice(0, -1)) } : undefined,
      children: children
        .filter((child) => child.parent?.id === page.id)
        .map((child) => ({ page: child, path: joinPath([...titles, child.title]) })),
    };
  });
}

/** One page's view: one statement (page-view.query.ts). */
export async function loadPageView(reader: Reader, note: Note, page: Page): Promise<PageView> {
  return loadOnePageView(reader, note, page);
}
