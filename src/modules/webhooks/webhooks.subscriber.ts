// The outbox: each domain event of a team becomes one message per active webhook of the team that asked for its
// kind, written in one INSERT ... SELECT in the transaction of the change (a change that rolls back sends nothing;
// one that commits is sent at least once). The worker (webhooks.worker.ts) delivers them.
import { randomBytes } from 'node:crypto';
import { subscribe } from '../events/events.ts';
import { messageBody, teamOf } from './webhook-events.ts';

export function subscribeWebhooks(): void {
  subscribe('webhooks', async (em, event) => {
    const teamId = teamOf(event);
    if (teamId === undefined) return;
    const now = new Date();
    // one message id per event and webhook: `msg_<random>_<webhook id>`, the `webhook-id` of every attempt
    const prefix = `msg_${randomBytes(12).toString('hex')}_`;
    await em.execute(
      `insert into webhook_outbox (webhook_id, message_id, event_type, payload, attempts, next_attempt_at, created_at)
        select w.id, ?::text || w.id, ?, ?, 0, ?, ? from webhooks w
         where w.team_id = ? and w.active and (cardinality(w.events) = 0 or ?::text = any (w.events))`,
      [prefix, event.type, messageBody(event, teamId, now), now, now, teamId, event.type],
    );
  });
}
