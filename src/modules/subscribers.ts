// Everything that follows from a domain event, registered once when the app is built: in the transaction of the
// change, the notifications and the activity log (the caller's next request must see them); after it commits, as
// projections of the change log, the search index and the webhooks' outbox.
import { subscribeActivityLog } from './logs/logs.subscriber.ts';
import { subscribeNotifications } from './notifications/notifications.subscriber.ts';
import { registerSearchProjection } from './search/search.projection.ts';
import { registerWebhooksProjection } from './webhooks/webhooks.projection.ts';
import type { Urls } from '../http/urls.ts';

/** `urls`: where the webhooks' messages link to (this process's PUBLIC_URL). */
export function subscribeAll(urls: Urls): void {
  subscribeNotifications();
  subscribeActivityLog();
  registerSearchProjection();
  registerWebhooksProjection(urls);
}
