// What presenting pages needs, in a fixed number of queries whatever the depth of the tree and the number of pages:
// the note (presented once), and for every page its ancestry, parent and children in one statement
// (pages.repository.ts, pageViewRows): the same statement and the same placing (page-view.loader.ts) as one page's view.
import type { Reader } from '../../cache/memory.ts';
import type { Note as NoteBody } from '../../../generated/client/types.gen.ts';
import { shared } from '../../http/json.ts';
import type { Note } from '../notes/note.entity.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import type { Page } from './page.entity.ts';
import type { PageView } from './page.presenter.ts';
import { loadOnePageView, placed } from './page-view.loader.ts';
import { pageViewRows } from './pages.repository.ts';

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
  const rows = await pageViewRows(reader.em, pages.map((page) => page.id), null, null);
  for (const page of pages) {
    const presented = noteOf(page);
    if (presented) views.set(page.id, { page, note: presented.note, coverPageId: presented.coverPageId, ...placed(page, rows.get(page.id)) });
  }
  return views;
}

/** One page's view: one statement (page-view.loader.ts). */
export async function loadPageView(reader: Reader, note: Note, page: Page): Promise<PageView> {
  return loadOnePageView(reader, note, page);
}
