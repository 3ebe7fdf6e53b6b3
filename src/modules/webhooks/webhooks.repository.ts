// The webhooks' SQL written by the change log's projection (webhooks.projection.ts). The service's and the worker's
// statements still live beside them (issue 18 moves them here).
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
