// The SQL of proposal writes (proposals.ts): the lock that takes one app's writes to one note one at a time, the
// app's fork of each note (`proposal_forks`, migration 0020) with its open request, and a page's latest version.
import type { EntityManager } from '@mikro-orm/postgresql';

/** The advisory lock space of proposal writes (two-key form; the change log's writers use 20). */
const PROPOSALS_LOCK_CLASS = 21;

export type ForkRow = { id: number; note_id: number; fork_id: number; request_id: number | null };

/** Waits, inside the caller's transaction, until no other proposal write of this app, user and note runs. */
export async function lockProposals(tx: EntityManager, clientId: number, userId: number, originalId: number): Promise<void> {
  await tx.execute(`select pg_advisory_xact_lock(${PROPOSALS_LOCK_CLASS}, hashtext(?))`, [`${clientId}:${userId}:${originalId}`]);
}

/** The app's fork row for this user and note; or, when `noteId` is itself such a fork of the app and user, its row. */
export async function findForkRow(em: EntityManager, clientId: number, userId: number, noteId: number): Promise<ForkRow | undefined> {
  const rows = await em.execute<ForkRow[]>(
    `select id, note_id, fork_id, request_id from proposal_forks
      where client_id = ? and user_id = ? and (note_id = ? or fork_id = ?)
      order by (fork_id = ?) desc limit 1`,
    [clientId, userId, noteId, noteId, noteId],
  );
  return rows[0];
}

/** Remembers the app's new fork of the note for this user (replacing a fork that was deleted), with no request yet. */
export async function saveForkRow(tx: EntityManager, clientId: number, userId: number, noteId: number, forkId: number): Promise<ForkRow> {
  const [created] = await tx.execute<ForkRow[]>(
    `insert into proposal_forks (client_id, user_id, note_id, fork_id) values (?, ?, ?, ?)
     on conflict (client_id, user_id, note_id) do update set fork_id = excluded.fork_id, request_id = null
     returning id, note_id, fork_id, request_id`,
    [clientId, userId, noteId, forkId],
  );
  return created!;
}

/** The request that now carries the fork's proposals. */
export async function setForkRequest(tx: EntityManager, rowId: number, requestId: number): Promise<void> {
  await tx.execute('update proposal_forks set request_id = ? where id = ?', [requestId, rowId]);
}

/** The id of the page's latest version, if it has one. */
export async function latestVersionId(tx: EntityManager, pageId: number): Promise<number | undefined> {
  const [latest] = await tx.execute<{ id: number }[]>('select id from page_versions where page_id = ? order by id desc limit 1', [pageId]);
  return latest?.id;
}
