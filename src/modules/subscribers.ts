// Everything that follows from a domain event, registered once when the app is built: the notifications and the
// activity log, the search index, the webhooks' outbox.
import { subscribeActivityLog } from './logs/logs.subscriber.ts';
import { subscribeNotifications } from './notifications/notifications.subscriber.ts';
import { subscribeSearchIndex } from './search/search.subscriber.ts';
import { subscribeWebhooks } from './webhooks/webhooks.subscriber.ts';

export function subscribeAll(): void {
  subscribeNotifications();
  subscribeActivityLog();
  subscribeSearchIndex();
  subscribeWebhooks();
}
