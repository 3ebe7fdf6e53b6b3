// Webhook deliveries end to end (issue 12): a real HTTP receiver on 127.0.0.1 verifies each message's signature with
// the `standardwebhooks` package; a receiver that answers 500 once gets the retry (same webhook-id, a new
// signature); one that always fails gets the webhook disabled; the delivery log shows every attempt; and the
// address guard, when on, refuses at delivery time a webhook that was registered while it was off.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as Verifier } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/http/logger.ts';
import { backoff, WebhookWorker } from '../../src/modules/webhooks/webhooks.worker.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, type Actor } from '../support/factories.ts';
import { openSecondConnection } from '../support/database.ts';
import { makeScenario } from '../support/scenario.ts';

type Received = { path: string; headers: IncomingHttpHeaders; body: string; answered: number };

let app: TestApp;
let manager: Actor;
let receiver: Server;
let receiverUrl: string;
let worker: WebhookWorker;
const received: Received[] = [];
/** What the receiver answers, per path: a list of statuses taken in order, the last one repeated. */
const script = new Map<string, number[]>();

beforeAll(async () => {
  app = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE: 'true', // the receiver is on 127.0.0.1
    WEBHOOK_RETRY_BASE_MS: '1',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_MAX_ATTEMPTS: '3',
    WEBHOOK_DISABLE_AFTER: '4',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  ({ manager } = await makeScenario(app, { team: 'sent' }));
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const statuses = script.get(request.url ?? '') ?? [200];
      const answered = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      response.writeHead(answered, { 'content-type': 'text/plain' }).end(answered === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  worker = new WebhookWorker(app.database.orm, app.config.webhooks, createLogger('silent'));
});
afterAll(async () => {
  await worker?.stop();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await app?.close();
});

// the outbox is a projection of the change log: what the tests wrote is projected first, as the server's worker does
const outboxSize = async (webhookId: number) => Number((await app.settle(), await app.em().execute<{ n: string }[]>('select count(*) as n from webhook_outbox where webhook_id = ?', [webhookId]))[0]!.n);

/** Runs delivery rounds until the webhook has nothing left to send (backoff is ~1 ms here). */
async function drain(webhookId: number, runner = worker): Promise<void> {
  for (let round = 0; round < 100 && (await outboxSize(webhookId)) > 0; round += 1) {
    await runner.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(await outboxSize(webhookId)).toBe(0);
}

async function register(path: string, events: string[]) {
  const answer = await manager.client.post('/api/v1/teams/sent/webhooks', { json: { webhook: { url: `${receiverUrl}${path}`, events } } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { id: number; secret: string };
}

const deliveries = async (id: number) => (await manager.client.get(`/api/v1/teams/sent/webhooks/${id}/deliveries`)).body;

describe('webhook delivery', () => {
  it('signs a page update the receiver verifies, and retries after a 500 with the same id', async () => {
    script.set('/flaky', [500, 200]);
    const { id, secret } = await register('/flaky', ['page.updated']);
    const note = await makeNote(app, 'sent', manager.user, { slug: 'signed' });
    const page = await makePage(app, note, manager, { title: 'Signed', content: '<p>one</p>' });
    expect((await manager.client.put(`/api/v1/sent/signed/${page.id}`, { json: { page: { content: '<p>two</p>' } } })).status).toBe(200);
    await drain(id);

    const attempts = received.filter((request) => request.path === '/flaky');
    expect(attempts.map((attempt) => attempt.answered)).toEqual([500, 200]);
    const verifier = new Verifier(secret);
    for (const attempt of attempts) {
      expect(attempt.headers['content-type']).toBe('application/json');
      const verified = verifier.verify(attempt.body, attempt.headers as Record<string, string>) as Record<string, unknown>;
      const actor = { id: manager.user.id, username: manager.user.username };
      // the change stream's event (ChangeEvent), and beside it `timestamp` (= `occurred_at`) and `data`, the
      // message's earlier form
      expect(verified).toEqual({
        id: expect.any(Number),
        type: 'page.updated',
        occurred_at: expect.stringMatching(/Z$/),
        actor,
        team: { id: note.team.id, name: 'sent' },
        note: { id: note.id, slug: 'signed', html_url: expect.stringMatching(/\/sent\/signed$/) },
        page: { id: page.id, version: 2 },
        changed: ['content'],
        timestamp: verified.occurred_at,
        data: { team_id: note.team.id, note_id: note.id, page_id: page.id, changed: ['content'], version: 2, actor },
      });
    }
    expect(attempts[1]!.headers['webhook-id']).toBe(attempts[0]!.headers['webhook-id']);
    expect(attempts[1]!.body).toBe(attempts[0]!.body);
    // a wrong secret or a changed body does not verify
    expect(() => new Verifier(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(attempts[0]!.body, attempts[0]!.headers as Record<string, string>)).toThrow();
    expect(() => verifier.verify(attempts[0]!.body.replace('two', 'six').replace('content', 'title'), attempts[0]!.headers as Record<string, string>)).toThrow();

    const log = await deliveries(id);
    expect(log.map((entry: { attempt: number; succeeded: boolean; status_code: number }) => [entry.attempt, entry.succeeded, entry.status_code])).toEqual([[2, true, 200], [1, false, 500]]);
    expect(log[1]).toMatchObject({ event: 'page.updated', message_id: attempts[0]!.headers['webhook-id'], error: 'answered 500' });
    expect(log[1].next_attempt_at).not.toBeNull();
    expect(log[0].next_attempt_at).toBeNull();
    expect((await manager.client.get(`/api/v1/teams/sent/webhooks/${id}`)).body).toMatchObject({ active: true, consecutive_failures: 0 });
  });

  it('gives a message up after the last attempt, and disables a webhook that keeps failing', async () => {
    script.set('/down', [503]);
    const { id } = await register('/down', ['note.created']);
    await manager.client.post('/api/v1/notes', { json: { note: { title: 'First', team: 'sent', slug: 'first' } } });
    await drain(id); // three attempts, then given up
    let webhook = (await manager.client.get(`/api/v1/teams/sent/webhooks/${id}`)).body;
    expect(webhook).toMatchObject({ active: true, consecutive_failures: 3 });
    const second = await manager.client.post('/api/v1/notes', { json: { note: { title: 'Second', team: 'sent' } } });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    await drain(id); // the fourth failure in a row disables it
    webhook = (await manager.client.get(`/api/v1/teams/sent/webhooks/${id}`)).body;
    expect(webhook).toMatchObject({ active: false, consecutive_failures: 4 });
    expect(webhook.disabled_reason).toMatch(/disabled after 4 failed delivery attempts in a row \(last: answered 503\)/);
    const log = await deliveries(id);
    expect(log.map((entry: { event: string; attempt: number; next_attempt_at: string | null }) => [entry.event, entry.attempt, entry.next_attempt_at === null])).toEqual([
      ['note.created', 1, false],
      ['note.created', 3, true],
      ['note.created', 2, false],
      ['note.created', 1, false],
    ]);
    expect(received.filter((request) => request.path === '/down')).toHaveLength(4);
    // nothing more is queued for it, until a manager turns it on again
    await manager.client.post('/api/v1/notes', { json: { note: { title: 'Third', team: 'sent' } } });
    expect(await outboxSize(id)).toBe(0);
    expect((await manager.client.patch(`/api/v1/teams/sent/webhooks/${id}`, { json: { webhook: { active: true } } })).body).toMatchObject({ active: true, disabled_reason: null, consecutive_failures: 0 });
  });

  it('the started worker delivers on its own and stops cleanly', async () => {
    script.set('/live', [200]);
    const { id } = await register('/live', ['note.created']);
    worker.start();
    await manager.client.post('/api/v1/notes', { json: { note: { title: 'Live', team: 'sent' } } });
    await app.settle();
    for (let i = 0; i < 200 && received.filter((request) => request.path === '/live').length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    await worker.stop();
    expect(received.filter((request) => request.path === '/live')).toHaveLength(1);
    expect((await deliveries(id))[0]).toMatchObject({ succeeded: true, attempt: 1 });
  });

  it('with the guard on, refuses at delivery time an internal address (the URL was registered while allowed)', async () => {
    script.set('/guarded', [200]);
    const { id } = await register('/guarded', ['note.created']);
    const guarded = new WebhookWorker(app.database.orm, { ...app.config.webhooks, allowPrivate: false, maxAttempts: 1 }, createLogger('silent'));
    await manager.client.post('/api/v1/notes', { json: { note: { title: 'Guarded', team: 'sent' } } });
    await drain(id, guarded);
    expect(received.filter((request) => request.path === '/guarded')).toHaveLength(0);
    const [entry] = await deliveries(id);
    expect(entry).toMatchObject({ succeeded: false, status_code: null, attempt: 1 });
    expect(entry.error).toMatch(/^refused: 127\.0\.0\.1 is a loopback/);
  });

  it('two workers (two processes on PostgreSQL: their own connections) never send one message twice', async () => {
    script.set('/shared', [200]);
    const { id } = await register('/shared', ['note.created']);
    for (let i = 0; i < 25; i += 1) await manager.client.post('/api/v1/notes', { json: { note: { title: `Shared ${i}`, team: 'sent' } } });
    const second = await openSecondConnection(app.database);
    const other = new WebhookWorker(second.orm, app.config.webhooks, createLogger('silent'));
    try {
      for (let round = 0; round < 20 && (await outboxSize(id)) > 0; round += 1) await Promise.all([worker.runOnce(), other.runOnce()]);
    } finally {
      await second.close();
    }
    const ids = received.filter((request) => request.path === '/shared').map((request) => request.headers['webhook-id']);
    expect(ids).toHaveLength(25);
    expect(new Set(ids).size).toBe(25);
    expect((await deliveries(id)).every((entry: { attempt: number; succeeded: boolean }) => entry.attempt === 1 && entry.succeeded)).toBe(true);
  });

  it('backs off exponentially with jitter, up to the cap', () => {
    const settings = { retryBaseMs: 1000, retryMaxMs: 10_000 };
    for (const [attempt, plain] of [[1, 1000], [2, 2000], [3, 4000], [4, 8000], [5, 10_000], [30, 10_000]] as const) {
      const delay = backoff(attempt, settings);
      expect(delay).toBeGreaterThanOrEqual(plain * 0.75);
      expect(delay).toBeLessThanOrEqual(plain * 1.25);
    }
  });
});
