import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Team } from '../teams/team.entity.ts';
import { User } from '../users/user.entity.ts';

// A team's webhook: where to send the team's events, signed with `secret` (Standard Webhooks, `whsec_` + base64).
// `events` empty means every kind. The worker counts failed attempts in a row and turns `active` off, with
// `disabledReason`, after WEBHOOK_DISABLE_AFTER of them; a manager turns it on again (which resets the count).
export const WebhookSchema = defineEntity({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: p.integer().primary(),
    team: () => p.manyToOne(Team),
    url: p.text(),
    secret: p.string().length(128).lazy(),
    events: p.array<string>().columnType('text[]').default([]),
    active: p.boolean().default(true),
    disabledReason: p.text().nullable(),
    consecutiveFailures: p.integer().default(0),
    createdBy: () => p.manyToOne(User).nullable(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Webhook extends WebhookSchema.class {}
WebhookSchema.setClass(Webhook);

// One delivery attempt, as the worker recorded it (the log read through listWebhookDeliveries).
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.bigint('number').primary(),
    webhook: () => p.manyToOne(Webhook),
    messageId: p.string().length(64),
    eventType: p.string().length(40),
    attempt: p.integer(),
    succeeded: p.boolean(),
    statusCode: p.integer().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer(),
    nextAttemptAt: p.datetime().columnType('timestamptz(3)').nullable(),
    createdAt: p.datetime().columnType('timestamptz(3)'),
  },
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
