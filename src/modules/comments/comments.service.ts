// Comments: writing them (with their mentions and notifications, in one transaction), deleting them, and loading
// what presenting a list of them needs in a fixed number of queries however many there are.
import { sql, type Loaded } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound, payloadTooLarge, unprocessable, type FieldError } from '../errors.ts';
import { can } from '../access/policy.ts';
import { rolesOfUsersInTeam } from '../access/roles.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import { foldCase } from '../text/fold.ts';
import { User } from '../users/user.entity.ts';
import { Comment, type CommentedObject } from './comment.entity.ts';
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
 * The users named in `mentions[]`, each once: usernames match by their foldCase key (text/fold.ts, compared with the
 * stored `users.username_key`, as getUser finds them: `ＫＩＭ` names Kim), repeats collapse, empty entries (a legacy
 * form's bare `mentions[]=`) are ignored. An unknown username, or a user who may not read the note, answers 422
 * naming every such entry by its position in the request.
 */
async function findMentionedUsers(em: EntityManager, usernames: readonly string[], note: Note): Promise<User[]> {
  const firstIndex = new Map<string, number>();
  usernames.forEach((username, index) => {
    const key = foldCase(username);
    if (username !== '' && !firstIndex.has(key)) firstIndex.set(key, index);
  });
  if (firstIndex.size === 0) return [];
  const users = await em.find(User, { [sql.ref('username_key')]: { $in: [...firstIndex.keys()] } });
  const byName = new Map(users.map((user) => [foldCase(user.username), user]));
  const roles = await rolesOfUsersInTeam(em, note.team.id, users.map((user) => user.id));
  const unknown: FieldError[] = [];
  const cannotRead: FieldError[] = [];
  const found: User[] = [];
  for (const [key, index] of firstIndex) {
    const user = byName.get(key);
    const pointer = `/mentions/${index}`;
    if (!user) unknown.push({ pointer, detail: `no user is named "${usernames[index]}"` });
    else if (!can('note.read', { role: roles.get(user.id), callerId: user.id }, note)) cannotRead.push({ pointer, detail: `${user.username} may not read this note` });
    else found.push(user);
  }
  const errors = [...unknown, ...cannotRead];
  if (errors.length > 0) {
    // unknown usernames first: a typo is the likelier mistake
    throw unprocessable(unknown.length > 0 ? 'unknown_user' : 'cannot_read_note', `cannot mention: ${errors.map((error) => error.detail).join('; ')}`, errors);
  }
  return found;
}

/**
 * A comment on `target` (the note itself, one of its pages, issues or requests), with its mentions (the users
 * found, for presenting it). The size limit, the mention checks and the event are the same for every kind.
 */
export async function createComment(em: EntityManager, author: Actor, note: Note, target: CommentedObject, input: NewComment): Promise<{ comment: Comment; mentioned: User[] }> {
  checkCommentSize(input.comment);
  return em.transactional(async (tx) => {
    const mentioned = await findMentionedUsers(tx, input.mentions ?? [], note);
    const comment = tx.create(Comment, {
      type: target.type,
      note: note.id,
      page: target.type === 'page' ? target.page.id : null,
      issue: target.type === 'issue' ? target.issue.id : null,
      request: target.type === 'request' ? target.request.id : null,
      user: author.id,
      body: input.comment,
      mentions: mentioned.map((user) => user.id),
      viaClient: author.via?.clientId ?? null,
      viaApp: author.via?.name ?? null,
    });
    await tx.flush();
    await recordEvent(tx, { type: 'comment.created', actor: author, note, comment, target, mentioned });
    // presented in a stable order, as a later read shows them: by user id
    return { comment, mentioned: [...mentioned].sort((a, b) => a.id - b.id) };
  });
}

// Ids are PostgreSQL `integer`: a larger number names nothing (and must not reach the database as one).
const LARGEST_ID = 2_147_483_647;

/** Oldest first; ids break ties between comments written in the same second. */
export const oldestFirst = { createdAt: 'asc', id: 'asc' } as const;


/** The comment `id` if it is on `target` in `note`, else 404. */
export async function findCommentOn(em: EntityManager, note: Note, target: CommentedObject, id: number): Promise<Comment> {
  const comment = Number.isSafeInteger(id) && id > 0 && id <= LARGEST_ID
    ? await em.findOne(Comment, { id, ...commentsOn(note, target) })
    : null;
  if (!comment) throw notFound('comment');
  return comment;
}

/** The filter of the comments on `target`. */
export function commentsOn(note: Note, target: CommentedObject) {
  switch (target.type) {
    case 'page':
      return { type: 'page' as const, page: target.page.id };
    case 'note':
      return { type: 'note' as const, note: note.id };
    case 'issue':
      return { type: 'issue' as const, issue: target.issue.id };
    case 'request':
      return { type: 'request' as const, request: target.request.id };
  }
}

/** Deletes a comment; its mentions and notifications go with it. */
export async function deleteComment(em: EntityManager, actor: Actor, note: Note, target: CommentedObject, comment: Comment): Promise<void> {
  await em.transactional(async (tx) => {
    await recordEvent(tx, { type: 'comment.deleted', actor, note, comment, target });
    await tx.flush();
    await tx.nativeDelete(Comment, { id: comment.id });
  });
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
    author: comment.user,
    mentions: comment.mentions.getItems().sort((a, b) => a.id - b.id),
    caller,
    target,
  }));
}
