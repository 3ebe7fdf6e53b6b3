// Writing requests, each change in one transaction with its domain event: create (on the fork, numbered on the
// original), open, close. Merging is merge.service.ts. Who may do what is decided before these are called (the
// handlers ask the policy table); here only what the data itself forbids is checked.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { nextNoteIndex } from '../../db/note-counters.ts';
import { currentTime } from '../../db/timestamps.ts';
import { conflict, unprocessable } from '../errors.ts';
import { recordEvent, type Actor } from '../events/events.ts';
import type { Note } from '../notes/note.entity.ts';
import { renderDiff } from '../pages/diff.ts';
import type { Team } from '../teams/team.entity.ts';
import type { User } from '../users/user.entity.ts';
import { MergeRequest, MergeRequestPage } from './merge-request.entity.ts';

type ProposedVersion = {
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

/** The versions given, each of a page of the fork, at most one per page (422 otherwise), in the order given. */
async function proposedVersions(em: EntityManager, fork: Note, versionIds: readonly number[]): Promise<ProposedVersion[]> {
  const rows = await em.execute<ProposedVersion[]>(
    `select v.id, v.page_id, p.note_id, v.title, v.content, p.origin_page_id, p.upstream_page_id, p.base_version_id, b.content as base_content
       from page_versions v join pages p on p.id = v.page_id left join page_versions b on b.id = p.base_version_id
      where v.id = any(?::int[])`,
    [`{${versionIds.join(',')}}`],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const pages = new Set<number>();
  return versionIds.map((id, i) => {
    const row = byId.get(id);
    const pointer = `/page_versions/${i}`;
    if (!row || row.note_id !== fork.id) {
      throw unprocessable('invalid_page_version', `${id} is not a version of a page of this fork`, [{ pointer, detail: 'not a version of a page of this fork' }]);
    }
    if (pages.has(row.page_id)) {
      throw unprocessable('invalid_page_version', `two versions of page ${row.page_id} were given`, [{ pointer, detail: 'one version per page' }]);
    }
    pages.add(row.page_id);
    return row;
  });
}

/** The titles of each page's ancestors, from the top: one statement for all. */
async function ancestorTitles(em: EntityManager, pageIds: readonly number[]): Promise<Map<number, string[]>> {
  const rows = await em.execute<{ start_id: number; title: string }[]>(
    `with recursive up (start_id, parent_id, title, depth) as (
       select p.id, p.parent_id, p.title, 0 from pages p where p.id = any(?::int[])
       union all
       select up.start_id, p.parent_id, p.title, up.depth + 1 from pages p join up on p.id = up.parent_id where up.depth < 64)
     select start_id, title from up where depth > 0 order by start_id, depth desc`,
    [`{${pageIds.join(',')}}`],
  );
  const titles = new Map<number, string[]>();
  for (const row of rows) titles.set(row.start_id, [...(titles.get(row.start_id) ?? []), row.title]);
  return titles;
}

type ProposedDeletion = {
  upstream_page_id: number;
  base_version_id: number | null;
  title: string;
  base_content: string | null;
  /** The original's page, while it is there. */
  to_page_id: number | null;
};

/**
 * The pages of the original given, each one the fork copied and has since deleted (fork_deletions) and does not
 * have again; once each (422 `invalid_deleted_page` otherwise), in the order given.
 */
async function proposedDeletions(em: EntityManager, fork: Note, original: Note, pageIds: readonly number[]): Promise<ProposedDeletion[]> {
  if (pageIds.length === 0) return [];
  const rows = await em.execute<ProposedDeletion[]>(
    `select d.upstream_page_id, d.base_version_id, d.title, b.content as base_content, u.id as to_page_id
       from fork_deletions d
       left join page_versions b on b.id = d.base_version_id
       left join pages u on u.id = d.upstream_page_id and u.note_id = ?
      where d.note_id = ? and d.upstream_page_id = any(?::int[])
        and not exists (select 1 from pages fp where fp.note_id = d.note_id and fp.upstream_page_id = d.upstream_page_id)`,
    [original.id, fork.id, `{${pageIds.join(',')}}`],
  );
  const byId = new Map(rows.map((row) => [row.upstream_page_id, row]));
  const seen = new Set<number>();
  return pageIds.map((id, i) => {
    const row = byId.get(id);
    const pointer = `/deleted_pages/${i}`;
    if (!row) {
      throw unprocessable('invalid_deleted_page', `${id} is not a page of the original that this fork deleted`, [{ pointer, detail: 'not a page of the original that this fork deleted' }]);
    }
    if (seen.has(id)) throw unprocessable('invalid_deleted_page', `page ${id} was given twice`, [{ pointer, detail: 'each page once' }]);
    seen.add(id);
    return row;
  });
}

export type RequestFields = {
  page_versions?: number[] | null | undefined;
  deleted_pages?: number[] | null | undefined;
  is_wip?: boolean | null | undefined;
  description?: string | null | undefined;
};

/** A request from the fork to its original, numbered on the original (per-note gapless index). */
export async function createRequest(em: EntityManager, actor: Actor, fork: Note, original: Note, originalTeam: Team, fields: RequestFields): Promise<MergeRequest> {
  return em.transactional(async (tx) => {
    const versions = await proposedVersions(tx, fork, fields.page_versions ?? []);
    const deletions = await proposedDeletions(tx, fork, original, fields.deleted_pages ?? []);
    if (versions.length + deletions.length === 0) {
      throw unprocessable('invalid_page_version', 'the request proposes nothing: give page_versions or deleted_pages', [{ pointer: '/page_versions', detail: 'at least one page version or deleted page' }]);
    }
    const ancestors = await ancestorTitles(tx, [
      ...versions.map((version) => version.page_id),
      ...deletions.flatMap((deletion) => (deletion.to_page_id === null ? [] : [deletion.to_page_id])),
    ]);
    const index = await nextNoteIndex(tx, original.id, 'request');
    const isWip = fields.is_wip === true;
    const request = tx.create(MergeRequest, {
      toNote: original.id,
      fromNote: fork.id,
      index,
      user: actor.id,
      status: isWip ? 'draft' : 'opened',
      isWip,
      description: fields.description ?? '',
      closedAt: null,
      mergedAt: null,
      mergedBy: null,
    });
    const pathOf = (pageId: number | null, title: string) =>
      [originalTeam.name, original.title, ...((pageId !== null && ancestors.get(pageId)) || []), title].join(' / ');
    for (const version of versions) {
      // a page that came from the original is an `update`, also when the original has deleted it since (its
      // `upstream_page_id` outlives the page): a `delete_modify` conflict, not a page new in the fork
      const fromOriginal = version.upstream_page_id !== null;
      tx.create(MergeRequestPage, {
        request,
        note: fork.id,
        pageVersion: version.id,
        fromPage: version.page_id,
        toPage: version.origin_page_id,
        baseVersion: fromOriginal ? version.base_version_id : null,
        type: fromOriginal ? 'update' : 'create',
        path: pathOf(version.page_id, version.title),
        diff: renderDiff(fromOriginal ? (version.base_content ?? '') : '', version.content).html,
        merged: false,
      });
    }
    for (const deletion of deletions) {
      tx.create(MergeRequestPage, {
        request,
        note: fork.id,
        pageVersion: null,
        fromPage: null,
        toPage: deletion.to_page_id,
        baseVersion: deletion.base_version_id,
        type: 'delete',
        path: pathOf(deletion.to_page_id, deletion.title),
        diff: renderDiff(deletion.base_content ?? '', '').html,
        merged: false,
      });
    }
    await tx.flush();
    await recordEvent(tx, { type: 'request.created', actor, note: original, request, author: actor });
    return request;
  });
}

/** The request's row, locked for the rest of the transaction; 409 `invalid_state` once it is merged. */
export async function lockOpenable(tx: EntityManager, request: MergeRequest): Promise<MergeRequest> {
  const locked = await tx.findOneOrFail(MergeRequest, request.id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (locked.status === 'merged') throw conflict('invalid_state', 'the request is merged; a merged request cannot change state');
  return locked;
}

/** draft or closed -> opened (clears `is_wip`); an opened request stays as it is. */
export async function openRequest(em: EntityManager, actor: Actor, note: Note, request: MergeRequest, author: User): Promise<void> {
  await em.transactional(async (tx) => {
    const locked = await lockOpenable(tx, request);
    if (locked.status === 'opened') return;
    locked.status = 'opened';
    locked.isWip = false;
    locked.closedAt = null;
    await recordEvent(tx, { type: 'request.opened', actor, note, request: locked, author });
  });
}

/** draft or opened -> closed; a closed request stays as it is. */
export async function closeRequest(em: EntityManager, actor: Actor, note: Note, request: MergeRequest, author: User): Promise<void> {
  await em.transactional(async (tx) => {
    const locked = await lockOpenable(tx, request);
    if (locked.status === 'closed') return;
    locked.status = 'closed';
    locked.closedAt = currentTime();
    await recordEvent(tx, { type: 'request.closed', actor, note, request: locked, author });
  });
}
