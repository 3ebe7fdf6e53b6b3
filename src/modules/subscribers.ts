// Everything that follows from a domain event, registered once when the app is built: the notifications and the
// activity log (later: webhooks and the search index).
import { subscribeActivityLog } from './logs/logs.subscriber.ts';
import { subscribeNotifications } from './notifications/notifications.subscriber.ts';

export function subscribeAll(): void {
  subscribeNotifications();
  subscribeActivityLog();
}
