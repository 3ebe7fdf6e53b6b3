import type { Page as PageBody, PageUpdateInput } from '../../../generated/client/types.gen.ts';
import { actorOf } from '../access/caller.ts';
import { notFound, unprocessable } from '../errors.ts';
import type { Actor } from '../events/domain-events.ts';
import { proposePageWrite, type ProposalResult } from '../requests/proposals.ts';
import { defineOperation, noContent, readerOf, type HandlerContext } from '../../http/handler.ts';
import { answerWith, type Answer } from '../../http/answer.ts';
import { WAIT_FROM_BYTES } from '../../http/answer-gate.ts';
import { pageCaching } from '../../cache/caching.ts';
import type { NoteScope, PageScope } from '../access/scope.ts';
import { momentOf, orderedThen, pageThenEtag, treeThen, viewsThen } from './history.ts';
import type { Note } from '../notes/note.entity.ts';
import { Page } from './page.entity.ts';
import { pageEtag, presentPage } from './page.presenter.ts';
import { loadPageView, loadPageViews } from './pages.loader.ts';
import { checkContentSize, updatePage, type OnConflict } from './pages.service.ts';
import { checkIfMatch } from './versions.writer.ts';
import { pageIdsInTreeOrder } from './tree.ts';
import { pageIdsInOrder, pageTextSizes, type TreeOrder } from './pages.repository.ts';
import { budgetedPage } from '../../http/pagination.ts';
import { createPage, deletePage } from './tree.service.ts';

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

/** Presents a page from what is loaded (after a write: the written page, no read-back of it), with its ETag. */
export async function answerPage(context: HandlerContext, note: Note, page: Page): Promise<Answer<PageBody>> {
  return answerWith(presentPage(await loadPageView(readerOf(context), note, page), context.urls), { etag: pageEtag(page) });
}

/**
 * A write of a large page answers the page with its content, and holds a few copies of it while it is written and
 * answered; a read of one holds a few while it is answered: like the answers of lists of long texts, they wait for
 * their share of the text being built at once (answer-gate.ts), so many readers or writers of large pages at once
 * cost the memory of a few.
 */
async function admitText(context: HandlerContext, content: string | undefined): Promise<void> {
  // a text shorter than a third of the gate's threshold is below it in UTF-8 too: not measured
  if (content !== undefined && content.length * 3 >= WAIT_FROM_BYTES) await context.admit(Buffer.byteLength(content, 'utf8'));
}

/** The caller's app, when it only proposes changes (`writes: proposals`): its page writes go to proposals.ts. */
function proposingApp(context: HandlerContext): (Actor & { clientId: number }) | undefined {
  const { caller } = context;
  return caller.clientWrites === 'proposals' && caller.clientId !== null ? { ...actorOf(caller), clientId: caller.clientId } : undefined;
}

/** The fork's page that holds a proposed change, with where it went (`proposal`). */
async function answerProposal(context: HandlerContext, written: ProposalResult): Promise<Answer<PageBody>> {
  const answer = await answerPage(context, written.fork, written.page);
  return answerWith({ ...answer.body, proposal: written.proposal }, { etag: answer.etag! });
}

/** updatePage and updatePageViaPatch; `on_conflict` from the body, else the query, else `merge` (with a base). */
async function update(context: HandlerContext, scope: PageScope, body: PageUpdateInput, query: { on_conflict?: OnConflict }, ifMatch: string | undefined) {
  const { base_version: baseVersion, ...changes } = body.page;
  checkContentSize(changes.content, context.config.limits);
  await admitText(context, changes.content);
  const app = proposingApp(context);
  if (app) {
    // the original is not written: its ETag and base only have to name what it has (the request shows the rest)
    checkIfMatch(scope.page, ifMatch);
    const current = scope.page.versionSequence;
    if (baseVersion !== undefined && baseVersion !== current && (baseVersion < 1 || baseVersion > current)) {
      throw unprocessable('invalid_base_version', `page ${scope.page.id} has no version ${baseVersion}`, [{ pointer: '/page/base_version', detail: 'not a version of this page' }]);
    }
    return answerProposal(context, await proposePageWrite(context.em, app, scope, { kind: 'update', page: scope.page, changes }, context.config.limits, context.urls));
  }
  const base = baseVersion === undefined ? undefined : { version: baseVersion, onConflict: body.on_conflict ?? query.on_conflict ?? 'merge' };
  const written = await updatePage(context.em, actorOf(scope.caller), scope.note, scope.page, changes, ifMatch, context.config.limits, base ? { base } : {});
  const answer = await answerPage(context, scope.note, written.page);
  return written.merge ? answerWith({ ...answer.body, merge: written.merge }, { etag: answer.etag! }) : answer;
}

/** listPages with `at`: the same orders and pages of results over the tree then (history.ts). */
async function listPagesThen(context: HandlerContext, note: Note, at: Date, parent: 'all' | 'root' | number, order: TreeOrder, page: number | undefined) {
  const tree = await treeThen(readerOf(context), note, at);
  if (typeof parent === 'number' && !tree.pages.has(parent)) throw notFound('parent page');
  const ordered = orderedThen(tree, parent, order);
  const results = budgetedPage({ page, per_page: PAGES_PER_LIST_PAGE }, ordered.map((entry) => entry.bytes), context.config.limits.listTextBytes);
  await context.admit(results.bytes);
  const views = await viewsThen(readerOf(context), note, tree, ordered.slice(results.offset, results.offset + results.limit));
  const stamp = at.toISOString();
  return { pages: views.map((view) => ({ ...presentPage(view, context.urls), at: stamp })), last_page: results.page >= results.last };
}

/** getPage with `at`: the page as it was then, deleted since or not; 404 when it was not in the note then. */
async function getPageThen(context: HandlerContext, scope: NoteScope, pageId: number, atParam: string): Promise<Answer<PageBody>> {
  const at = momentOf(scope.note, atParam, Date.now());
  const tree = await treeThen(readerOf(context), scope.note, at);
  const page = tree.pages.get(pageId);
  if (!page) throw notFound('page');
  const [view] = await viewsThen(readerOf(context), scope.note, tree, [page]);
  await admitText(context, view!.page.content);
  return answerWith({ ...presentPage(view!, context.urls), at: at.toISOString() }, { etag: pageThenEtag(page) });
}

export const pageOperations = {
  /** 20 pages per page of results; `parent` all (default), root or a page id; `order` a column, `-` reverses. */
  listPages: defineOperation('listPages', { scope: 'note', action: 'note.read' }, async ({ query }, { note, caller }, context) => {
    const { em } = context;
    const parentParam = query.parent ?? 'all';
    const parent: 'all' | 'root' | number = parentParam === 'all' || parentParam === 'root' ? parentParam : Number(parentParam);
    if (query.at !== undefined) return listPagesThen(context, note, momentOf(note, query.at, Date.now()), parent, orders[query.order ?? 'position']!, query.page);
    if (typeof parent === 'number') {
      if (!Number.isSafeInteger(parent) || (await em.count(Page, { id: parent, note: note.id })) === 0) throw notFound('parent page');
    }
    const order = orders[query.order ?? 'position']!;
    let ordered: { id: number; bytes: number }[];
    if (parent === 'all' && order.column === 'position') {
      const [ids, sizes] = await Promise.all([pageIdsInTreeOrder(readerOf(context), note.id, order.descending), pageTextSizes(em, note.id)]);
      ordered = ids.map((id) => ({ id, bytes: sizes.get(id) ?? 0 }));
    } else {
      ordered = await pageIdsInOrder(em, note.id, parent, order);
    }
    // 20 pages per page of results, fewer where their content reaches LIMIT_LIST_TEXT_BYTES (pagination.ts)
    const results = budgetedPage({ page: query.page, per_page: PAGES_PER_LIST_PAGE }, ordered.map((entry) => entry.bytes), context.config.limits.listTextBytes);
    await context.admit(results.bytes);
    const shown = ordered.slice(results.offset, results.offset + results.limit).map((entry) => entry.id);
    const pages = shown.length === 0 ? [] : await em.find(Page, { id: { $in: shown } });
    const byId = new Map(pages.map((page) => [page.id, page]));
    // a page deleted since its id was read is left out
    const views = await loadPageViews(readerOf(context), note, shown.flatMap((id) => byId.get(id) ?? []));
    return { pages: views.map((view) => presentPage(view, context.urls)), last_page: results.page >= results.last };
  }),

  /** Kept in memory while nothing it shows has changed (src/cache/caching.ts, `pageCaching`). */
  getPage: defineOperation('getPage', { scope: 'page', action: 'note.read', cache: pageCaching }, async ({ query, path }, scope, context) => {
    // a read of the past names a page that may be gone now: its scope is the note's (invoke.ts, readsThePast)
    if (query.at !== undefined) return getPageThen(context, scope as unknown as NoteScope, path.page, query.at);
    await admitText(context, scope.page.content);
    return answerWith(presentPage(await loadPageView(readerOf(context), scope.note, scope.page), context.urls), { etag: pageEtag(scope.page) });
  }),

  createPage: defineOperation('createPage', { scope: 'note', action: 'note.edit' }, async ({ body }, scope, context) => {
    checkContentSize(body.page.content, context.config.limits);
    await admitText(context, body.page.content);
    const app = proposingApp(context);
    if (app) return answerProposal(context, await proposePageWrite(context.em, app, scope, { kind: 'create', page: body.page }, context.config.limits, context.urls));
    const page = await createPage(context.em, actorOf(scope.caller), scope.note, body.page, context.config.limits);
    return answerPage(context, scope.note, page);
  }),

  updatePage: defineOperation('updatePage', { scope: 'page', action: 'note.edit' }, async ({ body, query, headers }, scope, context) =>
    update(context, scope, body, query, headers['If-Match'])),
  updatePageViaPatch: defineOperation('updatePageViaPatch', { scope: 'page', action: 'note.edit' }, async ({ body, query, headers }, scope, context) =>
    update(context, scope, body, query, headers['If-Match'])),

  /** Deletes the page with its whole subtree. */
  deletePage: defineOperation('deletePage', { scope: 'page', action: 'note.edit' }, async (_input, scope, context) => {
    await deletePage(context.em, actorOf(scope.caller), scope.note, scope.page);
    return noContent;
  }),
};
