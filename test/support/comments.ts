// The cast of the comment tests (page, note and issue comments): the app, counting statements, with a team's manager,
// member, outsider and read-only reader (makeScenario), plus a second member, `colleague`; usernames as given, since
// mentions and expectations spell them.
import { expect } from 'vitest';
import { Comment } from '../../src/modules/comments/comment.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { startTestApp, type TestApp } from './app.ts';
import { addMember, anonymous, makeUser, type Actor } from './factories.ts';
import { makeScenario } from './scenario.ts';

export type CommentCast = { app: TestApp; manager: Actor; member: Actor; colleague: Actor; outsider: Actor; reader: Actor };

export async function startCommentCast(
  team: string,
  usernames: { manager: string; member: string; outsider: string; reader: string; colleague: string },
): Promise<CommentCast> {
  const app = await startTestApp({}, { countQueries: true });
  const { colleague: colleagueName, ...scenarioNames } = usernames;
  const cast = await makeScenario(app, { team, usernames: scenarioNames });
  const colleague = await makeUser(app, colleagueName);
  await addMember(app, cast.team, colleague.user, 'member');
  return { app, manager: cast.manager, member: cast.member, colleague, outsider: cast.outsider, reader: cast.reader };
}

/** The notifications a comment caused: [user id, event, type, the page or issue they name (null for neither)]. */
export async function notificationsOf(app: TestApp, commentId: number, subject: 'page' | 'issue') {
  const rows = await app.em().find(Notification, { comment: commentId }, { orderBy: { id: 'asc' } });
  return rows.map((row) => [row.user.id, row.event, row.type, (subject === 'page' ? row.page?.id : row.issue?.id) ?? null]);
}

/**
 * What every kind of comment refuses, storing nothing: `url` is where comments on an object of a private note go
 * (readable by `member`, not by `outsider`, `reader` holding a read token); `stranger` names a user who may not read
 * it. 401 without a token, 404 for the outsider, 403 for the read token, 400 for an empty or unexpected body, 413
 * past 64 KiB, 422 for an unknown or an unreadable mention.
 */
export async function expectCommentRefusals(app: TestApp, cast: { member: Actor; outsider: Actor; reader: Actor }, url: string, noteId: number, stranger: string): Promise<void> {
  const { member, outsider, reader } = cast;
  expect((await anonymous(app).post(url, { json: { comment: { comment: 'x' } } })).status).toBe(401);
  expect((await outsider.client.post(url, { json: { comment: { comment: 'x' } } })).status).toBe(404);
  expect((await reader.client.post(url, { json: { comment: { comment: 'x' } } })).status).toBe(403);
  expect((await member.client.post(url, { json: { comment: { comment: '' } } })).status).toBe(400);
  expect((await member.client.post(url, { json: { comment: { comment: 'x', id: 3 } } })).status).toBe(400);
  expect((await member.client.post(url, { json: { comment: { comment: 'é'.repeat(32_769) } } })).status).toBe(413);
  const unknown = await member.client.post(url, { json: { comment: { comment: 'x' }, mentions: ['nobody-here'] } });
  expect([unknown.status, unknown.body.code]).toEqual([422, 'unknown_user']);
  const cannot = await member.client.post(url, { form: { 'comment[comment]': 'x', 'mentions[]': [stranger] } });
  expect([cannot.status, cannot.body.code, cannot.body.errors[0].pointer]).toEqual([422, 'cannot_read_note', '/mentions/0']);
  expect(await app.em().count(Comment, { note: noteId })).toBe(0);
}
