import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { createIssueComment, deleteIssueComment, listIssueComments } from '../../generated/client/index.ts';
import { Comment } from '../../src/modules/comments/comment.entity.ts';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import type { TestApp } from '../support/app.ts';
import { notificationsOf as notificationsOfComment, startCommentCast, expectCommentRefusals } from '../support/comments.ts';
import { anonymous, makeIssue, makeNote, type Actor } from '../support/factories.ts';

let app: TestApp;
let manager: Actor, member: Actor, colleague: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  ({ app, manager, member, colleague, outsider, reader } = await startCommentCast('desk', { manager: 'ida', member: 'ivo', outsider: 'ines', reader: 'ira', colleague: 'ilse' }));
});
afterAll(async () => app?.close());

let counter = 0;
/** Issue #1 of a fresh note of `desk`: the note written by `colleague`, the issue by `member` (told of comments). */
async function freshIssue(options: { isPrivate?: boolean } = {}) {
  counter += 1;
  const note = await makeNote(app, 'desk', colleague.user, { slug: `board-${counter}`, isPrivate: options.isPrivate ?? false });
  const issue = await makeIssue(app, note, member, { title: `Problem ${counter}` });
  return { note, issue, issueUrl: `/api/v1/desk/${note.slug}/issues/${issue.index}`, url: `/api/v1/desk/${note.slug}/issues/${issue.index}/comments` };
}
const notificationsOf = (commentId: number) => notificationsOfComment(app, commentId, 'issue');

describe('createIssueComment', () => {
  it('stores the comment on the issue, embeds the issue, notifies the mentioned and the issue creator, never the actor, and logs it', async () => {
    const { note, issue, issueUrl, url } = await freshIssue();
    const answer = await outsider.client.post(url, { json: { comment: { comment: 'seen it @ida' }, mentions: ['IDA', 'ilse', 'ines'] } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ comment: 'seen it @ida', type: 'issue', can_delete: true, user_id: outsider.user.id, model: 'comment' });
    expect(answer.body).not.toHaveProperty('page');
    expect(answer.body.issue).toEqual({ ...(await outsider.client.get(issueUrl)).body });
    expect(answer.body.mentions.map((user: { username: string }) => user.username)).toEqual(['ida', 'ines', 'ilse']);
    const stored = await app.em().findOneOrFail(Comment, answer.body.id);
    expect([stored.type, stored.note.id, stored.issue?.id, stored.page, stored.body]).toEqual(['issue', note.id, issue.id, null, 'seen it @ida']);
    expect(await notificationsOf(answer.body.id)).toEqual([
      [manager.user.id, 'mention', 'issue', issue.id],
      [colleague.user.id, 'mention', 'issue', issue.id],
      [member.user.id, 'comment', 'issue', issue.id],
    ]);
    const logged = await app.em().findOneOrFail(Log, { comment: answer.body.id });
    expect([logged.type, logged.action, logged.issue?.id, logged.summary]).toEqual(['comment', 'create', issue.id, { comment_id: answer.body.id, on: 'issue', issue_id: issue.id, index: 1, title: issue.title }]);
  });

  it('shows the issue in the notification and in the activity log of those told', async () => {
    const { issue, url } = await freshIssue();
    const answer = await outsider.client.post(url, { json: { comment: { comment: 'ping' }, mentions: ['ida'] } });
    const notifications = await manager.client.get('/api/v1/notifications');
    const told = notifications.body.find((item: { issue?: { id: number } }) => item.issue?.id === issue.id);
    expect(told).toMatchObject({ event: 'mention', type: 'issue', from_user: { username: 'ines' }, title: `ines Name mentioned you in a comment on "Issue #1 ${issue.title}"` });
    const byCreator = (await member.client.get('/api/v1/notifications')).body.find((item: { issue?: { id: number } }) => item.issue?.id === issue.id);
    expect(byCreator).toMatchObject({ event: 'comment', type: 'issue', issue: { id: issue.id, label: `Issue #1 ${issue.title}` } });
    const logs = await manager.client.get('/api/v1/logs', { query: { team: 'desk' } });
    const entry = logs.body.find((item: { type: string; comment?: { id: number } }) => item.type === 'comment' && item.comment?.id === answer.body.id);
    expect(entry).toMatchObject({ action: 'create', comment: { type: 'issue', issue: { id: issue.id } } });
    const issueEntry = logs.body.find((item: { type: string; issue?: { id: number } }) => item.type === 'issue' && item.issue?.id === issue.id);
    expect(issueEntry).toMatchObject({ action: 'create', issue: { index: 1 } });
  });

  it('answers 401, 404 for another team\'s private note or an unknown issue, 403 for a read token, 400, 413 and 422, storing nothing', async () => {
    const { note, url } = await freshIssue({ isPrivate: true });
    expect((await member.client.post(url.replace('/issues/1/', '/issues/2/'), { json: { comment: { comment: 'x' } } })).status).toBe(404);
    expect((await member.client.post(url.replace('/issues/1/', '/issues/0/'), { json: { comment: { comment: 'x' } } })).status).toBe(404);
    await expectCommentRefusals(app, { member, outsider, reader }, url, note.id, 'ines');
  });

  it('accepts a legacy form with a bare mentions[] key', async () => {
    const { url } = await freshIssue();
    const own = await member.client.post(url, { form: 'comment%5Bcomment%5D=mine&mentions%5B%5D' });
    expect(own.status, own.text).toBe(200);
    expect(own.body.mentions).toEqual([]);
    expect(await notificationsOf(own.body.id)).toEqual([]);
  });
});

describe('listIssueComments', () => {
  it('lists the issue\'s comments oldest first, paginated, with can_delete; comments on the note or other issues are not listed', async () => {
    const { note, url } = await freshIssue();
    await makeIssue(app, note, member, { title: 'another' });
    await outsider.client.post(url.replace('/issues/1/', '/issues/2/'), { json: { comment: { comment: 'elsewhere' } } });
    await outsider.client.post(`/api/v1/desk/${note.slug}/comments`, { json: { comment: { comment: 'on the note' } } });
    for (const text of ['a', 'b', 'c']) await outsider.client.post(url, { json: { comment: { comment: text } } });
    const list = await member.client.get(url, { query: { per_page: '2' } });
    expect(list.status).toBe(200);
    expect(list.body.map((item: { comment: string }) => item.comment)).toEqual(['a', 'b']);
    expect(list.body.every((item: { can_delete: boolean; type: string }) => !item.can_delete && item.type === 'issue')).toBe(true);
    expect(list.headers.get('x-total-count')).toBe('3');
    expect((await manager.client.get(url)).body.every((item: { can_delete: boolean }) => item.can_delete)).toBe(true);
    expect((await member.client.get(url, { query: { page: '', per_page: '' } })).body).toHaveLength(3);
  });

  it('answers 401, 404 for a private note of another team or an unknown issue; a fixed number of queries for 1 or 30 comments', async () => {
    const { url: hidden } = await freshIssue({ isPrivate: true });
    expect((await anonymous(app).get(hidden)).status).toBe(401);
    expect((await outsider.client.get(hidden)).status).toBe(404);
    const { url } = await freshIssue();
    expect((await reader.client.get(url.replace('/issues/1/', '/issues/9/'))).status).toBe(404);
    await outsider.client.post(url, { json: { comment: { comment: 'first' }, mentions: ['ida'] } });
    await reader.client.get('/api/v1/me');
    const small = await app.countQueries(() => reader.client.get(url));
    for (let i = 0; i < 29; i += 1) await (i % 2 ? outsider : manager).client.post(url, { json: { comment: { comment: `c${i}` }, mentions: ['ilse'] } });
    const large = await app.countQueries(async () => expect((await reader.client.get(url)).body).toHaveLength(30));
    expect(large).toBe(small);
  });
});

describe('deleteIssueComment', () => {
  it('the author or a manager deletes (204, gone with its notifications); others 403; another issue\'s comment 404', async () => {
    const { note, url } = await freshIssue();
    const first = (await outsider.client.post(url, { json: { comment: { comment: 'one' }, mentions: ['ida'] } })).body;
    const second = (await outsider.client.post(url, { json: { comment: { comment: 'two' } } })).body;
    expect((await member.client.delete(`${url}/${first.id}`)).status).toBe(403);
    expect((await anonymous(app).delete(`${url}/${first.id}`)).status).toBe(401);
    await makeIssue(app, note, member, { title: 'second issue' });
    expect((await outsider.client.delete(`${url.replace('/issues/1/', '/issues/2/')}/${first.id}`)).status).toBe(404);
    expect((await outsider.client.delete(`/api/v1/desk/${note.slug}/comments/${first.id}`)).status).toBe(404);
    expect((await outsider.client.delete(`${url}/99999999`)).status).toBe(404);
    expect((await outsider.client.delete(`${url}/${first.id}`)).status).toBe(204);
    expect((await manager.client.delete(`${url}/${second.id}`)).status).toBe(204);
    expect(await app.em().count(Comment, { note: note.id })).toBe(0);
    expect(await app.em().count(Notification, { comment: first.id })).toBe(0);
    expect(await app.em().count(Log, { type: 'comment', action: 'delete', summary: { $contains: { comment_id: first.id } } } as never)).toBe(1);
    const { note: hiddenNote, url: hidden } = await freshIssue({ isPrivate: true });
    const secret = (await member.client.post(hidden, { json: { comment: { comment: 'secret' } } })).body;
    expect((await outsider.client.delete(`${hidden}/${secret.id}`)).status).toBe(404);
    expect(await app.em().count(Comment, { note: hiddenNote.id })).toBe(1);
  });

  it('works through the generated client: create, list, delete', async () => {
    const { note, issue } = await freshIssue();
    const client = createClient({ baseUrl: app.baseUrl, auth: () => colleague.token });
    const path = { team: 'desk', note: note.slug!, index: issue.index };
    const created = await createIssueComment({ client, path, body: { comment: { comment: 'via SDK' }, mentions: ['ida'] }, throwOnError: true });
    expect(created.data.issue?.id).toBe(issue.id);
    const listed = await listIssueComments({ client, path, throwOnError: true });
    expect(listed.data.map((item) => item.comment)).toEqual(['via SDK']);
    await deleteIssueComment({ client, path: { ...path, id: created.data.id }, throwOnError: true });
    expect(await app.em().count(Comment, { issue: issue.id })).toBe(0);
  });
});
