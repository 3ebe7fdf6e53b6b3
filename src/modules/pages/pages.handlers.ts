import type {
  CreatePageData, CreatePageResponse, DeletePageData, GetPageData, GetPageResponse, ListPagesData, ListPagesResponse,
  UpdatePageData, UpdatePageResponse,
} from '../../../generated/client/types.gen.ts';
import { notFound } from '../../http/errors.ts';
import { noContent, operation, type HandlerContext } from '../../http/handler.ts';
import { findReadableNote } from '../notes/notes.access.ts';
import { Page } from './page.entity.ts';
import { pageEtag, presentPage } from './page.presenter.ts';
import { findReadablePage } from './pages.access.ts';
import { loadPageView, loadPageViews } from './pages.loader.ts';
import { checkContentSize, createPage, deletePage, requireEditor, updatePage } from './pages.service.ts';
import { pageIdsInOrder, type TreeOrder } from './tree.ts';

export const PAGES_PER_LIST_PAGE = 20;

const orders: Record<string, TreeOrder> = {
  position: { column: 'position', descending: false },
  '-position': { column: 'position', descending: true },
  title: { column: 'title', descending: false },
  '-title': { column: 'title', descending: true },
  created_at: { column: 'created_at', descending: false },
  '-created_at': { column: 'created_at', descending: true },
  updated_at: { column: 'updated_at', descending: false },
  '-updated_at': { column: 'updated_at', descending: true },
};

/** Presents one page freshly read (after a write), with its ETag header. */
async function answerPage(context: HandlerContext, teamName: string, noteRef: string, pageId: number) {
  const em = context.em.fork();
  const { note, page } = await findReadablePage(em, context.user.id, teamName, noteRef, pageId);
  context.response.setHeader('ETag', pageEtag(page));
  return presentPage(await loadPageView(em, context.user.id, context.urls, note, page), context.urls);
}

const update = operation<UpdatePageData, UpdatePageResponse>(async ({ path, body }, context) => {
  const { page, role } = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
  requireEditor(role);
  const changes = body.page;
  checkContentSize(changes.content, context.config.limits);
  await updatePage(context.em, context.user, page.id, changes, context.request.get('if-match'), context.config.limits);
  return answerPage(context, path.team, path.note, page.id);
});

export const pageOperations = {
  /** 20 pages per page of results; `parent` all (default), root or a page id; `order` a column, `-` reverses. */
  listPages: operation<ListPagesData, ListPagesResponse>(async ({ path, query }, context) => {
    const { em } = context;
    const { note } = await findReadableNote(em, context.user.id, path.team, path.note);
    const parentParam = query.parent ?? 'all';
    let parent: 'all' | 'root' | number = parentParam === 'all' || parentParam === 'root' ? parentParam : Number(parentParam);
    if (typeof parent === 'number') {
      if (!Number.isSafeInteger(parent) || (await em.count(Page, { id: parent, note: note.id })) === 0) throw notFound('parent page');
    }
    const pageNumber = query.page ?? 1;
    const ids = await pageIdsInOrder(em, note.id, parent, orders[query.order ?? 'position']!, PAGES_PER_LIST_PAGE + 1, (pageNumber - 1) * PAGES_PER_LIST_PAGE);
    const shown = ids.slice(0, PAGES_PER_LIST_PAGE);
    const pages = shown.length === 0 ? [] : await em.find(Page, { id: { $in: shown } });
    const byId = new Map(pages.map((page) => [page.id, page]));
    const views = await loadPageViews(em, context.user.id, context.urls, note, shown.map((id) => byId.get(id)!));
    return { pages: views.map((view) => presentPage(view, context.urls)), last_page: ids.length <= PAGES_PER_LIST_PAGE };
  }),

  getPage: operation<GetPageData, GetPageResponse>(async ({ path }, context) => {
    const { note, page } = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
    context.response.setHeader('ETag', pageEtag(page));
    return presentPage(await loadPageView(context.em, context.user.id, context.urls, note, page), context.urls);
  }),

  createPage: operation<CreatePageData, CreatePageResponse>(async ({ path, body }, context) => {
    const { note, role } = await findReadableNote(context.em, context.user.id, path.team, path.note);
    requireEditor(role);
    checkContentSize(body.page.content, context.config.limits);
    const page = await createPage(context.em, context.user, note, body.page, context.config.limits);
    return answerPage(context, path.team, path.note, page.id);
  }),

  updatePage: update,
  updatePageViaPatch: update,

  /** Deletes the page with its whole subtree. */
  deletePage: operation<DeletePageData, never>(async ({ path }, context) => {
    const { page, role } = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
    requireEditor(role);
    await deletePage(context.em, page);
    return noContent;
  }),
};
