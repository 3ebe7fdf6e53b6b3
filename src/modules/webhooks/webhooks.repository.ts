// The webhooks' SQL: the outbox rows written by the change log's projection (webhooks.projection.ts), the delivery
// worker's claims and records (webhooks.worker.ts), and the service's few statements the entity API cannot say.
import type { EntityManager } from '@mikro-orm/postgresql';

export type OutboxMessage = { prefix: string; type: string; team: number | null; body: string };

/**
 * One outbox row per message and active webhook of its team that asked for its type, all in one INSERT ... SELECT,
 * in the order given (the message id: the prefix and the webhook's id).
 */
export async function insertOutboxMessages(em: EntityManager, messages: readonly OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await em.execute(
    `insert into webhook_outbox (webhook_id, message_id, event_type, payload, attempts, next_attempt_at, created_at)
      select w.id, (c.m ->> 'prefix') || w.id, c.m ->> 'type', c.m ->> 'body', 0, now(), now()
        from jsonb_array_elements(?::jsonb) with ordinality as c(m, place)
        join webhooks w on w.team_id = (c.m ->> 'team')::int and w.active
                       and (cardinality(w.events) = 0 or (c.m ->> 'type') = any (w.events))
       order by c.place, w.id`,
    [JSON.stringify(messages)],
  );
}

// --- the service (webhooks.service.ts) ---

/** Locks the team's row for the transaction: two registrations at once cannot both pass the per-team limit. */
export async function lockTeamRow(tx: EntityManager, teamId: number): Promise<void> {
  await tx.execute('select id from teams where id = ? for update', [teamId]);
}

/** Deletes the team's webhook in one statement (its outbox and log go by foreign key); false when there is none. */
export async function deleteTeamWebhook(em: EntityManager, teamId: number, id: number): Promise<boolean> {
  const rows = await em.execute<{ id: number }[]>('delete from webhooks where id = ? and team_id = ? returning id', [id, teamId]);
  return rows.length > 0;
}

/** Drops a webhook's undelivered messages: nothing more is sent to a webhook switched off or disabled. */
export async function deleteOutboxOfWebhook(tx: EntityManager, webhookId: number): Promise<void> {
  await tx.execute('delete from webhook_outbox where webhook_id = ?', [webhookId]);
}

// --- the delivery worker (webhooks.worker.ts) ---

/** A claimed outbox message with the address and secret to send it with. */
export type ClaimedMessage = { id: string | number; webhook_id: number; message_id: string; event_type: string; payload: string; attempts: number; url: string; secret: string };

/** Deletes the delivery log's entries older than `before`: the log is kept for a while, not for ever. */
export async function pruneDeliveries(em: EntityManager, before: Date): Promise<void> {
  await em.execute('delete from webhook_deliveries where created_at < ?', [before]);
}

/**
 * Claims up to `limit` messages due at `now` and leases them until `leaseUntil` (counting the attempt), in one
 * statement; SKIP LOCKED: several processes on one PostgreSQL never take the same message at once.
 */
export async function claimDueMessages(em: EntityManager, now: Date, limit: number, leaseUntil: Date): Promise<ClaimedMessage[]> {
  return em.execute<ClaimedMessage[]>(
    `with due as (
         select id from webhook_outbox where next_attempt_at <= ? order by next_attempt_at, id limit ? for update skip locked)
       update webhook_outbox o set attempts = o.attempts + 1, next_attempt_at = ?
         from due, webhooks w
        where o.id = due.id and w.id = o.webhook_id
       returning o.id, o.webhook_id, o.message_id, o.event_type, o.payload, o.attempts, w.url, w.secret`,
    [now, limit, leaseUntil],
  );
}

/** A delivered message ends the webhook's run of failures (no write when there was none). */
export async function resetFailures(tx: EntityManager, webhookId: number): Promise<void> {
  await tx.execute('update webhooks set consecutive_failures = 0 where id = ? and consecutive_failures <> 0', [webhookId]);
}

/**
 * Counts a failed attempt against the webhook, disabling it with `reason` at `disableAfter` failures in a row, in
 * one statement (the row locked, so two workers count both). Returns whether it is disabled now.
 */
export async function countFailure(tx: EntityManager, webhookId: number, disableAfter: number, reason: string): Promise<boolean> {
  const [webhook] = await tx.execute<{ disabled: boolean }[]>(
    `update webhooks set consecutive_failures = consecutive_failures + 1,
             active = active and consecutive_failures + 1 < ?,
             disabled_reason = case when active and consecutive_failures + 1 >= ? then ? else disabled_reason end
           where id = ? returning (disabled_reason is not null and not active) as disabled`,
    [disableAfter, disableAfter, reason, webhookId],
  );
  return webhook?.disabled === true;
}

/** One attempt as the delivery log keeps it. */
export type DeliveryRecord = {
  webhookId: number;
  messageId: string;
  eventType: string;
  attempt: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
};

/** Records an attempt in the delivery log, which the team reads to see why its endpoint is not called. */
export async function insertDelivery(tx: EntityManager, d: DeliveryRecord): Promise<void> {
  await tx.execute(
    `insert into webhook_deliveries (webhook_id, message_id, event_type, attempt, succeeded, status_code, error, duration_ms, next_attempt_at, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [d.webhookId, d.messageId, d.eventType, d.attempt, d.succeeded, d.statusCode, d.error, d.durationMs, d.nextAttemptAt, d.createdAt],
  );
}

/** Drops a message that was delivered or ran out of attempts. */
export async function deleteOutboxMessage(tx: EntityManager, id: string | number): Promise<void> {
  await tx.execute('delete from webhook_outbox where id = ?', [id]);
}

/** Ends a failed message's lease early: it is tried again at `at` (the backoff), not when the lease runs out. */
export async function rescheduleOutboxMessage(tx: EntityManager, id: string | number, at: Date): Promise<void> {
  await tx.execute('update webhook_outbox set next_attempt_at = ? where id = ?', [at, id]);
}
