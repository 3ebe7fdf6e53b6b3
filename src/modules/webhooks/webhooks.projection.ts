// The outbox, as a projection of the change log (events/projections.ts): after a change commits, it becomes one
// message per active webhook of its team that asked for its kind, all the messages of a batch of changes written in
// one INSERT ... SELECT, in the transaction that moves the projection's cursor (so a change is put in the outbox
// exactly once, and a change that rolled back was never in the log). The worker (webhooks.worker.ts) delivers them.
import { randomBytes } from 'node:crypto';
import type { ChangeRow } from '../events/change-log.ts';
import { project } from '../events/projections.ts';
import { isWebhookEvent, messageBody } from './webhook-events.ts';

export function registerWebhooksProjection(): void {
  project({
    name: 'webhooks',
    async apply(em, changes: readonly ChangeRow[]) {
      const sent = changes.filter((change) => change.team_id !== null && isWebhookEvent(change.type));
      if (sent.length === 0) return;
      // one message id per change and webhook: `msg_<random>_<webhook id>`, the `webhook-id` of every attempt
      const messages = sent.map((change) => ({
        // one message id per change and webhook: `msg_<random>_<webhook id>`, the `webhook-id` of every attempt
        prefix: `msg_${randomBytes(12).toString('hex')}_`,
        type: change.type,
        team: change.team_id,
        body: messageBody(change),
      }));
      await em.execute(
        `insert into webhook_outbox (webhook_id, message_id, event_type, payload, attempts, next_attempt_at, created_at)
          select w.id, (c.m ->> 'prefix') || w.id, c.m ->> 'type', c.m ->> 'body', 0, now(), now()
            from jsonb_array_elements(?::jsonb) with ordinality as c(m, place)
            join webhooks w on w.team_id = (c.m ->> 'team')::int and w.active
                           and (cardinality(w.events) = 0 or (c.m ->> 'type') = any (w.events))
           order by c.place, w.id`,
        [JSON.stringify(messages)],
      );
    },
  });
}
