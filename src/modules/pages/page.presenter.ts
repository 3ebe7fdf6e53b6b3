import type { Note as NoteBody, Page as PageBody, PageSummary as PageSummaryBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import type { Page } from './page.entity.ts';

/** A page with its path (titles from the root down, joined by ` / `). */
export type PlacedPage = { page: Page; path: string };

/** A page with everything its presentation embeds, loaded by pages.loader.ts. */
export type PageView = PlacedPage & {
  /** The note, already presented (every page of a list shares it), and which of its pages is the cover. */
  note: NoteBody;
  coverPageId: number | null;
  parent: PlacedPage | undefined;
  children: PlacedPage[];
};

export function presentPageSummary({ page, path }: PlacedPage, note: NoteBody, coverPageId: number | null, urls: Urls): PageSummaryBody {
  return {
    id: page.id,
    title: page.title,
    created_at: page.createdAt.toISOString(),
    updated_at: page.updatedAt.toISOString(),
    is_cover: page.id === coverPageId,
    note,
    html_url: urls.page(note.team.name, note.name, page.id),
    content: page.content,
    path,
    model: 'page',
  };
}

export function presentPage(view: PageView, urls: Urls): PageBody {
  const summary = (placed: PlacedPage) => presentPageSummary(placed, view.note, view.coverPageId, urls);
  return {
    ...summary(view),
    children: view.children.map(summary),
    ...(view.parent ? { parent: summary(view.parent) } : {}),
  };
}

/** The ETag of a page: changes with every change to it. */
export function pageEtag(page: Pick<Page, 'id' | 'lockVersion'>): string {
  return `"page-${page.id}-${page.lockVersion}"`;
}
