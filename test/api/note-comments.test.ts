import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { createNoteComment, listNoteComments } from '../../generated/client/index.ts';
import { Comment } from '../../src/modules/comments/comment.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import type { TestApp } from '../support/app.ts';
import { notificationsOf as notificationsOfComment, startCommentCast, expectCommentRefusals } from '../support/comments.ts';
import { anonymous, makeNote, makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let manager: Actor, member: Actor, colleague: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  ({ app, manager, member, colleague, outsider, reader } = await startCommentCast('chat', { manager: 'nina', member: 'nico', outsider: 'oona', reader: 'remy', colleague: 'cara' }));
});
afterAll(async () => app?.close());

let counter = 0;
/** A note of `chat` written by `member` (the note's author is told of comments on it). */
async function freshNote(options: { isPrivate?: boolean } = {}) {
  counter += 1;
  const note = await makeNote(app, 'chat', member.user, { slug: `topic-${counter}`, isPrivate: options.isPrivate ?? false });
  return { note, url: `/api/v1/chat/${note.slug}/comments` };
}
const notificationsOf = (commentId: number) => notificationsOfComment(app, commentId, 'page');

describe('createNoteComment', () => {
  it('stores the comment on the note, embeds the note, notifies the mentioned and the note author, never the actor', async () => {
    const { note, url } = await freshNote();
    const answer = await outsider.client.post(url, { json: { comment: { comment: 'hello @nina' }, mentions: ['NINA', 'cara', 'oona'] } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ comment: 'hello @nina', type: 'note', can_delete: true, user_id: outsider.user.id, model: 'comment' });
    expect(answer.body).not.toHaveProperty('page');
    expect(answer.body.note).toEqual((await outsider.client.get(`/api/v1/chat/${note.slug}`)).body);
    expect(answer.body.mentions.map((user: { username: string }) => user.username)).toEqual(['nina', 'oona', 'cara']);
    const stored = await app.em().findOneOrFail(Comment, answer.body.id);
    expect([stored.type, stored.note.id, stored.page, stored.body]).toEqual(['note', note.id, null, 'hello @nina']);
    expect(await notificationsOf(answer.body.id)).toEqual([
      [manager.user.id, 'mention', 'note', null],
      [colleague.user.id, 'mention', 'note', null],
      [member.user.id, 'comment', 'note', null],
    ]);
  });

  it('a mentioned author gets one mention; the author commenting is told nothing', async () => {
    const { url } = await freshNote();
    const mentioned = await outsider.client.post(url, { json: { comment: { comment: 'x' }, mentions: ['nico'] } });
    expect(await notificationsOf(mentioned.body.id)).toEqual([[member.user.id, 'mention', 'note', null]]);
    const own = await member.client.post(url, { form: 'comment%5Bcomment%5D=mine&mentions%5B%5D' });
    expect(own.status, own.text).toBe(200);
    expect(await notificationsOf(own.body.id)).toEqual([]);
  });

  it('answers 401, 404 for another team\'s private note, 403 for a read token, 400, 413 and 422, storing nothing', async () => {
    const { note, url } = await freshNote({ isPrivate: true });
    await expectCommentRefusals(app, { member, outsider, reader }, url, note.id, 'oona');
  });

  it('writes the notifications of 50 mentions in one statement', async () => {
    const { url } = await freshNote();
    const many = await Promise.all(Array.from({ length: 49 }, (_, index) => makeUser(app, `crowd${index}`)));
    await member.client.get('/api/v1/me');
    const one = await app.countQueries(() => member.client.post(url, { json: { comment: { comment: 'one' }, mentions: ['crowd0'] } }));
    let answer: any;
    const fifty = await app.countQueries(async () => {
      answer = await member.client.post(url, { json: { comment: { comment: 'all' }, mentions: [...many.map((actor) => actor.user.username), 'nina'] } });
    });
    expect(answer.status, answer.text).toBe(200);
    expect(await app.em().count(Notification, { comment: answer.body.id })).toBe(50);
    expect(fifty).toBe(one);
  });
});

describe('listNoteComments', () => {
  it('lists the note\'s comments oldest first, paginated, with can_delete for the caller; page comments are not listed', async () => {
    const { url } = await freshNote();
    for (const text of ['a', 'b', 'c']) await outsider.client.post(url, { json: { comment: { comment: text } } });
    const list = await member.client.get(url, { query: { per_page: '2' } });
    expect(list.status).toBe(200);
    expect(list.body.map((item: { comment: string }) => item.comment)).toEqual(['a', 'b']);
    expect(list.body.every((item: { can_delete: boolean; type: string }) => !item.can_delete && item.type === 'note')).toBe(true);
    expect(list.headers.get('x-total-count')).toBe('3');
    expect((await manager.client.get(url)).body.every((item: { can_delete: boolean }) => item.can_delete)).toBe(true);
    expect((await member.client.get(url, { query: { page: '', per_page: '' } })).body).toHaveLength(3);
  });

  it('answers 401 and 404 for a private note of another team; the same fixed number of queries for 1 or 30 comments', async () => {
    const { url: hidden } = await freshNote({ isPrivate: true });
    expect((await anonymous(app).get(hidden)).status).toBe(401);
    expect((await outsider.client.get(hidden)).status).toBe(404);
    const { url } = await freshNote();
    await outsider.client.post(url, { json: { comment: { comment: 'first' }, mentions: ['nina'] } });
    await reader.client.get('/api/v1/me');
    const small = await app.countQueries(() => reader.client.get(url));
    for (let i = 0; i < 29; i += 1) await (i % 2 ? outsider : manager).client.post(url, { json: { comment: { comment: `c${i}` }, mentions: ['cara'] } });
    const large = await app.countQueries(async () => expect((await reader.client.get(url)).body).toHaveLength(30));
    expect(large).toBe(small);
  });

  it('works through the generated client', async () => {
    const { note } = await freshNote();
    const client = createClient({ baseUrl: app.baseUrl, auth: () => colleague.token });
    const path = { team: 'chat', note: note.slug! };
    const created = await createNoteComment({ client, path, body: { comment: { comment: 'via SDK' }, mentions: ['nina'] }, throwOnError: true });
    expect(created.data.note?.id).toBe(note.id);
    const listed = await listNoteComments({ client, path, throwOnError: true });
    expect(listed.data.map((item) => item.comment)).toEqual(['via SDK']);
  });
});

describe('deleteNoteComment', () => {
  it('the author or a manager deletes (204, gone with its notifications); others 403; another note\'s comment 404', async () => {
    const { note, url } = await freshNote();
    const first = (await outsider.client.post(url, { json: { comment: { comment: 'one' }, mentions: ['nina'] } })).body;
    const second = (await outsider.client.post(url, { json: { comment: { comment: 'two' } } })).body;
    expect((await member.client.delete(`${url}/${first.id}`)).status).toBe(403);
    expect((await anonymous(app).delete(`${url}/${first.id}`)).status).toBe(401);
    const { url: otherUrl } = await freshNote();
    expect((await outsider.client.delete(`${otherUrl}/${first.id}`)).status).toBe(404);
    expect((await outsider.client.delete(`${url}/99999999`)).status).toBe(404);
    expect((await outsider.client.delete(`${url}/${first.id}`)).status).toBe(204);
    expect((await manager.client.delete(`${url}/${second.id}`)).status).toBe(204);
    expect(await app.em().count(Comment, { note: note.id })).toBe(0);
    expect(await app.em().count(Notification, { comment: first.id })).toBe(0);
    const { note: hiddenNote, url: hidden } = await freshNote({ isPrivate: true });
    const secret = (await member.client.post(hidden, { json: { comment: { comment: 'secret' } } })).body;
    expect((await outsider.client.delete(`${hidden}/${secret.id}`)).status).toBe(404);
    expect(await app.em().count(Comment, { note: hiddenNote.id })).toBe(1);
  });
});
