// What a reviewer of a request saw, exactly (issue 43): its state and, for every page it carries, the versions of its
// three sides and its place in both trees, as ids, not as the text they render to. The review form of the browser
// views (src/modules/web/views/forms.ts) carries `token` and refuses a decision when the request's token is another
// one by the time the form comes back; `forkHeads` goes with a merge as `expected_head_versions`, so the fork moving
// on between that check and the merge's transaction is refused by the merge itself (merge.service.ts checkHeads).
// Why ids: a page's text alone misses a change that renders the same (a new title, a version with the same diff),
// and a time at the database's one-second precision misses two changes within a second.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { headVersions, requestPageRows } from './requests.repository.ts';

export type RequestSeen = {
  /** A digest of everything below; the same while nothing the request shows or merges has changed. */
  token: string;
  /** The latest version of each fork page the request carries, ascending. */
  forkHeads: number[];
};

/** `state`: the request's status and is_wip as presented (a reopened or drafted request is another request to decide). */
export async function requestSeen(em: EntityManager, requestId: number, state: { status: string; isWip: boolean }): Promise<RequestSeen> {
  const rows = await requestPageRows(em, [requestId]);
  const forkPageIds = rows.flatMap((row) => (row.from_page_id === null ? [] : [row.from_page_id]));
  const heads = forkPageIds.length === 0 ? [] : await headVersions(em, forkPageIds);
  const headOf = new Map(heads.map((head) => [Number(head.page_id), Number(head.id)]));
  const pages = rows.map((row) => [
    row.id, row.type, row.merged,
    // F, the proposed version, and the fork page's latest; B; U, the original's page and its lock version (every write
    // of a page moves it: content, title, place)
    row.page_version_id, row.from_page_id, row.from_page_id === null ? null : (headOf.get(Number(row.from_page_id)) ?? null),
    row.base_version_id,
    row.to_page_id, row.u_lock,
    // the tree: the original page's parent, the fork page's base parent, its parent and that parent's origin
    row.u_parent, row.b_parent, row.f_parent, row.f_parent_origin,
    row.u_kept_children === null ? null : Number(row.u_kept_children),
  ].map((value) => (typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value)));
  const token = createHash('sha256').update(JSON.stringify([state.status, state.isWip, pages])).digest('base64url').slice(0, 32);
  return { token, forkHeads: [...headOf.values()].sort((a, b) => a - b) };
}
