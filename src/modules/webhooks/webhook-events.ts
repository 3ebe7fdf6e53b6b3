// What a webhook is sent: the event kinds it may ask for, and the thin message for each domain event (ids and the
// actor, never the objects themselves: the receiver reads them through the API, with its own rights).
import type { DomainEvent, EventType } from '../events/events.ts';

/**
 * Every domain event of a team, by kind. `team.created` and `team.deleted` are left out: a team has no webhooks
 * before it exists, and its webhooks go with it.
 */
export const WEBHOOK_EVENTS = [
  'note.created', 'note.updated', 'note.deleted',
  'page.created', 'page.updated', 'page.restored', 'page.deleted',
  'comment.created', 'comment.deleted',
  'issue.created', 'issue.updated', 'issue.deleted',
  'attachment.created', 'attachment.deleted',
  'team.renamed',
  'membership.added', 'membership.changed', 'membership.removed',
  'fork.created', 'fork.pulled',
  'request.created', 'request.opened', 'request.closed', 'request.merged',
] as const satisfies readonly EventType[];

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
// a new domain event must be added above (or to the exclusions): this fails `tsc` until it is
type Unlisted = Exclude<EventType, WebhookEvent | 'team.created' | 'team.deleted'>;
const everyEventListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyEventListed;

const known = new Set<string>(WEBHOOK_EVENTS);
export const isWebhookEvent = (kind: string): kind is WebhookEvent => known.has(kind);

/** The team whose webhooks hear the event (none for a team's creation or deletion). */
export function teamOf(event: DomainEvent): number | undefined {
  if (event.type === 'team.created' || event.type === 'team.deleted') return undefined;
  return 'note' in event ? event.note.team.id : event.team.id;
}

type Data = Record<string, unknown>;

function dataOf(event: DomainEvent): Data {
  switch (event.type) {
    case 'note.created':
    case 'note.deleted':
      return { note_id: event.note.id };
    case 'note.updated':
      return { note_id: event.note.id, changed: event.changed };
    case 'page.created':
    case 'page.restored':
    case 'page.deleted':
      return { note_id: event.note.id, page_id: event.page.id };
    case 'page.updated':
      return { note_id: event.note.id, page_id: event.page.id, changed: event.changed };
    case 'comment.created':
    case 'comment.deleted': {
      const target = event.target;
      return {
        note_id: event.note.id,
        comment_id: event.comment.id,
        on: target.type,
        ...(target.type === 'page' ? { page_id: target.page.id } : {}),
        ...(target.type === 'issue' ? { issue_id: target.issue.id, issue_index: target.issue.index } : {}),
      };
    }
    case 'issue.created':
    case 'issue.deleted':
      return { note_id: event.note.id, issue_id: event.issue.id, issue_index: event.issue.index };
    case 'issue.updated':
      return { note_id: event.note.id, issue_id: event.issue.id, issue_index: event.issue.index, changed: event.changed };
    case 'attachment.created':
    case 'attachment.deleted':
      return { note_id: event.note.id, attachment_id: event.attachment.id };
    case 'team.created':
    case 'team.renamed':
    case 'team.deleted':
      return { changed: ['name'] };
    case 'membership.added':
    case 'membership.changed':
      return { user_id: event.user.id, role: event.role };
    case 'membership.removed':
      return { user_id: event.user.id };
    case 'fork.created':
    case 'fork.pulled':
      return { note_id: event.note.id, original_note_id: event.original.id };
    case 'request.created':
    case 'request.opened':
    case 'request.closed':
    case 'request.merged':
      return { note_id: event.note.id, request_id: event.request.id, request_index: event.request.index, from_note_id: event.request.fromNote.id };
  }
}

/** The message body, as sent: `{type, timestamp, data: {team_id, ..., actor}}`. */
export function messageBody(event: DomainEvent, teamId: number, at: Date): string {
  return JSON.stringify({
    type: event.type,
    timestamp: at.toISOString(),
    data: { team_id: teamId, ...dataOf(event), actor: { id: event.actor.id, username: event.actor.username } },
  });
}
