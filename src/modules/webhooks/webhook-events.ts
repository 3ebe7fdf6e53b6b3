// What a webhook is sent: the event kinds it may ask for, and the message for each change: the change stream's own
// event (events/event-presenter.ts: one vocabulary, the same types and fields), with beside it `timestamp` and
// `data`, the message's form before the change stream, kept for receivers written against it. Ids, names and
// version numbers, never the objects themselves: the receiver reads them through the API, with its own rights.
import type { ChangeEvent } from '../../../generated/client/types.gen.ts';
import type { ChangeRow } from '../events/events.repository.ts';
import { EVENT_TYPES, isEventType, type EventType } from '../events/event-presenter.ts';

/** Every kind of event of a team: the change stream's types. */
export const WEBHOOK_EVENTS: readonly EventType[] = EVENT_TYPES;

export const isWebhookEvent = (kind: string): kind is EventType => isEventType(kind);

/** The message body, as sent: the event, and `timestamp` and `data: {team_id, ..., actor}` from the change log's row. */
export function messageBody(event: ChangeEvent, change: ChangeRow): string {
  return JSON.stringify({
    ...event,
    timestamp: event.occurred_at,
    data: { team_id: change.team_id, ...change.payload },
  });
}
