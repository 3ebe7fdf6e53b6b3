// What presenting pages needs, in a fixed number of queries whatever the depth of the tree and the number of pages:
// the note (presented once), every page's ancestry (one recursive query), their children and their parents.
import type { Reader } from '../../cache/memory.ts';
import type { Note as NoteBody } from '../../../generated/client/types.gen.ts';
import { shared } from '../../http/json.ts';

import type { Note } from '../notes/note.entity.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { Page } from './page.entity.ts';
import type { PageView } from './page.presenter.ts';
import { loadOnePageView } from './page-view.loader.ts';
import { ancestries } from './pages.repository.ts';
import { joinPath } from './tree.ts';

export async function loadPageViews(reader: Reader, note: Note, pages: readonly Page[]): Promise<PageView[]> {
  if (pages.length === 0) return [];
  const presented = { note: shared(presentNote(await loadNoteView(reader, note), reader.urls, 'read')), coverPageId: note.coverPageId ?? null };
  const views = await pageViewsWith(reader, pages, () => presented);
  return pages.map((page) => views.get(page.id)!);
}

/**
 * Views of pages of any number of notes, each page's note given already presented (`noteOf`; a page whose note is
 * not given is left out): the tree questions (ancestries, children, parents) are asked once for all of them.
 */
export async function pageViewsWith(
  reader: Reader,
  pages: readonly Page[],
  noteOf: (page: Page) => { note: NoteBody; coverPageId: number | null } | undefined,
): Promise<Map<number, PageView>> {
  const views = new Map<number, PageView>();
  if (pages.length === 0) return views;
  const { em } = reader;
  const ids = pages.map((page) => page.id);
  const lineage = await ancestries(em, ids);
  const parentIds = [...new Set(pages.flatMap((page) => (page.parent ? [page.parent.id] : [])))];
  // relatives are shown as summaries: loaded without their content
  const fields = ['id', 'title', 'createdAt', 'updatedAt', 'parent'] as const;
  const children = await em.find(Page, { parent: { $in: ids } }, { fields, orderBy: [{ position: 'asc' }, { id: 'asc' }] });
  const parents = parentIds.length === 0 ? [] : await em.find(Page, { id: { $in: parentIds } }, { fields });
  const parentsById = new Map(parents.map((parent) => [parent.id, parent]));
  for (const page of pages) {
    const presented = noteOf(page);
    if (!presented) continue;
    const titles = lineage.get(page.id)?.titles ?? [page.title];
    const parent = page.parent ? parentsById.get(page.parent.id) : undefined;
    views.set(page.id, {
      page,
      path: joinPath(titles),
      note: presented.note,
      coverPageId: presented.coverPageId,
      parent: parent ? { page: parent, path: joinPath(titles.slice(0, -1)) } : undefined,
      children: children
        .filter((child) => child.parent?.id === page.id)
        .map((child) => ({ page: child, path: joinPath([...titles, child.title]) })),
    });
  }
  return views;
}

/** One page's view: one statement (page-view.loader.ts). */
export async function loadPageView(reader: Reader, note: Note, page: Page): Promise<PageView> {
  return loadOnePageView(reader, note, page);
}
