// Comments: writing them (with their mentions and notifications, in one transaction), deleting them, and loading
// what presenting a list of them needs in a fixed number of queries however many there are.
import { sql, type Loaded } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { forbidden, payloadTooLarge, unprocessable, type FieldError } from '../../http/errors.ts';
import { commentPolicy, notePolicy, type Role } from '../access/policy.ts';
import { rolesOfUsersInTeam } from '../access/roles.ts';
import type { Note } from '../notes/note.entity.ts';
import { notifyPageComment } from '../notifications/notifications.service.ts';
import type { Page } from '../pages/page.entity.ts';
import { User } from '../users/user.entity.ts';
import { Comment } from './comment.entity.ts';
import type { CommentTarget, CommentView } from './comment.presenter.ts';

/** The largest comment body, in UTF-8 bytes (the OpenAPI document's CommentInput says the same). */
export const COMMENT_BODY_BYTES = 64 * 1024;

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
  const roles = await rolesOfUsersInTeam(em, note.team.id, users.map((user) => user.id));
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
