// How long the change log keeps its rows (EVENTS_RETENTION_DAYS): rows older than that, which every projection has
// applied, are deleted now and then (server.ts). A change stream asked to resume before the oldest row left gets a
// `truncated` event first (events.handlers.ts), never a silent gap. Pruned with the revisions, every 10 minutes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { deleteOldChanges } from './event-stream.repository.ts';

/** Deletes the changes older than `retentionDays` that every projection has passed; how many went. */
export function pruneChangeLog(em: EntityManager, retentionDays: number): Promise<number> {
  return deleteOldChanges(em, retentionDays);
}
