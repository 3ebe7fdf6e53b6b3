// Agents propose, people decide (issue 21): the page writes of an app registered with `writes: proposals` never
// change the note they name. Each goes into a fork of that note that belongs to the app and the signed-in user (made
// on the app's first write to the note, in the user's own team, remembered in `proposal_forks`), and one open request
// on the original carries the fork's changed pages: the write's page is added to it, or its entry made to propose the
// new version. A request that was merged or closed is left alone; the next write opens another. The handlers of
// createPage and updatePage call this for such a caller (pages.handlers.ts), the MCP tools through them.
//
// All of it is one transaction, taken one at a time per app, user and note (an advisory lock), so parallel writes of
// one agent make one fork and one request. Addressing the app's fork itself works too (the page is then the fork's).
// What a proposal write does not do: merge-on-write against the original (the original is not written; a request
// shows the changes from the fork's base, and conflicts with what people wrote since are resolved when it is merged).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PageProposal } from '../../../generated/client/types.gen.ts';
import type { Limits } from '../../config.ts';
import type { Urls } from '../../http/urls.ts';
import type { Actor } from '../events/domain-events.ts';
import { conflict, unprocessable } from '../errors.ts';
import { Note } from '../notes/note.entity.ts';
import { noteName } from '../notes/note.presenter.ts';
import type { Page } from '../pages/page.entity.ts';
import { Page as PageEntity } from '../pages/page.entity.ts';
import { updatePage, type PageChanges } from '../pages/pages.service.ts';
import { createPage, type NewPage } from '../pages/tree.service.ts';
import { Team } from '../teams/team.entity.ts';
import { createFork } from './forks.service.ts';
import { MergeRequest, MergeRequestPage } from './merge-request.entity.ts';
import { pullFork } from './pull.service.ts';
import { findForkRow, latestVersionId, lockProposals, saveForkRow, setForkRequest } from './proposals.repository.ts';
import { proposedVersionRows } from './requests.repository.ts';
import { addProposedVersion, createRequest, requestPagePath } from './requests.service.ts';

export type ProposalTarget = { note: Note; team: Team };
export type ProposalWrite =
  | { kind: 'create'; page: NewPage }
  | { kind: 'update'; page: Page; changes: PageChanges };
export type ProposalResult = { fork: Note; page: Page; proposal: PageProposal };

/** The fork's copy of the original's page, pulling the fork once if it has none yet (a page made after the fork). */
async function forkCopyOf(tx: EntityManager, actor: Actor, fork: Note, original: Note, originalPageId: number, limits: Limits): Promise<Page> {
  const find = () => tx.findOne(PageEntity, { note: fork.id, originPage: originalPageId });
  let copy = await find();
  if (!copy) {
    await pullFork(tx, actor, fork, original, new Map(), limits);
    copy = await find();
  }
  if (!copy) throw conflict('concurrent_change', `the proposals fork has no copy of page ${originalPageId} (it deleted it): propose to the fork's pages`);
  return copy;
}

/**
 * Writes `write` (aimed at `target`) into the fork of the caller's app instead, and keeps the app's open request on
 * the original up to date with the written page.
 */
export async function proposePageWrite(
  em: EntityManager,
  actor: Actor & { clientId: number },
  target: ProposalTarget,
  write: ProposalWrite,
  limits: Limits,
  urls: Urls,
): Promise<ProposalResult> {
  return em.transactional(async (tx) => {
    await lockProposals(tx, actor.clientId, actor.id, target.note.forkedFrom?.id ?? target.note.id);
    let row = await findForkRow(tx, actor.clientId, actor.id, target.note.id);
    // the original, and whether the write named the fork itself
    const namesFork = row !== undefined && row.fork_id === target.note.id;
    const original = namesFork ? await tx.findOneOrFail(Note, { id: row!.note_id }, { populate: ['team'] }) : target.note;
    const originalTeam = namesFork ? original.team as unknown as Team : target.team;
    let fork = row ? await tx.findOne(Note, { id: row.fork_id }, { populate: ['team'] }) : null;
    if (!fork) {
      const home = await tx.findOne(Team, { name: actor.username });
      if (!home) throw unprocessable('unknown_team', `the user's own team "${actor.username}" does not exist`);
      // the app's name as the token carried it (auth.ts)
      const appName = actor.via?.name ?? 'an app';
      fork = await createFork(tx, actor, original, originalTeam, home, { title: `${original.title}: proposals of ${appName}`.slice(0, 255) });
      row = await saveForkRow(tx, actor.clientId, actor.id, original.id, fork.id);
    }
    const forkRow = row!;

    // the write, on the fork's pages (a parent named by the original's id is its copy in the fork)
    const mapParent = async (parent: number | null | undefined) =>
      parent === undefined || parent === null || namesFork ? parent : (await forkCopyOf(tx, actor, fork!, original, parent, limits)).id;
    let page: Page;
    let originalPageId: number | null;
    if (write.kind === 'create') {
      page = await createPage(tx, actor, fork, { ...write.page, parent: await mapParent(write.page.parent) }, limits);
      originalPageId = null;
    } else {
      const copy = namesFork ? write.page : await forkCopyOf(tx, actor, fork, original, write.page.id, limits);
      page = (await updatePage(tx, actor, fork, copy, { ...write.changes, parent: await mapParent(write.changes.parent) }, undefined, limits)).page;
      originalPageId = copy.originPage?.id ?? null;
    }

    // the request: this page's latest version added to the open one, or its entry moved to it; else a new one
    const latest = await latestVersionId(tx, page.id);
    let request = forkRow.request_id === null ? null : await tx.findOne(MergeRequest, { id: forkRow.request_id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (request && request.status !== 'opened' && request.status !== 'draft') request = null;
    if (latest !== undefined) {
      if (request) {
        const [version] = await proposedVersionRows(tx, [latest]);
        const entry = await tx.findOne(MergeRequestPage, { request: request.id, fromPage: page.id });
        addProposedVersion(tx, request, fork, version!, await requestPagePath(tx, originalTeam, original, page.id, version!.title), entry ?? undefined);
        await tx.flush();
      } else {
        request = await createRequest(tx, actor, fork, original, originalTeam, {
          page_versions: [latest],
          description: 'Proposed by an app for review: its changes land here, not in the note.',
        });
        await setForkRequest(tx, forkRow.id, request.id);
      }
    }
    return {
      fork,
      page,
      proposal: {
        note_id: original.id,
        page_id: originalPageId,
        fork_id: fork.id,
        request_index: request?.index ?? null,
        request_html_url: request ? urls.request(originalTeam.name, noteName(original), request.index) : null,
      },
    };
  });
}
