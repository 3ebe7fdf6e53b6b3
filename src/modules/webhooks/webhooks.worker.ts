// The delivery worker: polls the outbox, claims the messages that are due with FOR UPDATE SKIP LOCKED (several
// processes on one PostgreSQL never take the same message at once), sends them outside any transaction, and records
// each attempt in the delivery log. A failed message is tried again with exponential backoff and jitter until
// WEBHOOK_MAX_ATTEMPTS; after WEBHOOK_DISABLE_AFTER failed attempts in a row the webhook is disabled.
//
// A kept job queue (graphile-worker, pg-boss) was not used: both open their own pool of connections, and the
// embedded PGlite is one session shared by the whole process, so their transactions would interleave with the
// service's; graphile-worker also needs LISTEN/NOTIFY on its own connection. The outbox needs three statements.
//
// A claimed message is leased: its next_attempt_at moves past the attempt's timeout, so a process that dies while
// sending leaves it to be claimed again after the lease (at-least-once delivery).
import type { Orm } from '../../db/database.ts';
import type { WebhookSettings } from '../../config.ts';
import type { Logger } from '../../http/logger.ts';
import { send, type Attempt } from './delivery.ts';
import {
  claimDueMessages,
  countFailure,
  deleteOutboxMessage,
  deleteOutboxOfWebhook,
  insertDelivery,
  pruneDeliveries,
  rescheduleOutboxMessage,
  resetFailures,
  type ClaimedMessage,
} from './webhooks.repository.ts';

const BATCH = 10;
const LEASE_MARGIN_MS = 60_000;
const KEEP_DELIVERIES_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/** The wait before the next attempt after `attempt` failed: base x 2^(attempt-1), capped, times 0.75-1.25. */
export function backoff(attempt: number, settings: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>): number {
  const plain = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(plain * (0.75 + Math.random() * 0.5));
}

export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;
  private lastPrune = 0;

  private readonly orm: Orm;
  private readonly settings: WebhookSettings;
  private readonly logger: Logger;

  constructor(orm: Orm, settings: WebhookSettings, logger: Logger) {
    this.orm = orm;
    this.settings = settings;
    this.logger = logger;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops polling and waits for the attempts under way (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((error: unknown) => {
          this.logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'webhook delivery round failed');
          return 0;
        })
        .then((count) => this.schedule(count === BATCH ? 0 : this.settings.pollMs));
    }, delay);
    this.timer.unref();
  }

  /** One round: claims up to a batch of due messages, sends them, records the attempts. Returns how many. */
  async runOnce(): Promise<number> {
    const now = Date.now();
    if (now - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await pruneDeliveries(this.orm.em.fork(), new Date(now - KEEP_DELIVERIES_MS));
    }
    const claimed = await claimDueMessages(this.orm.em.fork(), new Date(now), BATCH, new Date(now + this.settings.timeoutMs + LEASE_MARGIN_MS));
    await Promise.all(claimed.map(async (message) => {
      const attempt = await send(message.url, message.secret, message.message_id, message.payload, this.settings);
      await this.record(message, attempt);
    }));
    return claimed.length;
  }

  private async record(message: ClaimedMessage, attempt: Attempt): Promise<void> {
    const final = attempt.succeeded || message.attempts >= this.settings.maxAttempts;
    const nextAttemptAt = final ? null : new Date(Date.now() + backoff(message.attempts, this.settings));
    // the webhook's row first, then the message's: every transaction here takes them in that order (two workers
    // recording failures of one webhook, one of them disabling it and deleting its other messages, deadlocked
    // when each held its own message and waited for the webhook)
    await this.orm.em.fork().transactional(async (tx) => {
      let disabled = false;
      if (attempt.succeeded) {
        await resetFailures(tx, message.webhook_id);
      } else {
        const reason = `disabled after ${this.settings.disableAfter} failed delivery attempts in a row (last: ${attempt.error ?? 'failed'})`;
        disabled = await countFailure(tx, message.webhook_id, this.settings.disableAfter, reason);
      }
      await insertDelivery(tx, {
        webhookId: message.webhook_id,
        messageId: message.message_id,
        eventType: message.event_type,
        attempt: message.attempts,
        succeeded: attempt.succeeded,
        statusCode: attempt.statusCode,
        error: attempt.error?.slice(0, 1000) ?? null,
        durationMs: attempt.durationMs,
        nextAttemptAt,
        createdAt: new Date(),
      });
      if (disabled) {
        // nothing more is sent to it: its undelivered messages go (this one with them)
        await deleteOutboxOfWebhook(tx, message.webhook_id);
        this.logger.warn({ webhook: message.webhook_id, failures: this.settings.disableAfter }, 'webhook disabled after repeated failures');
      } else if (final) await deleteOutboxMessage(tx, message.id);
      else await rescheduleOutboxMessage(tx, message.id, nextAttemptAt!); // not final: a next attempt is due
    });
  }
}
