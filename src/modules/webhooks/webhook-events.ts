// What a webhook is sent: the event kinds it may ask for, and the thin message for each domain event (ids and the
// actor, never the objects themselves: the receiver reads them through the API, with its own rights).
import type { ChangeRow } from '../events/events.repository.ts';
import type { EventType } from '../events/domain-events.ts';

/**
 * Every domain event of a team, by kind. `team.created` and `team.deleted` are left out: a team has no webhooks
 * before it exists, and its webhooks go with it.
 */
export const WEBHOOK_EVENTS = [
  'note.created', 'note.updated', 'note.deleted',
  'page.created', 'page.updated', 'page.restored', 'page.deleted',
  'comment.created', 'comment.deleted',
  'issue.created', 'issue.updated', 'issue.deleted',
  'attachment.created', 'attachment.deleted',
  'team.renamed',
  'membership.added', 'membership.changed', 'membership.removed',
  'fork.created', 'fork.pulled',
  'request.created', 'request.opened', 'request.closed', 'request.merged',
] as const satisfies readonly EventType[];

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
// a new domain event must be added above (or to the exclusions): this fails `tsc` until it is
type Unlisted = Exclude<EventType, WebhookEvent | 'team.created' | 'team.deleted'>;
const everyEventListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyEventListed;

const known = new Set<string>(WEBHOOK_EVENTS);
export const isWebhookEvent = (kind: string): kind is WebhookEvent => known.has(kind);

/** The message body, as sent: `{type, timestamp, data: {team_id, ..., actor}}`, from the change log's row. */
export function messageBody(change: ChangeRow): string {
  return JSON.stringify({
    type: change.type,
    timestamp: new Date(change.occurred_at).toISOString(),
    data: { team_id: change.team_id, ...change.payload },
  });
}
