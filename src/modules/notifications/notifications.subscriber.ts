// Producing notifications, from the domain events the services record (in the same transaction). Who hears of what
// lives here and nowhere else. Never for one's own actions, at most one notification per user per change.
import type { EntityManager } from '@mikro-orm/postgresql';
import { can } from '../access/policy.ts';
import { rolesOfUsersInTeam } from '../access/roles.ts';
import type { Comment } from '../comments/comment.entity.ts';
import type { Issue } from '../issues/issue.entity.ts';
import { subscribe, type Actor, type DomainEvent } from '../events/events.ts';
import { PageVersion, type Page } from '../pages/page.entity.ts';
import type { Note } from '../notes/note.entity.ts';
import { Membership } from '../teams/team.entity.ts';
import { Notification, type NotificationEvent } from './notification.entity.ts';

const NOTIFICATION_TITLE_LENGTH = 512;

/** `new_note`: every other member and manager of the note's team hears of a note created in it. */
async function notifyNewNote(em: EntityManager, note: Note, author: Actor): Promise<void> {
  const memberships = await em.find(Membership, { team: note.team.id, user: { $ne: author.id } });
  for (const membership of memberships) {
    em.create(Notification, {
      user: membership.user.id,
      fromUser: author.id,
      event: 'new_note',
      type: 'note',
      note: note.id,
      page: null,
      issue: null,
      request: null,
      comment: null,
      title: `${author.name || author.username} created the note "${note.title}"`,
    });
  }
}

function notificationTitle(text: string): string {
  return text.length <= NOTIFICATION_TITLE_LENGTH ? text : `${text.slice(0, NOTIFICATION_TITLE_LENGTH - 1)}…`;
}

/**
 * `mention` to each mentioned user and `comment` to the page's author (whoever wrote its first version, while they
 * may still read the note); never to the commenter, and at most one per user: a mention wins over `comment`.
 */
async function notifyPageComment(em: EntityManager, comment: Comment, note: Note, page: Page, author: Actor, mentioned: readonly Actor[]): Promise<void> {
  const events = new Map<number, NotificationEvent>();
  for (const user of mentioned) events.set(user.id, 'mention');
  const firstVersion = await em.findOne(PageVersion, { page: page.id, index: 1 }, { fields: ['user'] });
  const pageAuthorId = firstVersion?.user.id;
  if (pageAuthorId !== undefined && !events.has(pageAuthorId)) {
    const role = (await rolesOfUsersInTeam(em, note.team.id, [pageAuthorId])).get(pageAuthorId);
    if (can('note.read', { role, callerId: pageAuthorId }, note)) events.set(pageAuthorId, 'comment');
  }
  events.delete(author.id);
  const who = author.name || author.username;
  for (const [userId, event] of events) {
    em.create(Notification, {
      user: userId,
      fromUser: author.id,
      event,
      type: 'page',
      note: note.id,
      page: page.id,
      issue: null,
      request: null,
      comment,
      title: notificationTitle(
        event === 'mention' ? `${who} mentioned you in a comment on "${page.title}"` : `${who} commented on "${page.title}"`,
      ),
    });
  }
}

/** `assign`: the user an issue was just assigned to hears of it, unless they assigned it to themselves. */
function notifyAssignee(em: EntityManager, note: Note, issue: Issue, assignee: Actor | null, actor: Actor): void {
  if (!assignee || assignee.id === actor.id) return;
  em.create(Notification, {
    user: assignee.id,
    fromUser: actor.id,
    event: 'assign',
    type: 'issue',
    note: note.id,
    page: null,
    issue: issue.id,
    request: null,
    comment: null,
    title: notificationTitle(`${actor.name || actor.username} assigned you the issue #${issue.index} "${issue.title}"`),
  });
}

/**
 * Requests: `request` to every manager of the original's team on creation; `close` and `merge` to the request's
 * author when someone else closes or merges it.
 */
async function notifyRequest(em: EntityManager, event: Extract<DomainEvent, { type: `request.${string}` }>): Promise<void> {
  const { actor, note, request, author } = event;
  const who = actor.name || actor.username;
  const label = `request #${request.index} to "${note.title}"`;
  const recipients: { userId: number; event: NotificationEvent; title: string }[] = [];
  if (event.type === 'request.created') {
    const managers = await em.find(Membership, { team: note.team.id, role: 'manager', user: { $ne: actor.id } }, { fields: ['user'] });
    for (const manager of managers) recipients.push({ userId: manager.user.id, event: 'request', title: `${who} opened ${label}` });
  } else if (event.type !== 'request.opened' && author.id !== actor.id) {
    const merged = event.type === 'request.merged';
    recipients.push({ userId: author.id, event: merged ? 'merge' : 'close', title: `${who} ${merged ? 'merged' : 'closed'} your ${label}` });
  }
  for (const recipient of recipients) {
    em.create(Notification, {
      user: recipient.userId,
      fromUser: actor.id,
      event: recipient.event,
      type: 'request',
      note: note.id,
      page: null,
      issue: null,
      request: request.id,
      comment: null,
      title: notificationTitle(recipient.title),
    });
  }
}

export function subscribeNotifications(): void {
  subscribe('notifications', async (em, event) => {
    switch (event.type) {
      case 'note.created':
        return notifyNewNote(em, event.note, event.actor);
      case 'issue.created':
      case 'issue.updated':
        return notifyAssignee(em, event.note, event.issue, event.assignee, event.actor);
      case 'comment.created':
        return notifyPageComment(em, event.comment, event.note, event.page, event.actor, event.mentioned);
      case 'request.created':
      case 'request.closed':
      case 'request.merged':
        return notifyRequest(em, event);
      default:
        return undefined;
    }
  });
}
