import type { Note as NoteBody, Page as PageBody, PageAncestor as PageAncestorBody, PageRelative as PageRelativeBody, PageSummary as PageSummaryBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import type { Page } from './page.entity.ts';

/** What names a page in a summary: never its content (a page's children and parent are loaded without it). */
export type PageHeading = Pick<Page, 'id' | 'title' | 'createdAt' | 'updatedAt'>;

/** A page with its path (titles from the root down, joined by ` / `). */
export type PlacedPage = { page: PageHeading; path: string };

/** What a page's presentation shows of the page itself: its row now, or its version at a moment (history.ts). */
export type PageShown = Pick<Page, 'id' | 'title' | 'createdAt' | 'updatedAt' | 'content' | 'versionSequence'>;

export type PageAncestry = readonly { id: number; title: string }[];

/** A page with everything its presentation embeds, loaded by pages.loader.ts (or history.ts, as it was). */
export type PageView = {
  page: PageShown;
  path: string;
  /** Its ancestors from the root down to its parent (ids and titles): what `path` names, never split from it. */
  ancestors: PageAncestry;
  /** The note, already presented (every page of a list shares it), and which of its pages is the cover. */
  note: NoteBody;
  coverPageId: number | null;
  parent: PlacedPage | undefined;
  children: PlacedPage[];
};

/**
 * A page's parent or child as the page embeds it: what names and places it, never its content nor its note (the
 * page's own), so a page answers with its own text only, whatever its children hold and however many they are.
 */
export function presentPageRelative({ page, path }: PlacedPage, note: NoteBody, coverPageId: number | null, urls: Urls): PageRelativeBody {
  return {
    id: page.id,
    title: page.title,
    created_at: page.createdAt.toISOString(),
    updated_at: page.updatedAt.toISOString(),
    is_cover: page.id === coverPageId,
    html_url: urls.page(note.team.name, note.name, page.id),
    path,
    model: 'page',
  };
}

/**
 * A page as another object embeds it (the page of a comment, a notification, a log entry, a version): its heading
 * and its note, never its content, so an answer does not grow with the text of the pages it only refers to (100
 * comments on a 1 MiB page are not 100 MiB).
 */
export function presentPageReference(view: PageView, urls: Urls): PageSummaryBody {
  const { model, ...heading } = presentPageRelative(view, view.note, view.coverPageId, urls);
  return { ...heading, ancestors: presentAncestors(view, urls), note: view.note, model };
}

function presentAncestors(view: PageView, urls: Urls): PageAncestorBody[] {
  return view.ancestors.map(({ id, title }) => ({ id, title, html_url: urls.page(view.note.team.name, view.note.name, id) }));
}

export function presentPage(view: PageView, urls: Urls): PageBody {
  const relative = (placed: PlacedPage) => presentPageRelative(placed, view.note, view.coverPageId, urls);
  const { model, ...heading } = relative(view);
  return {
    ...heading,
    ancestors: presentAncestors(view, urls),
    note: view.note,
    content: view.page.content,
    children: view.children.map(relative),
    ...(view.parent ? { parent: relative(view.parent) } : {}),
    version: view.page.versionSequence,
    model,
  };
}

/** The ETag of a page: changes with every change to it. */
export function pageEtag(page: Pick<Page, 'id' | 'lockVersion'>): string {
  return `"page-${page.id}-${page.lockVersion}"`;
}
