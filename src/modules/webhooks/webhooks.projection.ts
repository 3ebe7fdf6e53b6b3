// The outbox, as a projection of the change log (events/projections.ts): after a change commits, it becomes one
// message per active webhook of its team that asked for its kind, all the messages of a batch of changes written in
// one INSERT ... SELECT, in the transaction that moves the projection's cursor (so a change is put in the outbox
// exactly once, and a change that rolled back was never in the log). The worker (webhooks.worker.ts) delivers them.
import { randomBytes } from 'node:crypto';
import type { ChangeRow } from '../events/events.repository.ts';
import { project } from '../events/projections.ts';
import { isWebhookEvent, messageBody } from './webhook-events.ts';
import { insertOutboxMessages } from './webhooks.repository.ts';

export function registerWebhooksProjection(): void {
  project({
    name: 'webhooks',
    async apply(em, changes: readonly ChangeRow[]) {
      const sent = changes.filter((change) => change.team_id !== null && isWebhookEvent(change.type));
      if (sent.length === 0) return;
      const messages = sent.map((change) => ({
        // one message id per change and webhook: `msg_<random>_<webhook id>`, the `webhook-id` of every attempt
        prefix: `msg_${randomBytes(12).toString('hex')}_`,
        type: change.type,
        team: change.team_id,
        body: messageBody(change),
      }));
      await insertOutboxMessages(em, messages);
    },
  });
}
