// Webhooks and their delivery log as the document describes them (Webhook, WebhookDelivery). Pure. The secret is
// shown only by the request that set it.
import type { Webhook as WebhookView, WebhookDelivery as DeliveryView } from '../../../generated/client/types.gen.ts';
import type { Webhook, WebhookDelivery } from './webhook.entity.ts';

export function presentWebhook(webhook: Webhook, secret?: string): WebhookView {
  return {
    model: 'webhook',
    id: webhook.id,
    url: webhook.url,
    events: [...webhook.events],
    active: webhook.active,
    disabled_reason: webhook.disabledReason ?? null,
    consecutive_failures: webhook.consecutiveFailures,
    ...(secret !== undefined ? { secret } : {}),
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
  };
}

export function presentDelivery(delivery: WebhookDelivery): DeliveryView {
  return {
    model: 'webhook_delivery',
    id: delivery.id,
    message_id: delivery.messageId,
    event: delivery.eventType,
    attempt: delivery.attempt,
    succeeded: delivery.succeeded,
    status_code: delivery.statusCode ?? null,
    error: delivery.error ?? null,
    duration_ms: delivery.durationMs,
    next_attempt_at: delivery.nextAttemptAt ? delivery.nextAttemptAt.toISOString() : null,
    created_at: delivery.createdAt.toISOString(),
  };
}
