import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { createPageComment, deletePageComment, listPageComments } from '../../generated/client/index.ts';
import { Comment } from '../../src/modules/comments/comment.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import type { TestApp } from '../support/app.ts';
import { startCommentCast } from '../support/comments.ts';
import { anonymous, makeNote, makePage, makePageComment, type Actor } from '../support/factories.ts';

let app: TestApp;
let manager: Actor, member: Actor, colleague: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  ({ app, manager, member, colleague, outsider, reader } = await startCommentCast('talk', { manager: 'mona', member: 'milo', outsider: 'otto', reader: 'rita', colleague: 'cleo' }));
});
afterAll(async () => app?.close());

let counter = 0;
/** A note of the team `talk` with one page written by `member` (so `member` is the page's author). */
async function freshPage(options: { isPrivate?: boolean } = {}) {
  counter += 1;
  const note = await makeNote(app, 'talk', manager.user, { slug: `thread-${counter}`, isPrivate: options.isPrivate ?? false });
  const page = await makePage(app, note, member, { title: `Page ${counter}`, content: '<p>text</p>' });
  return { note, page, url: `/api/v1/talk/${note.slug}/${page.id}/comments` };
}

const storedMentions = async (commentId: number) =>
  (await app.em().execute<{ user_id: number }[]>('select user_id from comment_mentions where comment_id = ? order by user_id', [commentId])).map((row) => row.user_id);
const storedNotifications = async (commentId: number) =>
  (await app.em().find(Notification, { comment: commentId }, { orderBy: { id: 'asc' } })).map((notification) => ({
    user: notification.user.id,
    from: notification.fromUser.id,
    event: notification.event,
    type: notification.type,
    page: notification.page?.id,
    note: notification.note.id,
  }));
const commentsOn = (pageId: number) => app.em().count(Comment, { page: pageId });

describe('createPageComment', () => {
  it('stores the comment with its mentions, notifies the mentioned and the page author, and answers the comment', async () => {
    const { note, page, url } = await freshPage();
    const answer = await outsider.client.post(url, { json: { comment: { comment: '@mona <b>look</b>' }, mentions: ['MONA', 'mona', 'cleo'] } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const body = answer.body;
    expect(body).toMatchObject({
      comment: '@mona <b>look</b>',
      user_id: outsider.user.id,
      user: { username: 'otto', model: 'user' },
      can_delete: true,
      type: 'page',
      model: 'comment',
    });
    expect(body.created_at).toMatch(/\.000Z$/);
    expect(body).not.toHaveProperty('note');
    expect(body.mentions.map((user: { username: string }) => user.username)).toEqual(['mona', 'cleo']);
    // the page as getPage presents it, less what a summary leaves out: its text and its relatives
    const shown = await outsider.client.get(`/api/v1/talk/${note.slug}/${page.id}`);
    const { content, children, parent, version, ...summary } = shown.body;
    expect(body.page).toEqual(summary);
    expect([content, children, parent, version]).toEqual(['<p>text</p>', [], undefined, 1]);

    const stored = await app.em().findOneOrFail(Comment, body.id);
    expect([stored.type, stored.body, stored.note.id, stored.page?.id, stored.issue, stored.user.id]).toEqual(['page', '@mona <b>look</b>', note.id, page.id, null, outsider.user.id]);
    expect(await storedMentions(body.id)).toEqual([manager.user.id, colleague.user.id]);
    const base = { from: outsider.user.id, type: 'page', page: page.id, note: note.id };
    expect(await storedNotifications(body.id)).toEqual([
      { ...base, user: manager.user.id, event: 'mention' },
      { ...base, user: colleague.user.id, event: 'mention' },
      { ...base, user: member.user.id, event: 'comment' },
    ]);
  });

  it('never notifies the commenter, and notifies a mentioned page author once, with mention', async () => {
    const { page, url } = await freshPage();
    const own = await makePageComment(page, member, { comment: 'note to self', mentions: ['milo', 'mona'] });
    expect(own.mentions.map((user: { username: string }) => user.username)).toEqual(['mona', 'milo']);
    expect((await storedNotifications(own.id)).map((item) => [item.user, item.event])).toEqual([[manager.user.id, 'mention']]);
    const other = await makePageComment(page, outsider, { comment: 'hey milo', mentions: ['milo'] });
    expect((await storedNotifications(other.id)).map((item) => [item.user, item.event])).toEqual([[member.user.id, 'mention']]);
  });

  it('accepts a legacy form with percent-encoded brackets, also on the .json path, and ignores a bare mentions[]', async () => {
    const { page, url } = await freshPage();
    const form = await outsider.client.post(`${url}.json`, { form: 'comment%5Bcomment%5D=Hello+from+a+form&mentions%5B%5D=mona&mentions%5B%5D=cleo' });
    expect(form.status, JSON.stringify(form.body)).toBe(200);
    expect(form.body.comment).toBe('Hello from a form');
    expect(form.body.mentions.map((user: { username: string }) => user.username)).toEqual(['mona', 'cleo']);
    expect(await storedMentions(form.body.id)).toEqual([manager.user.id, colleague.user.id]);
    const bare = await outsider.client.post(url, { form: 'comment%5Bcomment%5D=no+one&mentions%5B%5D=' });
    expect(bare.status, JSON.stringify(bare.body)).toBe(200);
    expect(bare.body.mentions).toEqual([]);
    const single = await outsider.client.post(url, { form: { 'comment[comment]': 'one', 'mentions[]': 'cleo' } });
    expect(single.body.mentions.map((user: { username: string }) => user.username)).toEqual(['cleo']);
    expect(await commentsOn(page.id)).toBe(3);
  });

  it('works through the generated client', async () => {
    const { note, page } = await freshPage();
    const client = createClient({ baseUrl: app.baseUrl, auth: () => colleague.token });
    const path = { team: 'talk', note: note.slug!, page: page.id };
    const created = await createPageComment({ client, path, body: { comment: { comment: 'via SDK' }, mentions: ['mona'] }, throwOnError: true });
    expect(created.data.page?.id).toBe(page.id);
    const listed = await listPageComments({ client, path, query: { page: 1, per_page: 10 }, throwOnError: true });
    expect(listed.data.map((item) => item.comment)).toEqual(['via SDK']);
    const deleted = await deletePageComment({ client, path: { ...path, id: created.data.id } });
    expect(deleted.response?.status).toBe(204);
  });

  it('answers 400 for a missing, empty or malformed comment and for more than 50 mentions, storing nothing', async () => {
    const { page, url } = await freshPage();
    const bad = [
      { json: {} },
      { json: { comment: {} } },
      { json: { comment: { comment: '' } } },
      { json: { comment: 'flat' } },
      { json: { comment: { comment: 'x', extra: 1 } } },
      { json: { comment: { comment: ['a', 'b'] } } },
      { json: { comment: { comment: 'x' }, mentions: [{ username: 'mona' }] } },
      { json: { comment: { comment: 'x' }, mentions: Array.from({ length: 51 }, () => 'mona') } },
      { form: 'comment%5Bcomment%5D=' },
      { form: 'mentions%5B%5D=mona' },
      { raw: { body: '{"comment": {', contentType: 'application/json' } },
    ];
    for (const options of bad) {
      const answer = await member.client.post(url, options);
      expect(answer.status, JSON.stringify(options)).toBe(400);
      expect(['validation_failed', 'malformed_body']).toContain(answer.body.code);
    }
    expect(await commentsOn(page.id)).toBe(0);
  });

  it('answers 413 past 64 KiB of UTF-8 and takes exactly 64 KiB', async () => {
    const { page, url } = await freshPage();
    for (const text of ['x'.repeat(65_537), 'é'.repeat(32_769)]) {
      const answer = await member.client.post(url, { json: { comment: { comment: text } } });
      expect(answer.status).toBe(413);
      expect(answer.body.code).toBe('payload_too_large');
    }
    const form = await member.client.post(url, { form: { 'comment[comment]': 'é'.repeat(32_769) } });
    expect(form.status).toBe(413);
    expect(await commentsOn(page.id)).toBe(0);
    const full = await member.client.post(url, { json: { comment: { comment: 'é'.repeat(32_768) } } });
    expect(full.status).toBe(200);
    expect((await app.em().findOneOrFail(Comment, full.body.id)).body).toHaveLength(32_768);
  });

  it('answers 422 naming an unknown username, or a user who may not read the note, and changes nothing', async () => {
    const { page, url } = await freshPage();
    const unknown = await member.client.post(url, { json: { comment: { comment: 'hi' }, mentions: ['mona', 'nobody-here'] } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toBe('unknown_user');
    expect(unknown.body.detail).toContain('nobody-here');
    expect(unknown.body.errors).toEqual([{ pointer: '/mentions/1', detail: expect.stringContaining('nobody-here') }]);
    const closed = await freshPage({ isPrivate: true });
    const hidden = await member.client.post(closed.url, { form: 'comment%5Bcomment%5D=psst&mentions%5B%5D=cleo&mentions%5B%5D=otto' });
    expect(hidden.status).toBe(422);
    expect(hidden.body.errors).toEqual([{ pointer: '/mentions/1', detail: expect.stringContaining('otto') }]);
    expect(await commentsOn(page.id)).toBe(0);
    expect(await commentsOn(closed.page.id)).toBe(0);
    expect(await app.em().count(Notification, { page: { $in: [page.id, closed.page.id] } })).toBe(0);
  });

  it('answers 401 without a token, 403 to a read token, 404 for a private note of another team or a page of another note', async () => {
    const open = await freshPage();
    const closed = await freshPage({ isPrivate: true });
    const body = { json: { comment: { comment: 'hello' } } };
    expect((await anonymous(app).post(open.url, body)).status).toBe(401);
    const readOnly = await reader.client.post(open.url, body);
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.code).toBe('insufficient_scope');
    expect((await outsider.client.post(closed.url, body)).status).toBe(404);
    expect((await member.client.post(`/api/v1/talk/${open.note.slug}/${closed.page.id}/comments`, body)).status).toBe(404);
    expect((await member.client.post(`/api/v1/talk/${open.note.slug}/999999/comments`, body)).status).toBe(404);
    expect(await commentsOn(open.page.id)).toBe(0);
    expect(await commentsOn(closed.page.id)).toBe(0);
  });
});

describe('listPageComments', () => {
  it('lists the page\'s comments oldest first, one page of results at a time, with Link and X-Total-Count', async () => {
    const { note, page, url } = await freshPage();
    const other = await freshPage();
    await makePageComment(other.page, member, { comment: 'elsewhere' });
    const written = [];
    for (const text of ['first', 'second', 'third']) written.push(await makePageComment(page, outsider, { comment: text, mentions: ['cleo'] }));
    const all = await member.client.get(url);
    expect(all.status).toBe(200);
    expect(all.headers.get('x-total-count')).toBe('3');
    expect(all.body.map((item: { comment: string }) => item.comment)).toEqual(['first', 'second', 'third']);
    expect(all.body[0]).toMatchObject({ type: 'page', page: { id: page.id, note: { id: note.id } }, mentions: [{ username: 'cleo' }] });
    expect(all.body.map((item: { can_delete: boolean }) => item.can_delete)).toEqual([false, false, false]);
    // to its author, a comment reads exactly as it was answered at creation
    expect((await outsider.client.get(url)).body).toEqual(written);

    // the query's `page` is the page of results; the path's is the page id
    const second = await member.client.get(url, { query: { page: '2', per_page: '2' } });
    expect(second.body.map((item: { comment: string }) => item.comment)).toEqual(['third']);
    expect(second.headers.get('x-total-count')).toBe('3');
    const link = second.headers.get('link')!;
    expect(link).toContain(`<${app.baseUrl}${url}?page=1&per_page=2>; rel="first"`);
    expect(link).toContain(`<${app.baseUrl}${url}?page=1&per_page=2>; rel="prev"`);
    expect(link).toContain('rel="last"');
    expect(link).not.toContain('rel="next"');
    const beyond = await member.client.get(`${url}.json`, { query: { page: '5' } });
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual([]);
  });

  it('says can_delete for the author and for managers of the note\'s team, not for anyone else', async () => {
    const { page, url } = await freshPage();
    await makePageComment(page, member, { comment: 'by milo' });
    const canDelete = async (actor: Actor) => (await actor.client.get(url)).body[0].can_delete;
    expect(await canDelete(member)).toBe(true);
    expect(await canDelete(manager)).toBe(true);
    expect(await canDelete(colleague)).toBe(false);
    expect(await canDelete(reader)).toBe(false);
    expect(await canDelete(outsider)).toBe(false);
  });

  it('loads in a fixed number of queries however many comments, authors and mentions', async () => {
    const { page, url } = await freshPage();
    const measure = async () => {
      await manager.client.get('/api/v1/me');
      return app.countQueries(async () => expect((await manager.client.get(url)).status).toBe(200));
    };
    const users = [outsider, colleague, member, manager];
    for (let i = 0; i < 2; i += 1) await makePageComment(page, users[i]!, { comment: `c${i}`, mentions: ['mona'] });
    const few = await measure();
    for (let i = 2; i < 14; i += 1) await makePageComment(page, users[i % users.length]!, { comment: `c${i}`, mentions: ['mona', 'cleo', 'otto'].slice(0, (i % 3) + 1) });
    const many = await measure();
    expect((await manager.client.get(url)).body).toHaveLength(14);
    expect(many).toBe(few);
    // token, team, note, role, page, count, comments with authors, mentions, the page view: never one per comment
    expect(many).toBeLessThanOrEqual(12);
  });

  it('answers 401 without a token, 404 for a private note of another team or a page of another note, 400 for bad paging', async () => {
    const open = await freshPage();
    const closed = await freshPage({ isPrivate: true });
    expect((await anonymous(app).get(open.url)).status).toBe(401);
    expect((await outsider.client.get(closed.url)).status).toBe(404);
    expect((await reader.client.get(closed.url)).status).toBe(200);
    expect((await member.client.get(`/api/v1/talk/${open.note.slug}/${closed.page.id}/comments`)).status).toBe(404);
    expect((await member.client.get(open.url, { query: { page: '0' } })).status).toBe(400);
    expect((await member.client.get(open.url, { query: { per_page: '101' } })).status).toBe(400);
    expect((await member.client.get(open.url, { query: { page: 'two' } })).status).toBe(400);
  });
});

describe('deletePageComment', () => {
  it('lets the author delete their comment, with its mentions and notifications', async () => {
    const { page, url } = await freshPage();
    const written = await makePageComment(page, outsider, { comment: 'oops', mentions: ['mona'] });
    expect(await storedNotifications(written.id)).toHaveLength(2);
    const answer = await outsider.client.delete(`${url}/${written.id}`);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(await app.em().count(Comment, { id: written.id })).toBe(0);
    expect(await storedMentions(written.id)).toEqual([]);
    expect(await storedNotifications(written.id)).toEqual([]);
  });

  it('lets a manager of the note\'s team delete anyone\'s comment', async () => {
    const { page, url } = await freshPage();
    const written = await makePageComment(page, outsider, { comment: 'spam' });
    expect((await manager.client.delete(`${url}/${written.id}.json`)).status).toBe(204);
    expect(await app.em().count(Comment, { id: written.id })).toBe(0);
  });

  it('answers 403 to members and outsiders who did not write it, and to a read token', async () => {
    const { page, url } = await freshPage();
    const written = await makePageComment(page, outsider, { comment: 'mine' });
    for (const actor of [member, colleague, reader]) {
      const answer = await actor.client.delete(`${url}/${written.id}`);
      expect(answer.status).toBe(403);
    }
    const byAuthor = await makePageComment(page, member, { comment: 'milo writes' });
    expect((await outsider.client.delete(`${url}/${byAuthor.id}`)).status).toBe(403);
    expect(await app.em().count(Comment, { id: { $in: [written.id, byAuthor.id] } })).toBe(2);
  });

  it('answers 404 for a comment of another page, an unknown id, a private note of another team, and 401 without a token', async () => {
    const first = await freshPage();
    const second = await freshPage();
    const closed = await freshPage({ isPrivate: true });
    const elsewhere = await makePageComment(second.page, member, { comment: 'on the second page' });
    const hidden = await makePageComment(closed.page, member, { comment: 'in private' });
    expect((await member.client.delete(`${first.url}/${elsewhere.id}`)).status).toBe(404);
    expect((await member.client.delete(`${first.url}/999999`)).status).toBe(404);
    expect((await member.client.delete(`${first.url}/99999999999`)).status).toBe(404);
    expect((await outsider.client.delete(`${closed.url}/${hidden.id}`)).status).toBe(404);
    expect((await anonymous(app).delete(`${second.url}/${elsewhere.id}`)).status).toBe(401);
    expect(await app.em().count(Comment, { id: { $in: [elsewhere.id, hidden.id] } })).toBe(2);
  });
});
