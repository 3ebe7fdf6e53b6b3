// The requests module's SQL: forking (forks.service.ts, forks.handlers.ts), pulling (pull.service.ts,
// pull-deletions.ts), proposing (requests.service.ts), where a request stands (merge-state.ts) and merging
// (merge.service.ts). Page trees are copied and re-based set-based, so these statements take and return whole sets
// (ids as int[] literals) where the entity API would write a row at a time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { originalChangedSql } from '../notes/notes.repository.ts';

const intArray = (ids: readonly (number | string)[]): string => `{${ids.join(',')}}`;

// --- forking (forks.service.ts, forks.handlers.ts) ---

/**
 * Copies every page of `fromNoteId` into the fork in one statement, parents left out (`linkForkParents` maps them):
 * each copy remembers its upstream page and the version it was copied at.
 */
export async function copyPagesIntoFork(tx: EntityManager, forkId: number, fromNoteId: number, now: Date): Promise<void> {
  await tx.execute(
    `insert into pages (note_id, parent_id, position, title, content, lock_version, version_sequence, origin_page_id, base_version_id, base_parent_id, created_at, updated_at)
     select ?, null, p.position, p.title, p.content, 1, 0, p.id, coalesce(latest.id, p.base_version_id), p.parent_id, ?, ?
       from pages p left join page_versions latest on latest.page_id = p.id and latest.index = p.version_sequence
      where p.note_id = ? order by p.id`,
    [forkId, now, now, fromNoteId],
  );
}

/** Points each fork page at the fork's copy of its upstream page's parent: the tree copied in one statement. */
export async function linkForkParents(tx: EntityManager, forkId: number): Promise<void> {
  await tx.execute(
    `update pages child set parent_id = parent_copy.id
       from pages origin, pages parent_copy
      where child.note_id = ? and origin.id = child.origin_page_id and origin.parent_id is not null
        and parent_copy.note_id = ? and parent_copy.origin_page_id = origin.parent_id`,
    [forkId, forkId],
  );
}

/** The fork's copy of an upstream page (the cover page moves to it), or null. */
export async function forkCopyOf(tx: EntityManager, forkId: number, originPageId: number): Promise<number | null> {
  const rows = await tx.execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [forkId, originPageId]);
  return rows[0]?.id ?? null;
}

/**
 * One page of the caller's forks that a pull would change (their original readable by the caller), the original with
 * the most recently changed page first, each row with the list's total: the permissions and the test are one join.
 */
export async function pullableForks(em: EntityManager, userId: number, limit: number, offset: number): Promise<{ id: number; total: string }[]> {
  return em.execute<{ id: number; total: string }[]>(
    `select fork.id, count(*) over () as total
         from notes fork join notes original on original.id = fork.forked_from_id
        where fork.team_id in (select team_id from memberships where user_id = ?)
          and (not original.is_private or original.team_id in (select team_id from memberships where user_id = ?))
          and ${originalChangedSql('fork', 'original.id')}
        order by (select max(p.updated_at) from pages p where p.note_id = original.id) desc nulls last, fork.id desc
        limit ? offset ?`,
    [userId, userId, limit, offset],
  );
}

// --- pulling (pull.service.ts) ---

/** A fork page with its sides: F the fork's, B its base, U the original's page now (and its latest version). */
export type PullRow = {
  id: number;
  f_title: string;
  f_content: string;
  b_title: string | null;
  b_content: string | null;
  u_title: string;
  u_content: string;
  latest_id: number;
  f_parent: number | null;
  f_parent_origin: number | null;
  b_parent: number | null;
  u_parent: number | null;
};

/** Locks the fork's copied pages in id order: two pulls of one fork (or a pull and an edit) take turns. */
export async function lockForkCopies(tx: EntityManager, forkId: number): Promise<void> {
  await tx.execute('select id from pages where note_id = ? and origin_page_id is not null order by id for update', [forkId]);
}

/** The fork's copies whose original page changed (content or parent) since their base, with the three sides. */
export async function pullRows(tx: EntityManager, forkId: number): Promise<PullRow[]> {
  return tx.execute<PullRow[]>(
    `select fp.id, fp.title as f_title, fp.content as f_content, b.title as b_title, b.content as b_content,
              u.title as u_title, u.content as u_content, latest.id as latest_id,
              fp.parent_id as f_parent, fpp.origin_page_id as f_parent_origin, fp.base_parent_id as b_parent, u.parent_id as u_parent
         from pages fp
         join pages u on u.id = fp.origin_page_id
         join page_versions latest on latest.page_id = u.id and latest.index = u.version_sequence
         left join page_versions b on b.id = fp.base_version_id
         left join pages fpp on fpp.id = fp.parent_id
        where fp.note_id = ? and (fp.base_version_id is distinct from latest.id or fp.base_parent_id is distinct from u.parent_id)
        order by fp.id`,
    [forkId],
  );
}

/** Moves the pulled pages' bases (version and parent) to the original's, in one statement: the next pull starts there. */
export async function moveBasesToOriginal(tx: EntityManager, pages: readonly { id: number; latestId: number; parent: number | null }[]): Promise<void> {
  await tx.execute(
    `update pages p set base_version_id = x.base, base_parent_id = x.parent
           from unnest(?::int[], ?::int[], ?::int[]) as x (id, base, parent) where p.id = x.id`,
    [
      intArray(pages.map((page) => page.id)),
      intArray(pages.map((page) => page.latestId)),
      intArray(pages.map((page) => page.parent ?? 'NULL')),
    ],
  );
}

/** The fork's copies of the original's pages given, to move a fork page under the copy of its new parent. */
export async function forkCopiesOf(tx: EntityManager, forkId: number, originalIds: readonly number[]): Promise<{ id: number; origin_page_id: number }[]> {
  return tx.execute<{ id: number; origin_page_id: number }[]>(
    'select id, origin_page_id from pages where note_id = ? and origin_page_id = any(?::int[])',
    [forkId, intArray(originalIds)],
  );
}

/**
 * Copies in, set-based and parents left out (`linkCopiedParents`), the original's pages the fork lacks: those created
 * since `since` that the fork did not delete on purpose, or the ones given. Returns the new pages' ids.
 */
export async function copyOriginalPagesIn(
  tx: EntityManager,
  forkId: number,
  originalId: number,
  now: Date,
  which: { since: Date } | { ids: readonly number[] },
): Promise<number[]> {
  const [condition, parameters] = 'since' in which
    ? ['u.created_at >= ? and not exists (select 1 from fork_deletions d where d.note_id = ? and d.upstream_page_id = u.id)', [which.since, forkId]]
    : ['u.id = any(?::int[])', [intArray(which.ids)]];
  const added = await tx.execute<{ id: number }[]>(
    `insert into pages (note_id, parent_id, position, title, content, lock_version, version_sequence, origin_page_id, base_version_id, base_parent_id, created_at, updated_at)
     select ?, null, u.position, u.title, u.content, 1, 0, u.id, latest.id, u.parent_id, ?, ?
       from pages u join page_versions latest on latest.page_id = u.id and latest.index = u.version_sequence
      where u.note_id = ? and ${condition}
        and not exists (select 1 from pages fp where fp.note_id = ? and fp.origin_page_id = u.id)
      order by u.id
     returning id`,
    [forkId, now, now, originalId, ...parameters, forkId],
  );
  return added.map((row) => row.id);
}

/** Points the pages just copied in at the fork's copies of their original parents. */
export async function linkCopiedParents(tx: EntityManager, forkId: number, pageIds: readonly number[]): Promise<void> {
  await tx.execute(
    `update pages child set parent_id = parent_copy.id
       from pages origin, pages parent_copy
      where child.id = any(?::int[]) and origin.id = child.origin_page_id and origin.parent_id is not null
        and parent_copy.note_id = ? and parent_copy.origin_page_id = origin.parent_id`,
    [intArray(pageIds), forkId],
  );
}

// --- deletions in a pull (pull-deletions.ts) ---

/** A fork page whose original page is gone, with its sub-pages that stay. */
export type OrphanRow = { id: number; content: string; version_sequence: number; kept_children: number | string };
/** A page the fork deleted that the original changed since: its content now, at the deletion's base, and its latest version. */
export type RevivedRow = { upstream_page_id: number; content: string; b_content: string | null; latest_id: number };

/** The fork's pages whose original page was deleted, each with how many of its sub-pages would be kept. */
export async function orphanedForkPages(tx: EntityManager, forkId: number): Promise<OrphanRow[]> {
  return tx.execute<OrphanRow[]>(
    `select fp.id, fp.content, fp.version_sequence,
            (select count(*) from pages c where c.parent_id = fp.id and not (c.upstream_page_id is not null and c.origin_page_id is null)) as kept_children
       from pages fp where fp.note_id = ? and fp.upstream_page_id is not null and fp.origin_page_id is null order by fp.id`,
    [forkId],
  );
}

/** The pages the fork deleted that the original has changed since (and the fork does not have again). */
export async function revivedDeletions(tx: EntityManager, forkId: number): Promise<RevivedRow[]> {
  return tx.execute<RevivedRow[]>(
    `select d.upstream_page_id, u.content, b.content as b_content, latest.id as latest_id
       from fork_deletions d
       join pages u on u.id = d.upstream_page_id
       join page_versions latest on latest.page_id = u.id and latest.index = u.version_sequence
       left join page_versions b on b.id = d.base_version_id
      where d.note_id = ? and d.base_version_id is distinct from latest.id
        and not exists (select 1 from pages fp where fp.note_id = d.note_id and fp.upstream_page_id = d.upstream_page_id)
      order by d.upstream_page_id`,
    [forkId],
  );
}

/** Makes fork pages the fork's alone: they no longer follow a page the original deleted. */
export async function detachFromUpstream(tx: EntityManager, pageIds: readonly number[]): Promise<void> {
  await tx.execute('update pages set upstream_page_id = null where id = any(?::int[])', [intArray(pageIds)]);
}

/** Moves kept deletions' bases to the original's latest versions, so the next pull does not ask again. */
export async function confirmForkDeletions(tx: EntityManager, forkId: number, confirm: readonly { upstreamPageId: number; latestId: number }[]): Promise<void> {
  await tx.execute(
    `update fork_deletions d set base_version_id = x.latest from unnest(?::int[], ?::int[]) as x (page, latest)
        where d.note_id = ? and d.upstream_page_id = x.page`,
    [intArray(confirm.map((row) => row.upstreamPageId)), intArray(confirm.map((row) => row.latestId)), forkId],
  );
}

/** Forgets the fork's deletions of pages a pull takes back. */
export async function forgetForkDeletions(tx: EntityManager, forkId: number, upstreamPageIds: readonly number[]): Promise<void> {
  await tx.execute('delete from fork_deletions where note_id = ? and upstream_page_id = any(?::int[])', [forkId, intArray(upstreamPageIds)]);
}

// --- proposing (requests.service.ts) ---

/** A version proposed by a request, with its page's place in the fork and the base's content. */
export type ProposedVersionRow = {
  id: number;
  page_id: number;
  note_id: number;
  title: string;
  content: string;
  origin_page_id: number | null;
  upstream_page_id: number | null;
  base_version_id: number | null;
  base_content: string | null;
};

/** The versions given with their pages, in any order (the caller checks each is of the fork). */
export async function proposedVersionRows(em: EntityManager, versionIds: readonly number[]): Promise<ProposedVersionRow[]> {
  return em.execute<ProposedVersionRow[]>(
    `select v.id, v.page_id, p.note_id, v.title, v.content, p.origin_page_id, p.upstream_page_id, p.base_version_id, b.content as base_content
       from page_versions v join pages p on p.id = v.page_id left join page_versions b on b.id = p.base_version_id
      where v.id = any(?::int[])`,
    [intArray(versionIds)],
  );
}

/** Each page's ancestors' titles, from the top, for every page in one recursive statement (at most 64 deep). */
export async function ancestorTitleRows(em: EntityManager, pageIds: readonly number[]): Promise<{ start_id: number; title: string }[]> {
  return em.execute<{ start_id: number; title: string }[]>(
    `with recursive up (start_id, parent_id, title, depth) as (
       select p.id, p.parent_id, p.title, 0 from pages p where p.id = any(?::int[])
       union all
       select up.start_id, p.parent_id, p.title, up.depth + 1 from pages p join up on p.id = up.parent_id where up.depth < 64)
     select start_id, title from up where depth > 0 order by start_id, depth desc`,
    [intArray(pageIds)],
  );
}

/** A deletion proposed by a request: the fork's deletion of an original page, with the base's content. */
export type ProposedDeletionRow = {
  upstream_page_id: number;
  base_version_id: number | null;
  title: string;
  base_content: string | null;
  /** The original's page, while it is there. */
  to_page_id: number | null;
};

/** The fork's deletions of the original's pages given that the fork has not taken back. */
export async function proposedDeletionRows(em: EntityManager, forkId: number, originalId: number, pageIds: readonly number[]): Promise<ProposedDeletionRow[]> {
  return em.execute<ProposedDeletionRow[]>(
    `select d.upstream_page_id, d.base_version_id, d.title, b.content as base_content, u.id as to_page_id
       from fork_deletions d
       left join page_versions b on b.id = d.base_version_id
       left join pages u on u.id = d.upstream_page_id and u.note_id = ?
      where d.note_id = ? and d.upstream_page_id = any(?::int[])
        and not exists (select 1 from pages fp where fp.note_id = d.note_id and fp.upstream_page_id = d.upstream_page_id)`,
    [originalId, forkId, intArray(pageIds)],
  );
}

// --- where a request stands (merge-state.ts) ---

/** A page a request carries, with its sides (merge-state.ts computes its merge from them). */
export type RequestPageRow = {
  id: number;
  request_id: number;
  note_id: number;
  /** The proposed version and the fork's page; null for a `delete` (the fork deleted the page). */
  page_version_id: number | null;
  from_page_id: number | null;
  to_page_id: number | null;
  base_version_id: number | null;
  type: 'create' | 'update' | 'delete';
  path: string;
  diff: string;
  merged: boolean;
  created_at: Date;
  /** Sides, loaded only for requests still open (draft or opened); contents only when `loaded`. */
  active: boolean;
  f_title: string | null;
  f_content?: string | null;
  b_title: string | null;
  b_content?: string | null;
  u_title: string | null;
  u_content?: string | null;
  /** The three contents' size in bytes. */
  bytes: number | string;
  loaded?: boolean;
  u_lock: number | null;
  /** The tree: the original page's parent now, the fork page's base parent, its parent and that parent's origin. */
  u_parent: number | null;
  b_parent: number | null;
  f_parent: number | null;
  f_parent_origin: number | null;
  /** For a `delete` whose original page is there: its sub-pages this request does not delete too. */
  u_kept_children: number | string | null;
};

/** The pages of the requests, in order, with the titles (not the contents) of their sides while the request is open. */
export async function requestPageRows(em: EntityManager, requestIds: readonly number[]): Promise<RequestPageRow[]> {
  return em.execute<RequestPageRow[]>(
    `select rp.id, rp.request_id, rp.note_id, rp.page_version_id, rp.from_page_id, rp.to_page_id, rp.base_version_id, rp.type,
            rp.path, rp.diff, rp.merged, rp.created_at, r.status in ('draft', 'opened') as active,
            case when r.status in ('draft', 'opened') then f.title end as f_title,
            case when r.status in ('draft', 'opened') then b.title end as b_title,
            case when r.status in ('draft', 'opened') then u.title end as u_title,
            case when r.status in ('draft', 'opened')
                 then coalesce(octet_length(f.content), 0) + coalesce(octet_length(b.content), 0) + coalesce(octet_length(u.content), 0) else 0 end as bytes,
            u.lock_version as u_lock, u.parent_id as u_parent,
            fp.base_parent_id as b_parent, fp.parent_id as f_parent, fpp.origin_page_id as f_parent_origin,
            case when rp.type = 'delete' and u.id is not null and r.status in ('draft', 'opened') then (
              select count(*) from pages c where c.parent_id = u.id and not exists (
                select 1 from request_pages d where d.request_id = rp.request_id and d.type = 'delete' and d.to_page_id = c.id)) end as u_kept_children
       from request_pages rp
       join requests r on r.id = rp.request_id
       left join page_versions f on f.id = rp.page_version_id
       left join page_versions b on b.id = rp.base_version_id
       left join pages u on u.id = rp.to_page_id
       left join pages fp on fp.id = rp.from_page_id
       left join pages fpp on fpp.id = fp.parent_id
      where rp.request_id = any(?::int[])
      order by rp.request_id, rp.id`,
    [intArray(requestIds)],
  );
}

/** The three sides' contents of the request pages given: read apart, only for the merges not in memory yet. */
export async function requestPageContents(
  em: EntityManager,
  requestPageIds: readonly number[],
): Promise<{ id: number; f_content: string | null; b_content: string | null; u_content: string | null }[]> {
  return em.execute<{ id: number; f_content: string | null; b_content: string | null; u_content: string | null }[]>(
    `select rp.id, f.content as f_content, b.content as b_content, u.content as u_content
       from request_pages rp
       left join page_versions f on f.id = rp.page_version_id
       left join page_versions b on b.id = rp.base_version_id
       left join pages u on u.id = rp.to_page_id
      where rp.id = any(?::int[])`,
    [intArray(requestPageIds)],
  );
}

// --- merging (merge.service.ts) ---

/** A fork page carried by a request, with its parent's upstream page (where a page new in the fork is created). */
export type ForkPageRow = { id: number; title: string; content: string; position: number; parent_id: number | null; parent_origin: number | null };

/** The latest version of each page given, to refuse a merge when the fork moved past what the caller saw. */
export async function headVersions(tx: EntityManager, pageIds: readonly number[]): Promise<{ page_id: number; id: number }[]> {
  return tx.execute<{ page_id: number; id: number }[]>(
    `select p.id as page_id, v.id from pages p join page_versions v on v.page_id = p.id and v.index = p.version_sequence
      where p.id = any(?::int[])`,
    [intArray(pageIds)],
  );
}

/** The fork pages given, with their parents' upstream pages. */
export async function forkPagesWithParentOrigin(tx: EntityManager, pageIds: readonly number[]): Promise<ForkPageRow[]> {
  return tx.execute<ForkPageRow[]>(
    `select p.id, p.title, p.content, p.position, p.parent_id, parent.origin_page_id as parent_origin
         from pages p left join pages parent on parent.id = p.parent_id where p.id = any(?::int[])`,
    [intArray(pageIds)],
  );
}

/** Marks a page's versions as the request's, from the fork version, so its history says where it came from. */
export async function markVersionsFromRequest(tx: EntityManager, requestId: number, fromVersionId: number | null, pageId: number): Promise<void> {
  await tx.execute('update page_versions set request_id = ?, from_version_id = ? where page_id = ?', [requestId, fromVersionId, pageId]);
}

/** Marks the request's pages merged, each with the original's page it landed on (where it has a new one). */
export async function markRequestPagesMerged(tx: EntityManager, pages: readonly { id: number; toPageId: number | undefined }[]): Promise<void> {
  await tx.execute(
    `update request_pages rp set merged = true, to_page_id = coalesce(x.to_page, rp.to_page_id)
         from unnest(?::int[], ?::int[]) as x (id, to_page) where rp.id = x.id`,
    [intArray(pages.map((page) => page.id)), intArray(pages.map((page) => page.toPageId ?? 'NULL'))],
  );
}

/**
 * Re-bases merged fork pages on the original's pages they landed on (origin, latest version and parent), in one
 * statement: a pull then has nothing to bring in for them.
 */
export async function rebaseForkPages(tx: EntityManager, pages: readonly { forkPageId: number; originId: number }[]): Promise<void> {
  await tx.execute(
    `update pages p set origin_page_id = x.origin, base_version_id = latest.id, base_parent_id = o.parent_id
       from unnest(?::int[], ?::int[]) as x (id, origin)
       join pages o on o.id = x.origin
       join page_versions latest on latest.page_id = o.id and latest.index = o.version_sequence
      where p.id = x.id`,
    [intArray(pages.map((page) => page.forkPageId)), intArray(pages.map((page) => page.originId))],
  );
}

/** The index of each request given (a merged version names the request it came from: versions.handlers.ts). One statement. */
export async function requestIndexes(em: EntityManager, requestIds: readonly number[]): Promise<Map<number, number>> {
  if (requestIds.length === 0) return new Map();
  const rows = await em.execute<{ id: number; index: number }[]>('select id, "index" from requests where id = any(?::int[])', [`{${requestIds.join(',')}}`]);
  return new Map(rows.map((row) => [Number(row.id), Number(row.index)]));
}
