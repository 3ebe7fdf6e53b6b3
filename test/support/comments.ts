// The cast of the comment tests (page, note and issue comments): the app, counting statements, with a team's manager,
// member, outsider and read-only reader (makeScenario), plus a second member, `colleague`; usernames as given, since
// mentions and expectations spell them.
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { startTestApp, type TestApp } from './app.ts';
import { addMember, makeUser, type Actor } from './factories.ts';
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
