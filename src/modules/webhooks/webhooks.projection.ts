// The outbox, as a projection of the change log (events/projections.ts): after a change commits, it becomes one
// message per active webhook of its team that asked for its kind, all the messages of a batch of changes written in
// one INSERT ... SELECT, in the transaction that moves the projection's cursor (so a change is put in the outbox
// exactly once, and a change that rolled back was never in the log). The worker (webhooks.worker.ts) delivers them.
// A message is the change stream's event (one vocabulary), presented with the names the batch's teams, notes and
// apps have when it is projected (one statement for the batch).
import { randomBytes } from 'node:crypto';
import type { Urls } from '../../http/urls.ts';
import type { ChangeRow } from '../events/events.repository.ts';
import { eventContextOf, idsOf, presentEvent } from '../events/event-presenter.ts';
import { eventContext } from '../events/event-stream.repository.ts';
import { project } from '../events/projections.ts';
import { messageBody } from './webhook-events.ts';
import { insertOutboxMessages } from './webhooks.repository.ts';

export function registerWebhooksProjection(urls: Urls): void {
  project({
    name: 'webhooks',
    async apply(em, changes: readonly ChangeRow[]) {
      const teamChanges = changes.filter((change) => change.team_id !== null);
      if (teamChanges.length === 0) return;
      const context = eventContextOf(await eventContext(em, { ...idsOf(teamChanges), users: [] }));
      const messages = teamChanges.flatMap((change) => {
        const event = presentEvent(change, context, urls);
        if (!event) return [];
        // one message id per change and webhook: `msg_<random>_<webhook id>`, the `webhook-id` of every attempt
        return [{ prefix: `msg_${randomBytes(12).toString('hex')}_`, type: event.type, team: change.team_id, body: messageBody(event, change) }];
      });
      if (messages.length > 0) await insertOutboxMessages(em, messages);
    },
  });
}
