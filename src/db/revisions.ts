// The revisions log (migrations/0002-revisions.sql) only ever needs the newest row of each target: older ones are
// deleted now and then. Deleting them never changes the answer of `max(id)` for any target.
import type { EntityManager } from '@mikro-orm/postgresql';

export const REVISION_PRUNE_INTERVAL_MS = 10 * 60_000;

/** Deletes every revision superseded by a newer one of the same target; returns how many went. */
export async function pruneRevisions(em: EntityManager): Promise<number> {
  const rows = await em.execute<{ pruned: string }[]>(
    `with newest as (select kind, target_id, max(id) as id from revisions group by kind, target_id),
          gone as (delete from revisions r using newest n
                    where r.kind = n.kind and r.target_id = n.target_id and r.id < n.id returning 1)
     select count(*) as pruned from gone`,
  );
  return Number(rows[0]?.pruned ?? 0);
}
