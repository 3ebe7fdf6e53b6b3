// Comments: writing them (with their mentions and notifications, in one transaction), deleting them, and loading
// what presenting a list of them needs in a fixed number of queries however many there are.
import { sql, type Loaded } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { forbidden, payloadTooLarge, unprocessable, type FieldError } from '../../http/errors.ts';
import { commentPolicy, notePolicy, type Role } from '../access/policy.ts';
import type { Note } from '../notes/note.entity.ts';
import { Notification, type NotificationEvent } from '../notifications/notification.entity.ts';
import { PageVersion, type Page } from '../pages/page.entity.ts';
import { Membership } from '../teams/team.entity.ts';
import { User } from '../users/user.entity.ts';
import { Comment } from './comment.entity.ts';
import type { CommentTarget, CommentView } from './comment.presenter.ts';

/** The largest comment body, in UTF-8 bytes (the OpenAPI document's CommentInput says the same). */
export const COMMENT_BODY_BYTES = 64 * 1024;

const NOTIFICATION_TITLE_LENGTH = 512;

/** 413 past 64 KiB of UTF-8: the schema cannot say it in bytes, so it is checked here for every kind of comment. */
export function checkCommentSize(body: string): void {
  if (Buffer.byteLength(body, 'utf8') > COMMENT_BODY_BYTES) {
    throw payloadTooLarge(`a comment is limited to ${COMMENT_BODY_BYTES} bytes of UTF-8`);
  }
}

export type NewComment = { comment: string; mentions?: readonly string[] | undefined };

/**
 * The users named in `mentions[]`, each once: usernames match case-insensitively, repeats collapse, empty entries
 * (a legacy form's bare `mentions[]=`) are ignored. An unknown username, or a user who may not read the note,
 * answers 422 naming every such entry by its position in the request.
 */
async function findMentionedUsers(em: EntityManager, usernames: readonly string[], note: Note): Promise<User[]> {
  const firstIndex = new Map<string, number>();
  usernames.forEach((username, index) => {
    const key = username.toLowerCase();
    if (username !== '' && !firstIndex.has(key)) firstIndex.set(key, index);
  });
  if (firstIndex.size === 0) return [];
  const users = await em.find(User, { [sql.lower('username')]: { $in: [...firstIndex.keys()] } });
  const byName = new Map(users.map((user) => [user.username.toLowerCase(), user]));
  const roles = await rolesInTeam(em, note.team.id, users.map((user) => user.id));
  const errors: FieldError[] = [];
  const found: User[] = [];
  for (const [key, index] of firstIndex) {
    const user = byName.get(key);
    const pointer = `/mentions/${index}`;
    if (!user) errors.push({ pointer, detail: `no user is named "${usernames[index]}"` });
    else if (!notePolicy.read(roles.get(user.id), note)) errors.push({ pointer, detail: `${user.username} may not read this note` });
    else found.push(user);
  }
  if (errors.length > 0) {
    throw unprocessable('unprocessable', `cannot mention: ${errors.map((error) => error.detail).join('; ')}`, errors);
  }
  return found;
}

/** The role in one team of each of the given users (absent: not in the team), in one query. */
async function rolesInTeam(em: EntityManager, teamId: number, userIds: readonly number[]): Promise<Map<number, Role>> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return new Map();
  const memberships = await em.find(Membership, { team: teamId, user: { $in: unique } });
  return new Map(memberships.map((membership) => [membership.user.id, membership.role]));
}

function notificationTitle(text: string): string {
  return text.length <= NOTIFICATION_TITLE_LENGTH ? text : `${text.slice(0, NOTIFICATION_TITLE_LENGTH - 1)}…`;
}

/**
 * `mention` to each mentioned user and `comment` to the page's author (whoever wrote its first version, while they
 * may still read the note); never to the commenter, and at most one per user: a mention wins over `comment`.
 */
async function notifyPageComment(em: EntityManager, comment: Comment, note: Note, page: Page, author: User, mentioned: readonly User[]): Promise<void> {
  const events = new Map<number, NotificationEvent>();
  for (const user of mentioned) events.set(user.id, 'mention');
  const firstVersion = await em.findOne(PageVersion, { page: page.id, index: 1 }, { fields: ['user'] });
  const pageAuthorId = firstVersion?.user.id;
  if (pageAuthorId !== undefined && !events.has(pageAuthorId)) {
    const role = (await rolesInTeam(em, note.team.id, [pageAuthorId])).get(pageAuthorId);
    if (notePolicy.read(role, note)) events.set(pageAuthorId, 'comment');
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

/** Anyone who may read the note may comment on its pages (the caller's read access is checked by the handler). */
export async function createPageComment(em: EntityManager, author: User, note: Note, page: Page, input: NewComment): Promise<Comment> {
  checkCommentSize(input.comment);
  return em.transactional(async (tx) => {
    const mentioned = await findMentionedUsers(tx, input.mentions ?? [], note);
    const comment = tx.create(Comment, {
      type: 'page',
      note: note.id,
      page: page.id,
      issue: null,
      user: author.id,
      body: input.comment,
      mentions: mentioned.map((user) => user.id),
    });
    await notifyPageComment(tx, comment, note, page, author, mentioned);
    await tx.flush();
    return comment;
  });
}

/** Its author and managers of the note's team may delete a comment; its mentions and notifications go with it. */
export async function deleteComment(em: EntityManager, callerId: number, role: Role, comment: Comment): Promise<void> {
  if (!commentPolicy.delete(role, { userId: comment.user.id }, callerId)) {
    throw forbidden("only the comment's author or a manager of the note's team may delete it");
  }
  await em.nativeDelete(Comment, { id: comment.id });
}

/** Views of comments on one object (`target`), for one caller: their mentions in one query, whatever their number. */
export async function loadCommentViews(
  em: EntityManager,
  caller: CommentView['caller'],
  comments: readonly Loaded<Comment, 'user'>[],
  target: CommentTarget,
): Promise<CommentView[]> {
  if (comments.length === 0) return [];
  await em.populate(comments as Loaded<Comment, 'user'>[], ['mentions']);
  return comments.map((comment) => ({
    comment,
    mentions: comment.mentions.getItems().sort((a, b) => a.id - b.id),
    caller,
    target,
  }));
}
