// The SQL of the change log and of its projections' cursors (migration 0015): what change-log.ts appends and
// projections.ts reads. Rows are taken in (tx, id) order up to the oldest transaction still running (the migration
// says why).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventType } from './domain-events.ts';

/** A change as read back: ids of bigint columns come as strings. */
export type ChangeRow = {
  id: string;
  tx: string;
  occurred_at: Date;
  type: EventType;
  actor_id: number | null;
  client_id: number | null;
  team_id: number | null;
  note_id: number | null;
  subject_id: number | null;
  payload: ChangeData & { actor: { id: number; username: string } };
};

export type ChangeData = Record<string, unknown>;

export type NewChange = {
  type: string;
  actorId: number;
  clientId: number | null;
  teamId: number | null;
  noteId: number | null;
  subjectId: number;
  payload: Record<string, unknown>;
};

/**
 * The advisory lock every transaction that appends to the change log holds, shared, from before its row gets its id
 * until it ends (the two-key form: the attachments' locks use the one-key form, another space of keys). The change
 * stream's safe bound waits for the transactions holding it (readWatermark, safe-bound.ts), and for no other: a
 * projection's transaction runs for hundreds of milliseconds under a write load and appends nothing.
 */
export const CHANGE_WRITERS_LOCK = { classid: 20, objid: 2026 } as const;
/** The SQL that takes CHANGE_WRITERS_LOCK; it must run before the statement's `insert into changes` takes an id. */
export const TAKE_CHANGE_WRITERS_LOCK = `pg_advisory_xact_lock_shared(${CHANGE_WRITERS_LOCK.classid}, ${CHANGE_WRITERS_LOCK.objid})`;

/** Appends one change, in the caller's transaction. */
export async function insertChange(em: EntityManager, change: NewChange): Promise<void> {
  // the transaction's id and CHANGE_WRITERS_LOCK are taken before the row's id (the materialized CTE runs first):
  // the projections' order and the change stream's safe bound rely on it
  await em.execute(
    `with x as materialized (select pg_current_xact_id() as tx, ${TAKE_CHANGE_WRITERS_LOCK} as writer)
     insert into changes (tx, type, actor_id, client_id, team_id, note_id, subject_id, payload)
     select x.tx, ?, ?, ?, ?, ?, ?, ?::jsonb from x`,
    [change.type, change.actorId, change.clientId, change.teamId, change.noteId, change.subjectId, JSON.stringify(change.payload)],
  );
}

export type Cursor = { tx: string; change_id: string };

/** The projection's cursor, locked for the transaction; undefined when another process holds it (or it has none). */
export async function takeCursor(em: EntityManager, name: string): Promise<Cursor | undefined> {
  const [cursor] = await em.execute<Cursor[]>('select tx::text as tx, change_id from projection_cursors where name = ? for update skip locked', [name]);
  return cursor;
}

/** A cursor for a projection that has none, at the end of the log (nothing where another process made one). */
export async function createCursorAtEnd(em: EntityManager, name: string): Promise<void> {
  await em.execute(
    `insert into projection_cursors (name, tx, change_id)
     select ?, coalesce(max(tx), '0'), coalesce(max(id), 0) from changes on conflict (name) do nothing`,
    [name],
  );
}

/**
 * The horizon below which every transaction that could append to this database's change log has ended: the oldest
 * transaction the statement's snapshot sees running (pg_snapshot_xmin) would do, but on a server shared by several
 * databases a long transaction in another one (which can never write here) would hold every projection back for as
 * long as it runs. So the snapshot's running transactions are taken, less those pg_stat_activity shows connected to
 * another database, and the horizon is the oldest left, or the snapshot's xmax when none is. A transaction of this
 * database that ended between the snapshot and the read of pg_stat_activity is not shown there, so it stays in:
 * the horizon can only be lower than the truth, never higher. (pg_stat_activity gives 32-bit ids: compared modulo
 * 2^32; an id that matches by wraparound only holds the horizon lower.)
 */
const HORIZON = `coalesce(
    (select min(running) from pg_snapshot_xip(pg_current_snapshot()) running
      where (running::text::bigint % 4294967296)::text not in (
        select a.backend_xid::text from pg_stat_activity a
         where a.backend_xid is not null
           and a.datid is distinct from (select oid from pg_database where datname = current_database()))),
    pg_snapshot_xmax(pg_current_snapshot()))`;

/** Up to `limit` changes after the cursor, in order, that no running transaction can still come before. */
export async function changesAfter(em: EntityManager, cursor: Cursor, limit: number): Promise<ChangeRow[]> {
  const rows = await em.execute<ChangeRow[]>(
    `select id::text as id, tx::text as tx, occurred_at, type, actor_id, client_id, team_id, note_id, subject_id, payload
       from changes
      where (tx, id) > (?::xid8, ?::bigint) and tx < ${HORIZON}
      order by tx, id
      limit ?`,
    [cursor.tx, cursor.change_id, limit],
  );
  for (const row of rows) if (typeof row.payload === 'string') row.payload = JSON.parse(row.payload);
  return rows;
}

export async function moveCursor(em: EntityManager, name: string, to: ChangeRow): Promise<void> {
  await em.execute('update projection_cursors set tx = ?::xid8, change_id = ?, updated_at = now() where name = ?', [to.tx, to.id, name]);
}

/** The id of the change the projection would apply next, if any. */
export async function nextChangeId(em: EntityManager, name: string): Promise<string | undefined> {
  const rows = await em.execute<{ id: string }[]>(
    `select c.id::text as id from changes c, projection_cursors p
      where p.name = ? and (c.tx, c.id) > (p.tx, p.change_id) order by c.tx, c.id limit 1`,
    [name],
  );
  return rows[0]?.id;
}

/** The highest change id written so far ('0' for none). */
export async function lastChangeId(em: EntityManager): Promise<string> {
  const [row] = await em.execute<{ last: string }[]>('select coalesce(max(id), 0)::text as last from changes');
  return row!.last;
}

/** Whether a change up to `last` is still after the projection's cursor. */
export async function cursorBehind(em: EntityManager, name: string, last: string): Promise<boolean> {
  const [row] = await em.execute<{ behind: boolean }[]>(
    `select exists (select 1 from changes c, projection_cursors p
                     where p.name = ? and c.id <= ?::bigint and (c.tx, c.id) > (p.tx, p.change_id)) as behind`,
    [name, last],
  );
  return row!.behind;
}
