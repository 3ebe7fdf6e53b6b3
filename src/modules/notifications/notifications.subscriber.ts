// Producing notifications, from the domain events the services record (in the same transaction). Who hears of what
// lives here and nowhere else. Never for one's own actions, at most one notification per user per change, and all
// the notifications of one change written in one statement however many users they go to.
import { requestLabel } from '../requests/request.presenter.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import { can } from '../access/policy.ts';
import { rolesOfUsersInTeam } from '../access/roles.ts';
import type { Comment, CommentedObject } from '../comments/comment.entity.ts';
import { subscribe } from '../events/events.ts';
import type { Actor, DomainEvent } from '../events/domain-events.ts';
import type { Issue } from '../issues/issue.entity.ts';
import { issueLabel } from '../issues/issue.presenter.ts';
import { PageVersion } from '../pages/page.entity.ts';
import type { Note } from '../notes/note.entity.ts';
import { Membership } from '../teams/team.entity.ts';
import { Notification, type NotificationEvent, type NotificationType } from './notification.entity.ts';

const NOTIFICATION_TITLE_LENGTH = 512;

function notificationTitle(text: string): string {
  return text.length <= NOTIFICATION_TITLE_LENGTH ? text : `${text.slice(0, NOTIFICATION_TITLE_LENGTH - 1)}…`;
}

function displayName(actor: Actor): string {
  return actor.name || actor.username;
}

type Recipient = { userId: number; event: NotificationEvent; title: string };
type About = { type: NotificationType; note: Note; pageId?: number | null; issueId?: number | null; requestId?: number | null; commentId?: number | null };

/**
 * Writes one notification per recipient in a single multi-row insert (a comment mentioning 50 users is one
 * statement, not 50). The actor never hears of their own change, and a user is listed once (callers keep the first).
 */
export async function notify(em: EntityManager, from: Actor, about: About, recipients: readonly Recipient[]): Promise<void> {
  const seen = new Set<number>([from.id]);
  const now = currentTime();
  const rows = [];
  for (const recipient of recipients) {
    if (seen.has(recipient.userId)) continue;
    seen.add(recipient.userId);
    rows.push({
      user: recipient.userId,
      fromUser: from.id,
      event: recipient.event,
      type: about.type,
      note: about.note.id,
      page: about.pageId ?? null,
      issue: about.issueId ?? null,
      request: about.requestId ?? null,
      comment: about.commentId ?? null,
      title: notificationTitle(recipient.title),
      isRead: false,
      createdAt: now,
      updatedAt: now,
    });
  }
  if (rows.length > 0) await em.insertMany(Notification, rows);
}

/** `new_note`: every other member and manager of the note's team hears of a note created in it. */
async function notifyNewNote(em: EntityManager, note: Note, author: Actor): Promise<void> {
  const memberships = await em.find(Membership, { team: note.team.id, user: { $ne: author.id } }, { fields: ['user'] });
  const title = `${displayName(author)} created the note "${note.title}"`;
  await notify(em, author, { type: 'note', note }, memberships.map((membership) => ({ userId: membership.user.id, event: 'new_note', title })));
}

type CommentedSummary = { authorId: number | undefined; title: string; pageId: number | null; issueId: number | null; requestId?: number };

/**
 * Who wrote the commented object (the one told of a `comment` on it), and its title, per kind of commented object:
 * a note's author, whoever wrote a page's first version, an issue's creator, a request's author.
 */
async function commentedObject(em: EntityManager, note: Note, target: CommentedObject): Promise<CommentedSummary> {
  switch (target.type) {
    case 'note':
      return { authorId: note.user.id, title: note.title, pageId: null, issueId: null };
    case 'page': {
      const firstVersion = await em.findOne(PageVersion, { page: target.page.id, index: 1 }, { fields: ['user'] });
      return { authorId: firstVersion?.user.id, title: target.page.title, pageId: target.page.id, issueId: null };
    }
    case 'issue':
      return { authorId: target.issue.fromUser.id, title: issueLabel(target.issue), pageId: null, issueId: target.issue.id };    case 'request':
      return { authorId: target.request.user.id, title: requestLabel(target.request.index), pageId: null, issueId: null, requestId: target.request.id };
  }
}

/**
 * `mention` to each mentioned user and `comment` to the commented object's author (while they may still read the
 * note); never to the commenter, and at most one per user: a mention wins over `comment`.
 */
async function notifyComment(em: EntityManager, comment: Comment, note: Note, target: CommentedObject, author: Actor, mentioned: readonly Actor[]): Promise<void> {
  const object = await commentedObject(em, note, target);
  const who = displayName(author);
  const recipients: Recipient[] = mentioned.map((user) => ({ userId: user.id, event: 'mention', title: `${who} mentioned you in a comment on "${object.title}"` }));
  const authorId = object.authorId;
  if (authorId !== undefined && authorId !== author.id && !mentioned.some((user) => user.id === authorId)) {
    const role = (await rolesOfUsersInTeam(em, note.team.id, [authorId])).get(authorId);
    if (can('note.read', { role, callerId: authorId }, note)) recipients.push({ userId: authorId, event: 'comment', title: `${who} commented on "${object.title}"` });
  }
  await notify(em, author, { type: target.type, note, pageId: object.pageId, issueId: object.issueId, requestId: object.requestId ?? null, commentId: comment.id }, recipients);
}

/** `assign`: the user an issue was just assigned to hears of it, unless they assigned it to themselves. */
async function notifyAssignee(em: EntityManager, note: Note, issue: Issue, assignee: Actor | null, actor: Actor): Promise<void> {
  if (!assignee) return;
  const title = `${displayName(actor)} assigned you the issue #${issue.index} "${issue.title}"`;
  await notify(em, actor, { type: 'issue', note, issueId: issue.id }, [{ userId: assignee.id, event: 'assign', title }]);
}

/**
 * Requests: `request` to every manager of the original's team on creation; `close` and `merge` to the request's
 * author when someone else closes or merges it.
 */
async function notifyRequest(em: EntityManager, event: Extract<DomainEvent, { type: `request.${string}` }>): Promise<void> {
  const { actor, note, request, author } = event;
  const who = displayName(actor);
  const label = `request #${request.index} to "${note.title}"`;
  const recipients: Recipient[] = [];
  if (event.type === 'request.created') {
    const managers = await em.find(Membership, { team: note.team.id, role: 'manager', user: { $ne: actor.id } }, { fields: ['user'] });
    for (const manager of managers) recipients.push({ userId: manager.user.id, event: 'request', title: `${who} opened ${label}` });
  } else if (event.type !== 'request.opened' && author.id !== actor.id) {
    const merged = event.type === 'request.merged';
    recipients.push({ userId: author.id, event: merged ? 'merge' : 'close', title: `${who} ${merged ? 'merged' : 'closed'} your ${label}` });
  }
  await notify(em, actor, { type: 'request', note, requestId: request.id }, recipients);
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
        return notifyComment(em, event.comment, event.note, event.target, event.actor, event.mentioned);
      case 'request.created':
      case 'request.closed':
      case 'request.merged':
        return notifyRequest(em, event);
      default:
        return undefined;
    }
  });
}
