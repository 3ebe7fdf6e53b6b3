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

const BATCH = 10;
const LEASE_MARGIN_MS = 60_000;
const KEEP_DELIVERIES_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 10 * 60_000;

type Claimed = { id: string | number; webhook_id: number; message_id: string; event_type: string; payload: string; attempts: number; url: string; secret: string };

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
      await this.orm.em.fork().execute('delete from webhook_deliveries where created_at < ?', [new Date(now - KEEP_DELIVERIES_MS)]);
    }
    const claimed = await this.orm.em.fork().execute<Claimed[]>(
      `with due as (
         select id from webhook_outbox where next_attempt_at <= ? order by next_attempt_at, id limit ? for update skip locked)
       update webhook_outbox o set attempts = o.attempts + 1, next_attempt_at = ?
         from due, webhooks w
        where o.id = due.id and w.id = o.webhook_id
       returning o.id, o.webhook_id, o.message_id, o.event_type, o.payload, o.attempts, w.url, w.secret`,
      [new Date(now), BATCH, new Date(now + this.settings.timeoutMs + LEASE_MARGIN_MS)],
    );
    await Promise.all(claimed.map(async (message) => {
      const attempt = await send(message.url, message.secret, message.message_id, message.payload, this.settings);
      await this.record(message, attempt);
    }));
    return claimed.length;
  }

  private async record(message: Claimed, attempt: Attempt): Promise<void> {
    const final = attempt.succeeded || message.attempts >= this.settings.maxAttempts;
    const nextAttemptAt = final ? null : new Date(Date.now() + backoff(message.attempts, this.settings));
    // the webhook's row first, then the message's: every transaction here takes them in that order (two workers
    // recording failures of one webhook, one of them disabling it and deleting its other messages, deadlocked
    // when each held its own message and waited for the webhook)
    await this.orm.em.fork().transactional(async (tx) => {
      let disabled = false;
      if (attempt.succeeded) {
        await tx.execute('update webhooks set consecutive_failures = 0 where id = ? and consecutive_failures <> 0', [message.webhook_id]);
      } else {
        const [webhook] = await tx.execute<{ disabled: boolean }[]>(
          `update webhooks set consecutive_failures = consecutive_failures + 1,
             active = active and consecutive_failures + 1 < ?,
             disabled_reason = case when active and consecutive_failures + 1 >= ? then ? else disabled_reason end
           where id = ? returning (disabled_reason is not null and not active) as disabled`,
          [this.settings.disableAfter, this.settings.disableAfter, `disabled after ${this.settings.disableAfter} failed delivery attempts in a row (last: ${attempt.error ?? 'failed'})`, message.webhook_id],
        );
        disabled = webhook?.disabled === true;
      }
      await tx.execute(
        `insert into webhook_deliveries (webhook_id, message_id, event_type, attempt, succeeded, status_code, error, duration_ms, next_attempt_at, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [message.webhook_id, message.message_id, message.event_type, message.attempts, attempt.succeeded, attempt.statusCode, attempt.error?.slice(0, 1000) ?? null, attempt.durationMs, nextAttemptAt, new Date()],
      );
      if (disabled) {
        // nothing more is sent to it: its undelivered messages go (this one with them)
        await tx.execute('delete from webhook_outbox where webhook_id = ?', [message.webhook_id]);
        this.logger.warn({ webhook: message.webhook_id, failures: this.settings.disableAfter }, 'webhook disabled after repeated failures');
      } else if (final) await tx.execute('delete from webhook_outbox where id = ?', [message.id]);
      else await tx.execute('update webhook_outbox set next_attempt_at = ? where id = ?', [nextAttemptAt, message.id]);
    });
  }
}
