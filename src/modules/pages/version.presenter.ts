import type { PageSummary as PageBody, PageVersion as PageVersionBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import { presentUser } from '../users/user.presenter.ts';
import { presentVia } from '../oauth/oauth.presenter.ts';
import type { PageVersion } from './page.entity.ts';

/**
 * A version (its diff made: version-diffs.ts), with the page as it is now (presented once for all versions of a
 * page); `requests` holds the index of the request each merged version came from.
 */
export function presentVersion(version: PageVersion, page: PageBody, urls: Urls, requests: ReadonlyMap<number, number> = new Map()): PageVersionBody {
  const requestIndex = version.requestId == null ? undefined : requests.get(version.requestId);
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
    merged_from_base: version.mergedFromBase ?? null,
    merged_request: requestIndex === undefined ? null : { index: requestIndex, html_url: urls.request(page.note.team.name, page.note.name, requestIndex) },
    via: presentVia(version),
    imported_author: version.importedAuthor ?? null,
    model: 'page_version',
  };
}
