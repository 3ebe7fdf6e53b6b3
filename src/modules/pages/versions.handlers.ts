// The history of a page: its versions, diffs between them, restoring one.
import { actorOf } from '../access/caller.ts';
import { DomainError, notFound } from '../errors.ts';
import { defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { shared } from '../../http/json.ts';
import { budgetedPage, listPlace } from '../../http/pagination.ts';
import type { PageScope } from '../access/scope.ts';
import { renderDiff } from './diff.ts';
import { PageVersion } from './page.entity.ts';
import { presentPageReference } from './page.presenter.ts';
import { answerPage } from './pages.handlers.ts';
import { loadPageView } from './pages.loader.ts';
import { versionTextSizes } from './pages.repository.ts';
import { restoreVersion } from './pages.service.ts';
import { presentVersion, type VersionRelations } from './version.presenter.ts';
import { User } from '../users/user.entity.ts';
import { withDiffs } from './version-diffs.ts';
import { requestIndexes } from '../requests/requests.repository.ts';

async function presentedPage(context: HandlerContext, scope: PageScope) {
  return shared(presentPageReference(await loadPageView(readerOf(context), scope.note, scope.page), context.urls));
}

/** The index of the request each merged version came from (one statement, only when one did). */
async function mergedRequests(context: HandlerContext, versions: readonly PageVersion[]): Promise<Map<number, number>> {
  return requestIndexes(context.em, [...new Set(versions.flatMap((version) => (version.requestId == null ? [] : [version.requestId])))]);
}

/** The users the versions name as co-authors, by id (one statement for all, only when one names any). */
async function coAuthors(context: HandlerContext, versions: readonly PageVersion[]): Promise<Map<number, User>> {
  const ids = [...new Set(versions.flatMap((version) => version.coAuthorIds))];
  if (ids.length === 0) return new Map();
  const users = await context.em.find(User, { id: { $in: ids } });
  return new Map(users.map((user) => [user.id, user]));
}

/** What presenting the versions reads beside them (version.presenter.ts), in at most two statements for any number. */
async function relationsOf(context: HandlerContext, versions: readonly PageVersion[]): Promise<VersionRelations> {
  const [requests, users] = await Promise.all([mergedRequests(context, versions), coAuthors(context, versions)]);
  return { requests, coAuthors: users };
}

async function versionByIndex(context: HandlerContext, pageId: number, index: number): Promise<PageVersion> {
  const version = await context.em.findOne(PageVersion, { page: pageId, index }, { populate: ['user'] });
  if (!version) throw notFound('page version');
  return version;
}

/** A version of this page by id, for `a`/`b`; another page's version is answered like none. */
async function versionById(context: HandlerContext, pageId: number, id: number, parameter: string): Promise<PageVersion> {
  const version = await context.em.findOne(PageVersion, { id, page: pageId });
  if (!version) throw new DomainError('not_found', 'not_found', `${parameter} is not a version of this page`, { errors: [{ parameter, detail: 'not a version of this page' }] });
  return version;
}

export const versionOperations = {
  /**
   * Newest version first; a page of results ends early where the versions' content and diffs pass the answer's
   * budget (LIMIT_LIST_TEXT_BYTES), so a history of many large versions is never one huge answer.
   */
  listPageVersions: defineOperation('listPageVersions', { scope: 'page', action: 'note.read' }, async ({ query }, scope, context) => {
    const sizes = await versionTextSizes(context.em, scope.page.id);
    const page = budgetedPage(query, sizes, context.config.limits.listTextBytes);
    await context.admit(page.bytes);
    const list = listPlace(page, sizes.length);
    if (page.limit === 0) return answerWith([], { list });
    const versions = await context.em.find(
      PageVersion,
      { page: scope.page.id },
      { populate: ['user'], orderBy: { index: 'desc' }, limit: page.limit, offset: page.offset },
    );
    if (versions.length === 0) return answerWith([], { list });
    await withDiffs(context.em, scope.page.id, versions);
    const [pageBody, relations] = await Promise.all([presentedPage(context, scope), relationsOf(context, versions)]);
    return answerWith(versions.map((version) => presentVersion(version, pageBody, context.urls, relations)), { list });
  }),

  getPageVersion: defineOperation('getPageVersion', { scope: 'page', action: 'note.read' }, async ({ path }, scope, context) => {
    const version = await versionByIndex(context, scope.page.id, path.index);
    await withDiffs(context.em, scope.page.id, [version]);
    const [pageBody, relations] = await Promise.all([presentedPage(context, scope), relationsOf(context, [version])]);
    return presentVersion(version, pageBody, context.urls, relations);
  }),

  /** From `a` to `b` (ids): `b` defaults to the newest version, `a` to the one before `b` (empty before the first). */
  diffPageVersions: defineOperation('diffPageVersions', { scope: 'page', action: 'note.read' }, async ({ query }, scope, context) => {
    const pageId = scope.page.id;
    const b = query.b !== undefined
      ? await versionById(context, pageId, query.b, 'b')
      : await context.em.findOneOrFail(PageVersion, { page: pageId }, { orderBy: { index: 'desc' } });
    const a = query.a !== undefined
      ? await versionById(context, pageId, query.a, 'a')
      : await context.em.findOne(PageVersion, { page: pageId, index: b.index - 1 });
    return { html: renderDiff(a?.content ?? '', b.content).html };
  }),

  /** Makes the version's title and content current, as a new version. */
  restorePageVersion: defineOperation('restorePageVersion', { scope: 'page', action: 'note.edit' }, async ({ path }, scope, context) => {
    const version = await versionByIndex(context, scope.page.id, path.index);
    const page = await restoreVersion(context.em, actorOf(scope.caller), scope.note, scope.page, version, context.config.limits);
    return answerPage(context, scope.note, page);
  }),
};
