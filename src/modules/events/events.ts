// Domain events: a service records what happened, inside its transaction. Each event is appended to the change log
// (change-log.ts) and handed to the subscribers that must write in that same transaction, because the caller's next
// request has to see what they write (the activity log, the notifications of others); what may follow after commit
// (the search index, the webhooks' outbox) is projected from the change log (projections.ts). Services never import
// the subscribers or projections: who is told of what lives with them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendChange } from './change-log.ts';
import type { DomainEvent } from './domain-events.ts';


export type Subscriber = (em: EntityManager, event: DomainEvent) => Promise<void>;

const subscribers = new Map<string, Subscriber>();

/** Registers a subscriber under a name (registering the same name again replaces it). */
export function subscribe(name: string, subscriber: Subscriber): void {
  subscribers.set(name, subscriber);
}

/**
 * Records an event inside the caller's transaction: appended to the change log, then every subscriber runs on the
 * same entity manager, in order.
 *
 * One event is written without it: `page.updated` for a change of a page's title or content only, whose one
 * statement (pages.repository.ts, writePageText) inserts the change-log row and the activity-log entry itself (the
 * notifications subscriber ignores that event). A subscriber that comes to act on `page.updated` must be written
 * there too; query-count.test.ts checks that both paths store the same rows.
 */
export async function recordEvent(em: EntityManager, event: DomainEvent): Promise<void> {
  await appendChange(em, event);
  for (const subscriber of subscribers.values()) await subscriber(em, event);
}
