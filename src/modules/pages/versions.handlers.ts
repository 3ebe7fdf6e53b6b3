// The history of a page (its versions, diffs between them, restoring one) and the contributors of a note.
import type {
  DiffPageVersionsData, DiffPageVersionsResponse, GetPageVersionData, GetPageVersionResponse, ListContributorsData,
  ListContributorsResponse, ListPageVersionsData, ListPageVersionsResponse, RestorePageVersionData, RestorePageVersionResponse,
} from '../../../generated/client/types.gen.ts';
import { HttpError, notFound } from '../../http/errors.ts';
import { operation, type HandlerContext } from '../../http/handler.ts';
import { pagination, sendPaginationHeaders } from '../../http/pagination.ts';
import { findReadableNote } from '../notes/notes.access.ts';
import { User } from '../users/user.entity.ts';
import { presentUser } from '../users/user.presenter.ts';
import { renderDiff } from './diff.ts';
import { PageVersion } from './page.entity.ts';
import { pageEtag, presentPage } from './page.presenter.ts';
import { findReadablePage, type PageAccess } from './pages.access.ts';
import { loadPageView } from './pages.loader.ts';
import { requireEditor, restoreVersion } from './pages.service.ts';
import { presentVersion } from './version.presenter.ts';

async function presentedPage(context: HandlerContext, access: PageAccess) {
  return presentPage(await loadPageView(context.em, context.user.id, context.urls, access.note, access.page), context.urls);
}

async function versionByIndex(context: HandlerContext, pageId: number, index: number): Promise<PageVersion> {
  const version = await context.em.findOne(PageVersion, { page: pageId, index }, { populate: ['user'] });
  if (!version) throw notFound('page version');
  return version;
}

/** A version of this page by id, for `a`/`b`; another page's version is answered like none. */
async function versionById(context: HandlerContext, pageId: number, id: number, parameter: string): Promise<PageVersion> {
  const version = await context.em.findOne(PageVersion, { id, page: pageId });
  if (!version) throw new HttpError(404, 'not_found', `${parameter} is not a version of this page`, { errors: [{ parameter, detail: 'not a version of this page' }] });
  return version;
}

export const versionOperations = {
  /** Newest version first. */
  listPageVersions: operation<ListPageVersionsData, ListPageVersionsResponse>(async ({ path, query }, context) => {
    const access = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
    const page = pagination(query);
    const [versions, total] = await context.em.findAndCount(
      PageVersion,
      { page: access.page.id },
      { populate: ['user'], orderBy: { index: 'desc' }, limit: page.perPage, offset: page.offset },
    );
    sendPaginationHeaders(context, page, total);
    const pageBody = await presentedPage(context, access);
    return versions.map((version) => presentVersion(version, pageBody, context.urls));
  }),

  getPageVersion: operation<GetPageVersionData, GetPageVersionResponse>(async ({ path }, context) => {
    const access = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
    const version = await versionByIndex(context, access.page.id, path.index);
    return presentVersion(version, await presentedPage(context, access), context.urls);
  }),

  /** From `a` to `b` (ids): `b` defaults to the newest version, `a` to the one before `b` (empty before the first). */
  diffPageVersions: operation<DiffPageVersionsData, DiffPageVersionsResponse>(async ({ path, query }, context) => {
    const access = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
    const pageId = access.page.id;
    const b = query.b !== undefined
      ? await versionById(context, pageId, query.b, 'b')
      : await context.em.findOneOrFail(PageVersion, { page: pageId }, { orderBy: { index: 'desc' } });
    const a = query.a !== undefined
      ? await versionById(context, pageId, query.a, 'a')
      : await context.em.findOne(PageVersion, { page: pageId, index: b.index - 1 });
    return { html: renderDiff(a?.content ?? '', b.content).html };
  }),

  /** Makes the version's title and content current, as a new version. */
  restorePageVersion: operation<RestorePageVersionData, RestorePageVersionResponse>(async ({ path }, context) => {
    const access = await findReadablePage(context.em, context.user.id, path.team, path.note, path.page);
    requireEditor(access.role);
    const version = await versionByIndex(context, access.page.id, path.index);
    await restoreVersion(context.em, context.user, access.page.id, version, context.config.limits);
    const em = context.em.fork();
    const fresh = await findReadablePage(em, context.user.id, path.team, path.note, path.page);
    context.response.setHeader('ETag', pageEtag(fresh.page));
    return presentPage(await loadPageView(em, context.user.id, context.urls, fresh.note, fresh.page), context.urls);
  }),

  /** The note's creator, then everyone who wrote a version of its pages, in the order of their first contribution. */
  listContributors: operation<ListContributorsData, ListContributorsResponse>(async ({ path, query }, context) => {
    const { note } = await findReadableNote(context.em, context.user.id, path.team, path.note);
    const page = pagination(query);
    const rows = await context.em.execute<{ user_id: number; total: string }[]>(
      `select user_id, count(*) over () as total from (
         select user_id, min(sort_key) as first from (
           select user_id, 0 as sort_key from notes where id = ?
           union all
           select user_id, id as sort_key from page_versions where note_id = ?
         ) contributions group by user_id
       ) firsts order by first, user_id limit ? offset ?`,
      [note.id, note.id, page.perPage, page.offset],
    );
    const total = rows.length > 0 ? Number(rows[0]!.total) : (await context.em.execute<{ n: string }[]>(
      'select count(distinct user_id) as n from (select user_id from notes where id = ? union all select user_id from page_versions where note_id = ?) c',
      [note.id, note.id],
    ))[0]!.n;
    sendPaginationHeaders(context, page, Number(total));
    const users = await context.em.find(User, { id: { $in: rows.map((row) => row.user_id) } });
    const byId = new Map(users.map((user) => [user.id, user]));
    return rows.map((row) => presentUser(byId.get(row.user_id)!, context.urls));
  }),
};
