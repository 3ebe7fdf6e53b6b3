// Writing requests, each change in one transaction with its domain event: create (on the fork, numbered on the
// original), open, close. Merging is merge.service.ts. Who may do what is decided before these are called (the
// handlers ask the policy table); here only what the data itself forbids is checked.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { nextNoteIndex } from '../../db/note-counters.ts';
import { currentTime } from '../../db/timestamps.ts';
import { conflict, unprocessable } from '../errors.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import { renderDiff } from '../pages/diff.ts';
import type { Team } from '../teams/team.entity.ts';
import type { User } from '../users/user.entity.ts';
import { MergeRequest, MergeRequestPage } from './merge-request.entity.ts';
import { ancestorTitleRows, proposedDeletionRows, proposedVersionRows, type ProposedDeletionRow, type ProposedVersionRow } from './requests.repository.ts';

/** The versions given, each of a page of the fork, at most one per page (422 otherwise), in the order given. */
async function proposedVersions(em: EntityManager, fork: Note, versionIds: readonly number[]): Promise<ProposedVersionRow[]> {
  const rows = await proposedVersionRows(em, versionIds);
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
  const rows = await ancestorTitleRows(em, pageIds);
  const titles = new Map<number, string[]>();
  for (const row of rows) titles.set(row.start_id, [...(titles.get(row.start_id) ?? []), row.title]);
  return titles;
}

/**
 * The pages of the original given, each one the fork copied and has since deleted (fork_deletions) and does not
 * have again; once each (422 `invalid_deleted_page` otherwise), in the order given.
 */
async function proposedDeletions(em: EntityManager, fork: Note, original: Note, pageIds: readonly number[]): Promise<ProposedDeletionRow[]> {
  if (pageIds.length === 0) return [];
  const rows = await proposedDeletionRows(em, fork.id, original.id, pageIds);
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

/**
 * The request's entry for a version of a fork page (or, given `entry`, that entry made to propose this version
 * instead): a page that came from the original is an `update`, also when the original has deleted it since (its
 * `upstream_page_id` outlives the page): a `delete_modify` conflict, not a page new in the fork.
 */
export function addProposedVersion(tx: EntityManager, request: MergeRequest, fork: Note, version: ProposedVersionRow, path: string, entry?: MergeRequestPage): void {
  const fromOriginal = version.upstream_page_id !== null;
  const fields = {
    pageVersion: version.id,
    fromPage: version.page_id,
    toPage: version.origin_page_id,
    baseVersion: fromOriginal ? version.base_version_id : null,
    type: fromOriginal ? 'update' as const : 'create' as const,
    path,
    diff: renderDiff(fromOriginal ? (version.base_content ?? '') : '', version.content).html,
  };
  if (entry) tx.assign(entry, fields);
  else tx.create(MergeRequestPage, { request, note: fork.id, ...fields, merged: false });
}

/** The path a request shows for a page: team, note, the page's ancestors' titles (by its id), its title. */
export async function requestPagePath(em: EntityManager, originalTeam: Team, original: Note, pageId: number, title: string): Promise<string> {
  const ancestors = await ancestorTitles(em, [pageId]);
  return [originalTeam.name, original.title, ...(ancestors.get(pageId) ?? []), title].join(' / ');
}

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
      viaClient: actor.via?.clientId ?? null,
      viaApp: actor.via?.name ?? null,
    });
    const pathOf = (pageId: number | null, title: string) =>
      [originalTeam.name, original.title, ...((pageId !== null && ancestors.get(pageId)) || []), title].join(' / ');
    for (const version of versions) addProposedVersion(tx, request, fork, version, pathOf(version.page_id, version.title));
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
