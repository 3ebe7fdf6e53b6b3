// The SQL of the change stream (event-hub.ts): where the change log stands (its watermark), the changes of a range
// of ids, what presenting and permitting them needs (teams, notes, apps, memberships, for a whole batch at once: the
// SQL functions of migration 0025), a whole pass on PostgreSQL in one statement, which tokens still hold, and the
// log's retention.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ConnectionType } from '../../db/database.ts';
import { preparedQuery } from '../../db/rows.ts';
import { CHANGE_WRITERS_LOCK, type ChangeRow } from './events.repository.ts';

/**
 * Where the change log stands: the last id handed out and the transactions appending to it (their virtual ids):
 * safe-bound.ts says how it makes a safe bound.
 */
export type Watermark = { running: ReadonlySet<string>; last: number };

/**
 * The last change id handed out (`last`, read from the sequence, which is not transactional) and, read after it, the
 * transactions appending to the change log now: those holding CHANGE_WRITERS_LOCK on this database (pg_locks; a
 * transaction keeps its locks until it has committed or rolled back, so one that no longer holds it has ended). The
 * order matters (safe-bound.ts): the SQL function change_log_watermark (migration 0025) reads them in that order,
 * and change_stream_pass reads the watermark through it too.
 */
export async function readWatermark(em: EntityManager, connection: ConnectionType = 'write', embedded = false): Promise<Watermark> {
  if (embedded) return { running: new Set(), last: await lastChangeId(em, connection) };
  const [row] = await em.execute<{ running: string[] | string | null; last: string }[]>(
    'select w.last::text as last, w.running from change_log_watermark(?, ?) w',
    [CHANGE_WRITERS_LOCK.classid, CHANGE_WRITERS_LOCK.objid],
    { method: 'all', connectionType: connection },
  );
  const running = typeof row!.running === 'string' ? row!.running.replace(/[{}]/g, '').split(',').filter((id) => id !== '') : row!.running ?? [];
  return { running: new Set(running), last: Number(row!.last) };
}

/**
 * The watermark of the embedded database, read by the server that opened it: no appender can be running, so the
 * last id is the whole of it. PGlite is one session, and a statement of ours runs only when no transaction is open
 * in it (pglite-stream.ts: ours hold the session from their first statement to their end, and wait for one of the
 * admin command line's to end), so every id handed out before it has committed or never will. Reading pg_locks
 * there cost 5.4 ms of the server's one core per pass of the change stream, against 0.6 ms for the sequence alone.
 */
async function lastChangeId(em: EntityManager, connection: ConnectionType): Promise<number> {
  const [row] = await em.execute<{ last: string | null }[]>(
    'select (case when is_called then last_value else last_value - 1 end)::text as last from changes_id_seq',
    [],
    { method: 'all', connectionType: connection },
  );
  return Number(row!.last);
}

/** An array parameter as PostgreSQL's literal (`{1,2}`): the driver would spread a JS array into a list. */
const literal = (values: readonly (number | string)[]): string => `{${values.join(',')}}`;

const CHANGE_COLUMNS = `id::text as id, tx::text as tx, occurred_at, type, actor_id, client_id, team_id, note_id, subject_id, payload`;

function parsed(rows: ChangeRow[]): ChangeRow[] {
  for (const row of rows) if (typeof row.payload === 'string') row.payload = JSON.parse(row.payload);
  return rows;
}

/**
 * Up to `limit` changes with ids in (after, upTo] that may concern the caller, narrowed in SQL by what the JSON form
 * asked for (the team, the note, the types); whether the caller may read each is decided after (event-access.ts).
 */
export async function changesFor(
  em: EntityManager,
  range: { after: number; upTo: number; limit: number },
  filter: { teamId: number | null; noteId: number | null; types: readonly string[] | null },
  connection: ConnectionType = 'write',
): Promise<ChangeRow[]> {
  // the types come from the document's list (letters, digits and dots), so the literal needs no quoting
  const types = filter.types === null ? null : literal(filter.types);
  return parsed(await em.execute<ChangeRow[]>(
    `select ${CHANGE_COLUMNS} from changes
      where id > ? and id <= ? and team_id is not null
        and (?::int is null or team_id = ?::int) and (?::int is null or note_id = ?::int)
        and (?::text[] is null or type = any(?::text[]))
      order by changes.id limit ?`,
    [range.after, range.upTo, filter.teamId, filter.teamId, filter.noteId, filter.noteId, types, types, range.limit],
    { method: 'all', connectionType: connection },
  ));
}

/** The id of the oldest change kept (0 when the log is empty). */
export async function oldestChangeId(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ oldest: string }[]>('select coalesce(min(id), 0)::text as oldest from changes');
  return Number(row!.oldest);
}

export type TeamRow = { id: number; name: string };
export type NoteRow = { id: number; team_id: number; slug: string | null; is_private: boolean };
export type AppRow = { id: number; client_id: string; name: string };

export type EventContextRows = { teams: TeamRow[]; notes: NoteRow[]; apps: AppRow[]; memberships: { team_id: number; user_id: number }[] };

/** A JSON value as the driver hands it (parsed, or text on some paths). */
const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) as T : value as T);

/** What the events of a batch show and who may read them: the SQL function change_context (migration 0025). */
export async function eventContext(
  em: EntityManager,
  ids: { teams: readonly number[]; notes: readonly number[]; apps: readonly number[]; users: readonly number[] },
  connection: ConnectionType = 'write',
): Promise<EventContextRows> {
  const [row] = await em.execute<{ context: unknown }[]>(
    'select change_context(?::int[], ?::int[], ?::int[], ?::int[]) as context',
    [literal(ids.teams), literal(ids.notes), literal(ids.apps), literal(ids.users)],
    { method: 'all', connectionType: connection },
  );
  return json<EventContextRows>(row!.context);
}

type ChangesRead = { changes: ChangeRow[]; context: EventContextRows };

/** The changes and context of change_stream_changes' answer; occurred_at comes as JSON text, cut to milliseconds. */
function changesRead(answer: { changes: unknown; context: unknown }): ChangesRead {
  const changes = json<(Omit<ChangeRow, 'occurred_at'> & { occurred_at: string })[]>(answer.changes)
    .map((change) => ({ ...change, occurred_at: new Date(change.occurred_at) }));
  return { changes, context: json<EventContextRows>(answer.context) };
}

/**
 * The changes with ids in (after, upTo], in id order, at most `limit`, and their context for `users`, in one
 * statement (the SQL function change_stream_changes, migration 0025): the change stream's loop runs it on every pass
 * that has something to send on the embedded database (there every statement is time the writers wait for), and for
 * the pages after the first of a long pass. Prepared, and PL/pgSQL keeps the plan of the query inside for the
 * session: planning that query took 2.7 of its 4.3 ms on PGlite when it was sent as text.
 */
export async function changesWithContext(
  em: EntityManager,
  range: { after: number; upTo: number; limit: number },
  users: readonly number[],
  connection: ConnectionType = 'write',
): Promise<ChangesRead> {
  const [row] = await preparedQuery<{ answer: unknown }>(
    em, 'changes_with_context', 'select change_stream_changes($1, $2, $3, $4) as answer',
    [range.after, range.upTo, range.limit, literal(users)], connection,
  );
  return changesRead(json<{ changes: unknown; context: unknown }>(row!.answer));
}

/** A pass's readings of the watermark (the first, and the last of the settle) and what it read after them. */
export type PassRead = ChangesRead & { first: Watermark; final: Watermark };

/**
 * A pass of the change stream on PostgreSQL in one round trip (the SQL function change_stream_pass, migration 0025):
 * the watermark, read again every `stepMs` for at most `settleMs` while the appenders its first reading saw are
 * running, then, read after the last reading, the changes after `after` up to that reading's last id (at most
 * `limit`) with their context for `users`. The caller takes both readings into its safe bound, in order, and sends
 * the changes up to the bound: each of those has committed before the changes were read.
 */
export async function streamPass(
  em: EntityManager,
  pass: { after: number; limit: number; users: readonly number[]; settleMs: number; stepMs: number },
  connection: ConnectionType = 'write',
): Promise<PassRead> {
  const [row] = await preparedQuery<{ answer: unknown }>(
    em, 'change_stream_pass', 'select change_stream_pass($1, $2, $3, $4, $5, $6, $7) as answer',
    [pass.after, pass.limit, literal(pass.users), pass.settleMs, pass.stepMs, CHANGE_WRITERS_LOCK.classid, CHANGE_WRITERS_LOCK.objid], connection,
  );
  type Reading = { last: string; running: string[] };
  const answer = json<{ first: Reading; final: Reading; changes: unknown; context: unknown }>(row!.answer);
  const watermark = (reading: Reading): Watermark => ({ last: Number(reading.last), running: new Set(reading.running) });
  return { ...changesRead(answer), first: watermark(answer.first), final: watermark(answer.final) };
}

/** Of `tokenIds`, those that still exist and have not expired. */
export async function liveTokens(em: EntityManager, tokenIds: readonly number[], connection: ConnectionType = 'write'): Promise<Set<number>> {
  const rows = await em.execute<{ id: number }[]>(
    'select id from tokens where id = any(?::int[]) and (expires_at is null or expires_at > now())',
    [literal(tokenIds)],
    { method: 'all', connectionType: connection },
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * Deletes the changes older than `retentionDays` that every projection has applied (a projection behind keeps what
 * it has still to apply). Returns how many rows went.
 */
export async function deleteOldChanges(em: EntityManager, retentionDays: number): Promise<number> {
  const rows = await em.execute<{ deleted: string }[]>(
    `with doomed as (
       delete from changes c
        where c.occurred_at < now() - make_interval(days => ?::int)
          and not exists (select 1 from projection_cursors p where (c.tx, c.id) > (p.tx, p.change_id))
       returning 1
     )
     select count(*)::text as deleted from doomed`,
    [retentionDays],
  );
  return Number(rows[0]!.deleted);
}
