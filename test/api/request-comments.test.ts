// Comments on requests (issue 24): the review's conversation, through the one comment service. Stored with the
// request, embedded with it, told to the mentioned and to the request's author, logged, carried by the change log
// (stream and webhooks) and found by search; the same refusals as every comment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { createRequestComment, deleteRequestComment, listRequestComments } from '../../generated/client/index.ts';
import { Comment } from '../../src/modules/comments/comment.entity.ts';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { startCommentCast, expectCommentRefusals } from '../support/comments.ts';
import { readJsonEvents } from '../support/event-stream.ts';
import { anonymous, makeNote, makePage, type Actor } from '../support/factories.ts';
import { forkNote, latestVersionOf } from '../support/forks.ts';

let app: TestApp;
let manager: Actor, member: Actor, colleague: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  ({ app, manager, member, colleague, outsider, reader } = await startCommentCast('bench', { manager: 'rita', member: 'rolf', outsider: 'rosa', reader: 'rudi', colleague: 'ruth' }));
});
afterAll(async () => app?.close());

let counter = 0;
/**
 * Request #1 to a fresh note of `bench` (written by `colleague`): `member` forks it, changes its page and proposes
 * the change back, so `member` is the request's author (told of comments on it).
 */
async function freshRequest(options: { isPrivate?: boolean; content?: string } = {}) {
  counter += 1;
  const note = await makeNote(app, 'bench', colleague.user, { slug: `review-${counter}`, isPrivate: options.isPrivate ?? false });
  const page = await makePage(app, note, colleague, { title: 'Steps', content: '<p>one</p>' });
  const fork = await forkNote(app, note, member);
  const forkPath = `/api/v1/${fork.team.name}/${fork.id}`;
  const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, page.id]);
  expect((await member.client.put(`${forkPath}/${copy!.id}`, { json: { page: { content: options.content ?? '<p>one and two</p>' } } })).status).toBe(200);
  const created = await member.client.post(`${forkPath}/requests`, { json: { page_versions: [await latestVersionOf(app, copy!.id)] } });
  expect(created.status, created.text).toBe(200);
  const requestUrl = `/api/v1/bench/${note.slug}/requests/${created.body.index}`;
  return { note, requestId: created.body.id as number, index: created.body.index as number, requestUrl, url: `${requestUrl}/comments` };
}

/** The notifications a comment caused: [user id, event, type, the request they name]. */
async function notificationsOf(commentId: number) {
  const rows = await app.em().find(Notification, { comment: commentId }, { orderBy: { id: 'asc' } });
  return rows.map((row) => [row.user.id, row.event, row.type, row.request?.id ?? null]);
}

describe('createRequestComment', () => {
  it('stores the comment on the request, embeds the request, notifies the mentioned and the request\'s author, never the actor, and logs it', async () => {
    const { note, requestId, requestUrl, url } = await freshRequest();
    const answer = await outsider.client.post(url, { json: { comment: { comment: 'why two? @rita' }, mentions: ['RITA', 'ruth', 'rosa'] } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ comment: 'why two? @rita', type: 'request', can_delete: true, user_id: outsider.user.id, model: 'comment' });
    expect(answer.body).not.toHaveProperty('issue');
    expect(answer.body.request).toEqual((await outsider.client.get(requestUrl)).body);
    expect(answer.body.mentions.map((user: { username: string }) => user.username)).toEqual(['rita', 'rosa', 'ruth']);
    const stored = await app.em().findOneOrFail(Comment, answer.body.id);
    expect([stored.type, stored.note.id, stored.request?.id, stored.issue, stored.page, stored.body]).toEqual(['request', note.id, requestId, null, null, 'why two? @rita']);
    expect(await notificationsOf(answer.body.id)).toEqual([
      [manager.user.id, 'mention', 'request', requestId],
      [colleague.user.id, 'mention', 'request', requestId],
      [member.user.id, 'comment', 'request', requestId],
    ]);
    const logged = await app.em().findOneOrFail(Log, { comment: answer.body.id });
    expect([logged.type, logged.action, logged.request?.id, logged.summary]).toEqual(['comment', 'create', requestId, { comment_id: answer.body.id, on: 'request', request_id: requestId, index: 1, title: 'request #1' }]);
  });

  it('shows the request in the notification, the comment in the activity log, the change stream\'s event and search', async () => {
    const { note, requestId, url } = await freshRequest();
    const [{ id: before }] = await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes') as [{ id: string }];
    const answer = await outsider.client.post(url, { json: { comment: { comment: 'the walrus step is missing' } } });
    const told = (await member.client.get('/api/v1/notifications')).body.find((item: { request?: { id: number } }) => item.request?.id === requestId);
    expect(told).toMatchObject({ event: 'comment', type: 'request', from_user: { username: 'rosa' }, title: 'rosa Name commented on "request #1"', request: { index: 1 } });
    const logs = await manager.client.get('/api/v1/logs', { query: { team: 'bench' } });
    const entry = logs.body.find((item: { type: string; comment?: { id: number } }) => item.type === 'comment' && item.comment?.id === answer.body.id);
    expect(entry).toMatchObject({ action: 'create', comment: { type: 'request', request: { id: requestId, index: 1 } } });
    const events = (await readJsonEvents(member.client, { since: before, note: `bench/${note.slug}`, types: 'comment.created' })).items;
    expect(events.map((event) => [event.type, event.comment, event.request])).toEqual([['comment.created', { id: answer.body.id, on: 'request' }, { index: 1 }]]);
    await app.settle(); // the search index is a projection of the change log (the server's worker runs it)
    const hits = (await member.client.get('/api/v1/search', { query: { q: 'walrus', note_id: String(note.id) } })).body;
    expect(hits[0].matches).toEqual([expect.objectContaining({ type: 'comment', id: answer.body.id, comment_on: 'request', request_index: 1 })]);
  });

  it('answers 401, 404 for another team\'s private note or an unknown request, 403 for a read token, 400, 413 and 422, storing nothing', async () => {
    const { note, url } = await freshRequest({ isPrivate: true });
    expect((await member.client.post(url.replace('/requests/1/', '/requests/2/'), { json: { comment: { comment: 'x' } } })).status).toBe(404);
    expect((await member.client.post(url.replace('/requests/1/', '/requests/0/'), { json: { comment: { comment: 'x' } } })).status).toBe(404);
    await expectCommentRefusals(app, { member, outsider, reader }, url, note.id, 'rosa');
  });

  it('a closed or merged request can still be discussed', async () => {
    const { requestUrl, url } = await freshRequest();
    expect((await manager.client.put(`${requestUrl}/close`)).status).toBe(200);
    const answer = await colleague.client.post(url, { form: { 'comment[comment]': 'closed, but noted' } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.request).toMatchObject({ status: 'closed', is_closed: true });
  });
});

describe('listRequestComments', () => {
  it('lists the request\'s comments oldest first, paginated, with can_delete; comments on the note, an issue or another request are not listed', async () => {
    const { note, url } = await freshRequest();
    await outsider.client.post(`/api/v1/bench/${note.slug}/comments`, { json: { comment: { comment: 'on the note' } } });
    for (const text of ['a', 'b', 'c']) await outsider.client.post(url, { json: { comment: { comment: text } } });
    const { url: other } = await freshRequest();
    await outsider.client.post(other, { json: { comment: { comment: 'elsewhere' } } });
    const list = await member.client.get(url, { query: { per_page: '2' } });
    expect(list.status).toBe(200);
    expect(list.body.map((item: { comment: string }) => item.comment)).toEqual(['a', 'b']);
    expect(list.body.every((item: { can_delete: boolean; type: string }) => !item.can_delete && item.type === 'request')).toBe(true);
    expect(list.headers.get('x-total-count')).toBe('3');
    expect((await manager.client.get(url)).body.every((item: { can_delete: boolean }) => item.can_delete)).toBe(true);
  });

  it('answers 401, 404 for a private note of another team or an unknown request; a fixed number of queries for 1 or 30 comments', async () => {
    const { url: hidden } = await freshRequest({ isPrivate: true });
    expect((await anonymous(app).get(hidden)).status).toBe(401);
    expect((await outsider.client.get(hidden)).status).toBe(404);
    const { url } = await freshRequest();
    expect((await reader.client.get(url.replace('/requests/1/', '/requests/9/'))).status).toBe(404);
    await outsider.client.post(url, { json: { comment: { comment: 'first' }, mentions: ['rita'] } });
    await reader.client.get('/api/v1/me');
    const small = await app.countQueries(() => reader.client.get(url));
    for (let i = 0; i < 29; i += 1) await (i % 2 ? outsider : manager).client.post(url, { json: { comment: { comment: `c${i}` }, mentions: ['ruth'] } });
    const large = await app.countQueries(async () => expect((await reader.client.get(url)).body).toHaveLength(30));
    expect(large).toBe(small);
  });

  it('a page of the list ends early when the embedded request (its pages\' diffs) would pass LIMIT_LIST_TEXT_BYTES, none skipped', async () => {
    // a change of 40 KB: the request's diff shows it, and every comment embeds the request
    const { url } = await freshRequest({ content: `<p>${'walrus '.repeat(6_000)}</p>` });
    for (let i = 0; i < 3; i += 1) await outsider.client.post(url, { json: { comment: { comment: `c${i}` } } });
    const requestBytes = Buffer.byteLength(JSON.stringify((await member.client.get(url)).body[0].request));
    expect(requestBytes).toBeGreaterThan(40_000);
    const tight = await startTestApp({ LIMIT_LIST_TEXT_BYTES: String(64 * 1024) }, { beside: app });
    try {
      const seen: string[] = [];
      let next: string | undefined = `${url}?per_page=100`;
      while (next) {
        const page: { status: number; body: { comment: string }[]; headers: Headers } = await new ApiClient(tight.baseUrl, member.token).get(next);
        expect(page.status).toBe(200);
        expect(page.body.length).toBeLessThanOrEqual(1);
        seen.push(...page.body.map((item) => item.comment));
        const link: string | undefined = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
        next = link === undefined ? undefined : ((url) => url.pathname + url.search)(new URL(link, tight.baseUrl));
      }
      expect(seen).toEqual(['c0', 'c1', 'c2']);
    } finally {
      await tight.close();
    }
  });
});

describe('deleteRequestComment', () => {
  it('the author or a manager deletes (204, gone with its notifications); others 403; another request\'s comment 404', async () => {
    const { note, url } = await freshRequest();
    const first = (await outsider.client.post(url, { json: { comment: { comment: 'one' }, mentions: ['rita'] } })).body;
    const second = (await outsider.client.post(url, { json: { comment: { comment: 'two' } } })).body;
    expect((await member.client.delete(`${url}/${first.id}`)).status).toBe(403);
    expect((await anonymous(app).delete(`${url}/${first.id}`)).status).toBe(401);
    expect((await outsider.client.delete(`${url.replace('/requests/1/', '/requests/2/')}/${first.id}`)).status).toBe(404);
    expect((await outsider.client.delete(`/api/v1/bench/${note.slug}/comments/${first.id}`)).status).toBe(404);
    expect((await outsider.client.delete(`${url}/99999999`)).status).toBe(404);
    expect((await outsider.client.delete(`${url}/${first.id}`)).status).toBe(204);
    expect((await manager.client.delete(`${url}/${second.id}`)).status).toBe(204);
    expect(await app.em().count(Comment, { note: note.id })).toBe(0);
    expect(await app.em().count(Notification, { comment: first.id })).toBe(0);
    expect(await app.em().count(Log, { type: 'comment', action: 'delete', summary: { $contains: { comment_id: first.id, on: 'request' } } } as never)).toBe(1);
    const { note: hiddenNote, url: hidden } = await freshRequest({ isPrivate: true });
    const secret = (await member.client.post(hidden, { json: { comment: { comment: 'secret' } } })).body;
    expect((await outsider.client.delete(`${hidden}/${secret.id}`)).status).toBe(404);
    expect(await app.em().count(Comment, { note: hiddenNote.id })).toBe(1);
  });

  it('works through the generated client: create, list, delete', async () => {
    const { note, requestId, index } = await freshRequest();
    const client = createClient({ baseUrl: app.baseUrl, auth: () => colleague.token });
    const path = { team: 'bench', note: note.slug!, index };
    const created = await createRequestComment({ client, path, body: { comment: { comment: 'via SDK' }, mentions: ['rita'] }, throwOnError: true });
    expect(created.data.request?.id).toBe(requestId);
    const listed = await listRequestComments({ client, path, throwOnError: true });
    expect(listed.data.map((item) => item.comment)).toEqual(['via SDK']);
    await deleteRequestComment({ client, path: { ...path, id: created.data.id }, throwOnError: true });
    expect(await app.em().count(Comment, { request: requestId })).toBe(0);
  });
});
