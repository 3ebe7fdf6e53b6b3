// updateIssue (PATCH), updateIssueViaPut (PUT), deleteIssue, addIssueTags.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { addIssueTags, deleteIssue, updateIssueViaPut } from '../../generated/client/index.ts';
import { Issue } from '../../src/modules/issues/issue.entity.ts';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addMember, anonymous, makeIssue, makeNote, makeUser, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, colleague: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  app = await startTestApp();
  const cast = await makeScenario(app, { team: 'ops', usernames: { manager: 'mia', member: 'max', outsider: 'oli', reader: 'ray' } });
  ({ manager, member, outsider, reader } = cast);
  colleague = await makeUser(app, 'cora');
  await addMember(app, cast.team, colleague.user, 'member');
});
afterAll(async () => app?.close());

let counter = 0;
/** A note of `ops` with one issue by `member` (index 1), assigned to `cora`. */
async function freshIssue(options: { isPrivate?: boolean } = {}) {
  counter += 1;
  const note = await makeNote(app, 'ops', manager.user, { slug: `work-${counter}`, isPrivate: options.isPrivate ?? false });
  const issue = await makeIssue(app, note, member, { title: 'Original', description: 'first words', to_user: 'cora' });
  return { note, issue, url: `/api/v1/ops/${note.slug}/issues/1` };
}
const stored = (id: number) => app.em().findOneOrFail(Issue, id);
const logsOf = async (issueId: number) =>
  (await app.em().find(Log, { summary: { issue_id: issueId } }, { orderBy: { id: 'asc' } })).map((log) => ({ action: log.action, issue: log.issue?.id ?? null, summary: log.summary }));

describe.each(['patch', 'put'] as const)('updateIssue via %s', (method) => {
  it('changes only the fields given: is_done=true alone closes, false reopens, and the log says what changed', async () => {
    const { issue, url } = await freshIssue();
    const closed = await colleague.client[method](url, { form: 'issue%5Bis_done%5D=true' });
    expect(closed.status, closed.text).toBe(200);
    expect(closed.body).toMatchObject({ is_done: true, title: 'Original', description: 'first words', to_user: { username: 'cora' }, label: 'Issue #1 Original' });
    expect((await stored(issue.id)).isDone).toBe(true);
    const reopened = await colleague.client[method](url, { json: { issue: { is_done: false } } });
    expect(reopened.body.is_done).toBe(false);
    const renamed = await colleague.client[method](url, { json: { issue: { title: 'Renamed', rate: 1.5, position: 9 } } });
    expect(renamed.body).toMatchObject({ title: 'Renamed', label: 'Issue #1 Renamed', rate: 1.5, position: 9, is_done: false, description: 'first words' });
    expect((await colleague.client.get(url)).body).toEqual(renamed.body);
    // nothing to change: no log entry
    await colleague.client[method](url, { json: { issue: { title: 'Renamed' } } });
    expect((await logsOf(issue.id)).map((log) => [log.action, (log.summary as { changed?: string[] }).changed])).toEqual([
      ['create', undefined],
      ['update', ['closed']],
      ['update', ['reopened']],
      ['update', ['title', 'position', 'rate']],
    ]);
  });

  it('takes what old clients send: every field, computed ones too, with a bare to_user, which unassigns', async () => {
    const { issue, url } = await freshIssue();
    const form = 'issue%5Btitle%5D=Old+client&issue%5Bdescription%5D=&issue%5Bto_user%5D&issue%5Bis_done%5D=1'
      + '&issue%5Blabel%5D=Issue+%231+Original&issue%5Bindex%5D=7&issue%5Bid%5D=1&issue%5Bcan_manage%5D=true&issue%5Bcreated_at%5D=yesterday&_method=put';
    const answer = await member.client[method](`${url}.json`, { form });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ title: 'Old client', description: '', description_html: '', to_user: null, is_done: true, index: 1, id: issue.id });
    const row = await stored(issue.id);
    expect([row.title, row.description, row.toUser, row.isDone, row.index]).toEqual(['Old client', '', null, true, 1]);
  });

  it('notifies a new assignee once, never the caller, and the log keeps the change', async () => {
    const { issue, url } = await freshIssue();
    const before = await app.em().count(Notification, { issue: issue.id });
    await member.client[method](url, { json: { issue: { to_user: 'MIA' } } });
    await member.client[method](url, { json: { issue: { to_user: 'mia', title: 'again' } } });
    await manager.client[method](url, { json: { issue: { to_user: 'max' } } });
    await member.client[method](url, { json: { issue: { to_user: 'max' } } });
    const notifications = await app.em().find(Notification, { issue: issue.id }, { orderBy: { id: 'asc' } });
    expect(notifications.slice(before).map((item) => [item.user.id, item.fromUser.id, item.event, item.type])).toEqual([
      [manager.user.id, member.user.id, 'assign', 'issue'],
      [member.user.id, manager.user.id, 'assign', 'issue'],
    ]);
    // self-assignment writes no notification
    await member.client[method](url, { json: { issue: { to_user: null } } });
    await member.client[method](url, { json: { issue: { to_user: 'max' } } });
    expect(await app.em().count(Notification, { issue: issue.id })).toBe(before + 2);
  });

  it('answers 400 for an empty or too long title and for names the issue lacks, 422 for a bad assignee, changing nothing', async () => {
    const { issue, url } = await freshIssue({ isPrivate: true });
    for (const options of [
      { json: { issue: { title: '' } } },
      { json: { issue: { title: 'x'.repeat(256) } } },
      { json: { issue: { state: 'closed' } } },
      { json: { title: 'flat' } },
      { form: 'issue%5Bis_done%5D=maybe' },
    ]) {
      const answer = await member.client[method](url, options);
      expect(answer.status, JSON.stringify(options)).toBe(400);
    }
    const unknown = await member.client[method](url, { json: { issue: { is_done: true, to_user: 'nobody-here' } } });
    expect([unknown.status, unknown.body.code]).toEqual([422, 'unknown_user']);
    const outside = await member.client[method](url, { form: 'issue%5Bis_done%5D=1&issue%5Bto_user%5D=oli' });
    expect([outside.status, outside.body.code]).toEqual([422, 'cannot_read_note']);
    const row = await stored(issue.id);
    expect([row.title, row.isDone, row.toUser?.id]).toEqual(['Original', false, colleague.user.id]);
  });

  it('answers 401 without a token, 403 to outsiders and read tokens, 404 for a private note of another team or an unknown index', async () => {
    const open = await freshIssue();
    const closed = await freshIssue({ isPrivate: true });
    const body = { json: { issue: { is_done: true } } };
    expect((await anonymous(app)[method](open.url, body)).status).toBe(401);
    expect((await outsider.client[method](open.url, body)).status).toBe(403);
    expect((await reader.client[method](open.url, body)).body.code).toBe('insufficient_scope');
    expect((await outsider.client[method](closed.url, body)).status).toBe(404);
    expect((await member.client[method](open.url.replace(/1$/, '2'), body)).status).toBe(404);
    expect((await stored(open.issue.id)).isDone).toBe(false);
    expect((await stored(closed.issue.id)).isDone).toBe(false);
  });
});

describe('deleteIssue', () => {
  it('lets the creator delete their issue: gone with its notifications, its log entries kept with a summary', async () => {
    const { note, issue, url } = await freshIssue();
    await member.client.patch(url, { json: { issue: { title: 'Last title' } } });
    const answer = await member.client.delete(url);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(await app.em().count(Issue, { id: issue.id })).toBe(0);
    expect(await app.em().count(Notification, { issue: issue.id })).toBe(0);
    expect(await logsOf(issue.id)).toEqual([
      { action: 'create', issue: null, summary: { issue_id: issue.id, index: 1, title: 'Original' } },
      { action: 'update', issue: null, summary: { issue_id: issue.id, index: 1, title: 'Last title', changed: ['title'] } },
      { action: 'delete', issue: null, summary: { issue_id: issue.id, index: 1, title: 'Last title' } },
    ]);
    expect((await app.em().find(Log, { summary: { issue_id: issue.id } })).every((log) => log.note?.id === note.id && log.type === 'issue')).toBe(true);
    expect((await member.client.get(url)).status).toBe(404);
    // the index is not given again
    expect((await makeIssue(app, note, member, { title: 'next' })).index).toBe(2);
  });

  it('lets a manager delete anyone\'s issue, and answers 403 to other members, outsiders and read tokens', async () => {
    const { issue, url } = await freshIssue();
    for (const actor of [colleague, outsider]) {
      const answer = await actor.client.delete(url);
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('forbidden');
    }
    expect((await reader.client.delete(url)).status).toBe(403);
    expect(await app.em().count(Issue, { id: issue.id })).toBe(1);
    const client = createClient({ baseUrl: app.baseUrl, auth: () => manager.token });
    const deleted = await deleteIssue({ client, path: { team: 'ops', note: url.split('/')[4]!, index: 1 } });
    expect(deleted.response?.status).toBe(204);
    expect(await app.em().count(Issue, { id: issue.id })).toBe(0);
  });

  it('answers 401 without a token, 404 for a private note of another team or an unknown index', async () => {
    const closed = await freshIssue({ isPrivate: true });
    expect((await anonymous(app).delete(closed.url)).status).toBe(401);
    expect((await outsider.client.delete(closed.url)).status).toBe(404);
    expect((await manager.client.delete(closed.url.replace(/1$/, '5'))).status).toBe(404);
    expect(await app.em().count(Issue, { id: closed.issue.id })).toBe(1);
  });
});

describe('addIssueTags', () => {
  const tagsOf = async (issueId: number) =>
    (await app.em().execute<{ name: string }[]>('select t.name from issue_tags it join tags t on t.id = it.tag_id where it.issue_id = ? order by it.added_order', [issueId])).map((row) => row.name);

  it('adds trimmed tags once each (case-insensitively), after the existing ones, shared across the note', async () => {
    const { note, issue, url } = await freshIssue();
    const first = await member.client.post(`${url}/tags`, { form: 'tags%5B%5D=+docs+&tags%5B%5D=Ops&tags%5B%5D=DOCS&tags%5B%5D=' });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ id: issue.id, tags: ['docs', 'Ops'] });
    const second = await colleague.client.post(`${url}/tags.json`, { json: { tags: ['ops', 'zeta', 'alpha'] } });
    expect(second.body.tags).toEqual(['docs', 'Ops', 'zeta', 'alpha']);
    expect(await tagsOf(issue.id)).toEqual(['docs', 'Ops', 'zeta', 'alpha']);
    const other = await makeIssue(app, note, member, { title: 'other' });
    const shared = await member.client.post(`/api/v1/ops/${note.slug}/issues/${other.index}/tags`, { form: { 'tags[]': 'ZETA' } });
    expect(shared.body.tags).toEqual(['zeta']);
    expect(await app.em().execute('select name from tags where note_id = ? order by lower(name)', [note.id])).toEqual([{ name: 'alpha' }, { name: 'docs' }, { name: 'Ops' }, { name: 'zeta' }]);
    const logged = await logsOf(issue.id);
    expect(logged.at(-1)).toMatchObject({ action: 'update', summary: { changed: ['tags'] } });
  });

  it('accepts an empty list (a bare tags[], no tags, no body) and changes nothing', async () => {
    const { issue, url } = await freshIssue();
    await member.client.post(`${url}/tags`, { json: { tags: ['keep'] } });
    for (const options of [{ form: 'tags%5B%5D' }, { form: 'tags%5B%5D=' }, { form: 'utf8=%E2%9C%93' }, { json: {} }, { json: { tags: [] } }, {}]) {
      const answer = await member.client.post(`${url}/tags`, options);
      expect(answer.status, JSON.stringify(options)).toBe(200);
      expect(answer.body.tags).toEqual(['keep']);
    }
    expect(await tagsOf(issue.id)).toEqual(['keep']);
  });

  it('answers 400 for a tag over 50 characters or over 100 in one request, 422 past 100 tags on the issue, adding none', async () => {
    const { issue, url } = await freshIssue();
    const long = await member.client.post(`${url}/tags`, { json: { tags: ['ok', 'x'.repeat(51)] } });
    expect([long.status, long.body.code]).toEqual([400, 'validation_failed']);
    const many = await member.client.post(`${url}/tags`, { json: { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) } });
    expect(many.status).toBe(400);
    expect(await tagsOf(issue.id)).toEqual([]);
    const hundred = await member.client.post(`${url}/tags`, { json: { tags: ['y'.repeat(50), ...Array.from({ length: 99 }, (_, i) => `t${i}`)] } });
    expect(hundred.body.tags).toHaveLength(100);
    // tags it has already do not count again
    expect((await member.client.post(`${url}/tags`, { json: { tags: ['T1', 't2'] } })).status).toBe(200);
    const past = await member.client.post(`${url}/tags`, { form: { 'tags[]': ['t3', 'new one', 'another'] } });
    expect([past.status, past.body.code]).toEqual([422, 'too_many_tags']);
    expect(await tagsOf(issue.id)).toHaveLength(100);
  });

  it('never fails when the same new tag is added to several issues at once', async () => {
    const { note } = await freshIssue();
    const issues = [];
    for (let i = 0; i < 6; i += 1) issues.push(await makeIssue(app, note, member, { title: `i${i}` }));
    const answers = await Promise.all(issues.flatMap((issue) => [
      member.client.post(`/api/v1/ops/${note.slug}/issues/${issue.index}/tags`, { json: { tags: ['race', 'Race2'] } }),
      colleague.client.post(`/api/v1/ops/${note.slug}/issues/${issue.index}/tags`, { json: { tags: ['race2', 'race'] } }),
    ]));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    for (const issue of issues) expect((await tagsOf(issue.id)).map((name) => name.toLowerCase()).sort()).toEqual(['race', 'race2']);
    expect(await app.em().execute('select count(*)::int as n from tags where note_id = ?', [note.id])).toEqual([{ n: 2 }]);
  });

  it('works through the generated client, and answers 401, 403 and 404 like the other writes', async () => {
    const open = await freshIssue();
    const closed = await freshIssue({ isPrivate: true });
    const client = createClient({ baseUrl: app.baseUrl, auth: () => colleague.token });
    const path = { team: 'ops', note: open.note.slug!, index: 1 };
    const tagged = await addIssueTags({ client, path, body: { tags: ['sdk'] }, throwOnError: true });
    expect(tagged.data.tags).toEqual(['sdk']);
    const put = await updateIssueViaPut({ client, path, body: { issue: { is_done: true } }, throwOnError: true });
    expect(put.data).toMatchObject({ is_done: true, tags: ['sdk'] });
    const body = { json: { tags: ['nope'] } };
    expect((await anonymous(app).post(`${open.url}/tags`, body)).status).toBe(401);
    expect((await outsider.client.post(`${open.url}/tags`, body)).status).toBe(403);
    expect((await reader.client.post(`${open.url}/tags`, body)).status).toBe(403);
    expect((await outsider.client.post(`${closed.url}/tags`, body)).status).toBe(404);
    expect((await member.client.post(`${open.url.replace(/1$/, '3')}/tags`, body)).status).toBe(404);
    expect(await tagsOf(open.issue.id)).toEqual(['sdk']);
    expect(await tagsOf(closed.issue.id)).toEqual([]);
  });
});
