// A team's webhooks: registering, changing and deleting them, and reading their delivery log. Permissions are the
// handlers' (team.manage); every query here is bounded to the team in scope.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebhookInput } from '../../../generated/client/types.gen.ts';
import { badRequest, conflict, notFound, unprocessable } from '../errors.ts';
import type { Pagination } from '../../http/pagination.ts';
import type { Team } from '../teams/team.entity.ts';
import type { User } from '../users/user.entity.ts';
import { checkWebhookHost, parseWebhookUrl, WebhookUrlError } from './address-guard.ts';
import { isWebhookEvent } from './webhook-events.ts';
import { Webhook, WebhookDelivery } from './webhook.entity.ts';
import { deleteOutboxOfWebhook, deleteTeamWebhook, lockTeamRow } from './webhooks.repository.ts';

export const WEBHOOKS_PER_TEAM = 20;

type Fields = NonNullable<WebhookInput['webhook']>;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

function checkSecret(secret: string): void {
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
  if (bytes.length < 24 || bytes.length > 128) throw badRequest('the secret must be the base64 of 24 to 128 bytes', [{ pointer: '/webhook/secret', detail: 'must be whsec_ and the base64 of 24 to 128 bytes' }]);
}

/** The kinds asked for: [] for all (`*`, or none given); 422 `unknown_event` for a kind that does not exist. */
function eventKinds(events: readonly string[]): string[] {
  if (events.includes('*')) return [];
  const unknown = events.flatMap((kind, index) => (isWebhookEvent(kind) ? [] : [{ pointer: `/webhook/events/${index}`, detail: `unknown event kind "${kind}"` }]));
  if (unknown.length > 0) throw unprocessable('unknown_event', unknown[0]!.detail, unknown);
  return [...new Set(events)].sort();
}

async function checkedUrl(raw: string, allowPrivate: boolean): Promise<string> {
  try {
    const url = parseWebhookUrl(raw);
    await checkWebhookHost(url, allowPrivate);
    return url.toString();
  } catch (error) {
    if (error instanceof WebhookUrlError) throw unprocessable('invalid_webhook_url', error.message, [{ pointer: '/webhook/url', detail: error.message }]);
    throw error;
  }
}

export async function findWebhooks(em: EntityManager, team: Team, page: Pagination) {
  const [webhooks, total] = await em.findAndCount(Webhook, { team: team.id }, { orderBy: { id: 'asc' }, limit: page.perPage, offset: page.offset });
  return { webhooks, total };
}

export async function findWebhook(em: EntityManager, team: Team, id: number): Promise<Webhook> {
  const webhook = await em.findOne(Webhook, { id, team: team.id });
  if (!webhook) throw notFound('webhook');
  return webhook;
}

export async function createWebhook(em: EntityManager, creator: User, team: Team, fields: Fields | undefined, allowPrivate: boolean) {
  if (fields?.url === undefined) throw badRequest('webhook[url] is required', [{ pointer: '/webhook/url', detail: 'is required' }]);
  if (fields.secret !== undefined) checkSecret(fields.secret);
  const events = eventKinds(fields.events ?? []);
  const url = await checkedUrl(fields.url, allowPrivate);
  const secret = fields.secret ?? newSecret();
  const webhook = await em.transactional(async (tx) => {
    await lockTeamRow(tx, team.id);
    if ((await tx.count(Webhook, { team: team.id })) >= WEBHOOKS_PER_TEAM) {
      throw conflict('already_exists', `a team may have at most ${WEBHOOKS_PER_TEAM} webhooks; delete one first`);
    }
    return tx.create(Webhook, { team: team.id, url, secret, events, active: fields.active ?? true, disabledReason: null, consecutiveFailures: 0, createdBy: creator.id });
  });
  return { webhook, secret };
}

export async function updateWebhook(em: EntityManager, team: Team, id: number, fields: Fields | undefined, allowPrivate: boolean) {
  const webhook = await findWebhook(em, team, id);
  const changes = fields ?? {};
  if (changes.secret !== undefined) checkSecret(changes.secret);
  const events = changes.events !== undefined ? eventKinds(changes.events) : undefined;
  const url = changes.url !== undefined ? await checkedUrl(changes.url, allowPrivate) : undefined;
  // only the fields changed here are written (the worker may be counting failures meanwhile)
  const updated = await em.transactional(async (tx) => {
    const row = await tx.findOneOrFail(Webhook, webhook.id);
    if (url !== undefined) row.url = url;
    if (events !== undefined) row.events = events;
    if (changes.secret !== undefined) row.secret = changes.secret;
    if (changes.active === true && !row.active) {
      Object.assign(row, { active: true, disabledReason: null, consecutiveFailures: 0 });
    } else if (changes.active === false && row.active) {
      Object.assign(row, { active: false, disabledReason: null });
      await deleteOutboxOfWebhook(tx, row.id);
    }
    return row;
  });
  return { webhook: updated, secret: changes.secret };
}

export async function deleteWebhook(em: EntityManager, team: Team, id: number): Promise<void> {
  if (!(await deleteTeamWebhook(em, team.id, id))) throw notFound('webhook');
}

export async function findDeliveries(em: EntityManager, team: Team, id: number, page: Pagination) {
  const webhook = await findWebhook(em, team, id);
  const [deliveries, total] = await em.findAndCount(WebhookDelivery, { webhook: webhook.id }, { orderBy: { id: 'desc' }, limit: page.perPage, offset: page.offset });
  return { deliveries, total };
}
