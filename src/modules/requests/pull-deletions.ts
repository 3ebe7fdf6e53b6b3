// Deletions in a pull, both ways (ours: the fork, theirs: the original):
// - the original deleted a page the fork still has: a fork page that has no version of its own since it was copied
//   is deleted too; one with versions (edited in the fork, or by an earlier pull: its base went with the original's
//   page, so which it was cannot be told) is a `delete_modify` conflict: `theirs` deletes it, `ours` keeps it as a
//   page of the fork alone (final `content` keeps it with that content);
// - the fork deleted a page the original changed since the fork's base: a `delete_modify` conflict named by the
//   original's page id: `theirs` copies the original's page back in, `ours` keeps it deleted (and the deletion's
//   base moves to the original's latest version, so the next pull does not ask again).
// A page the fork deleted and the original did not change stays deleted, quietly.
import type { EntityManager } from '@mikro-orm/postgresql';
import { oneRegion, type PageConflict, type Resolution } from './merge/pages.ts';
import { confirmForkDeletions, detachFromUpstream, forgetForkDeletions, orphanedForkPages, revivedDeletions } from './requests.repository.ts';

export type DeletionPlan = {
  /** Fork pages to delete (their original page is gone). */
  remove: number[];
  /** Fork pages kept as pages of the fork alone, with new content where a resolution gave it. */
  detach: { id: number; content?: string }[];
  /** Original pages to copy back into the fork. */
  restore: number[];
  /** Original pages whose deletion in the fork is confirmed: the deletion's base moves to this version. */
  confirm: { upstreamPageId: number; latestId: number }[];
};

/** What the pull does about deletions; conflicts left unresolved are pushed to `conflicts`. */
export async function planDeletions(
  tx: EntityManager,
  forkId: number,
  resolutions: Map<number, Resolution>,
  conflicts: PageConflict[],
): Promise<DeletionPlan> {
  const plan: DeletionPlan = { remove: [], detach: [], restore: [], confirm: [] };
  const orphans = await orphanedForkPages(tx, forkId);
  for (const page of orphans) {
    const given = resolutions.get(page.id);
    const resolution = given === undefined ? undefined : oneRegion(page.id, given);
    if (page.version_sequence === 0 && !Number(page.kept_children) && resolution === undefined) plan.remove.push(page.id);
    else if (resolution === 'theirs') plan.remove.push(page.id);
    else if (resolution === 'ours') plan.detach.push({ id: page.id });
    else if (resolution) plan.detach.push({ id: page.id, content: resolution.content });
    else conflicts.push({ page_id: page.id, kind: 'delete_modify', regions: [{ base: '', ours: page.content, theirs: '' }] });
  }
  const revived = await revivedDeletions(tx, forkId);
  for (const page of revived) {
    const given = resolutions.get(page.upstream_page_id);
    const resolution = given === undefined ? undefined : oneRegion(page.upstream_page_id, given);
    if (resolution === 'ours') plan.confirm.push({ upstreamPageId: page.upstream_page_id, latestId: page.latest_id });
    else if (resolution !== undefined) plan.restore.push(page.upstream_page_id);
    else {
      conflicts.push({ page_id: page.upstream_page_id, kind: 'delete_modify', regions: [{ base: page.b_content ?? '', ours: '', theirs: page.content }] });
    }
  }
  return plan;
}

/** The plan's writes other than deleting and restoring pages (pull.service does those with the tree's functions). */
export async function confirmDeletions(tx: EntityManager, forkId: number, plan: DeletionPlan): Promise<void> {
  if (plan.detach.length > 0) {
    await detachFromUpstream(tx, plan.detach.map((page) => page.id));
  }
  if (plan.confirm.length > 0) {
    await confirmForkDeletions(tx, forkId, plan.confirm);
  }
  if (plan.restore.length > 0) {
    await forgetForkDeletions(tx, forkId, plan.restore);
  }
}
