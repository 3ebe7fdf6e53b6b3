import type { PageSummary as PageBody, PageVersion as PageVersionBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import { presentUser, type UserFields } from '../users/user.presenter.ts';
import { presentVia } from '../oauth/oauth.presenter.ts';
import type { PageVersion } from './page.entity.ts';

/** What presenting versions reads beside them: the request each merged version came from, and the co-authors. */
export type VersionRelations = {
  /** The index of the request each merged version came from, by the request's id. */
  requests: ReadonlyMap<number, number>;
  /** The users the versions name as co-authors, by id (a user not here is left out). */
  coAuthors: ReadonlyMap<number, UserFields>;
};

const NO_RELATIONS: VersionRelations = { requests: new Map(), coAuthors: new Map() };

/**
 * A version (its diff made: version-diffs.ts), with the page as it is now (presented once for all versions of a
 * page) and what `relations` holds of it.
 */
export function presentVersion(version: PageVersion, page: PageBody, urls: Urls, relations: VersionRelations = NO_RELATIONS): PageVersionBody {
  const requestIndex = version.requestId == null ? undefined : relations.requests.get(version.requestId);
  return {
    id: version.id,
    created_at: version.createdAt.toISOString(),
    note_id: page.note.id,
    index: version.index,
    html_url: urls.pageVersion(page.note.team.name, page.note.name, page.id, version.index),
    page,
    title: version.title,
    content: version.content,
    diff: version.diff ?? '',
    label: `Version #${version.index}`,
    user: presentUser(version.user, urls),
    co_authors: version.coAuthorIds.flatMap((id) => {
      const user = relations.coAuthors.get(id);
      return user ? [presentUser(user, urls)] : [];
    }),
    merged_from_base: version.mergedFromBase ?? null,
    merged_request: requestIndex === undefined ? null : { index: requestIndex, html_url: urls.request(page.note.team.name, page.note.name, requestIndex) },
    via: presentVia(version),
    imported_author: version.importedAuthor ?? null,
    model: 'page_version',
  };
}
