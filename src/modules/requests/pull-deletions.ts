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
import type { PageConflict, Resolution } from './merge/pages.ts';

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

type Orphan = { id: number; content: string; version_sequence: number; kept_children: number | string };
type Revived = { upstream_page_id: number; content: string; b_content: string | null; latest_id: number };

/** What the pull does about deletions; conflicts left unresolved are pushed to `conflicts`. */
export async function planDeletions(
  tx: EntityManager,
  forkId: number,
  resolutions: Map<number, Resolution>,
  conflicts: PageConflict[],
): Promise<DeletionPlan> {
  const plan: DeletionPlan = { remove: [], detach: [], restore: [], confirm: [] };
  const orphans = await tx.execute<Orphan[]>(
    `select fp.id, fp.content, fp.version_sequence,
            (select count(*) from pages c where c.parent_id = fp.id and not (c.upstream_page_id is not null and c.origin_page_id is null)) as kept_children
       from pages fp where fp.note_id = ? and fp.upstream_page_id is not null and fp.origin_page_id is null order by fp.id`,
    [forkId],
  );
  for (const page of orphans) {
    const resolution = resolutions.get(page.id);
    if (page.version_sequence === 0 && !Number(page.kept_children) && resolution === undefined) plan.remove.push(page.id);
    else if (resolution === 'theirs') plan.remove.push(page.id);
    else if (resolution === 'ours') plan.detach.push({ id: page.id });
    else if (resolution) plan.detach.push({ id: page.id, content: resolution.content });
    else conflicts.push({ page_id: page.id, kind: 'delete_modify', regions: [{ base: '', ours: page.content, theirs: '' }] });
  }
  const revived = await tx.execute<Revived[]>(
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
  for (const page of revived) {
    const resolution = resolutions.get(page.upstream_page_id);
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
    await tx.execute('update pages set upstream_page_id = null where id = any(?::int[])', [`{${plan.detach.map((page) => page.id).join(',')}}`]);
  }
  if (plan.confirm.length > 0) {
    await tx.execute(
      `update fork_deletions d set base_version_id = x.latest from unnest(?::int[], ?::int[]) as x (page, latest)
        where d.note_id = ? and d.upstream_page_id = x.page`,
      [`{${plan.confirm.map((row) => row.upstreamPageId).join(',')}}`, `{${plan.confirm.map((row) => row.latestId).join(',')}}`, forkId],
    );
  }
  if (plan.restore.length > 0) {
    await tx.execute('delete from fork_deletions where note_id = ? and upstream_page_id = any(?::int[])', [forkId, `{${plan.restore.join(',')}}`]);
  }
}
