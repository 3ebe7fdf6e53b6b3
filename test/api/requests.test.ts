import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { closeRequest, createRequest, getRequest, listLogs, listNotifications, listRequests, mergeRequest, openRequest } from '../../generated/client/index.ts';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { MergeRequest } from '../../src/modules/requests/merge-request.entity.ts';
import { loadRequestPages, mergeabilityOf } from '../../src/modules/requests/merge-state.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, type Actor } from '../support/factories.ts';
import { contentOfPage, DEPLOY, forkedRunbook, forkNote, latestVersionOf } from '../support/forks.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'secret'>;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'up', usernames: { manager: 'mona', member: 'milo', outsider: 'otto', reader: 'rita' }, notes: { secret: { isPrivate: true } } });
  ({ manager, member, outsider, reader } = cast);
});
afterAll(async () => app?.close());

let counter = 0;
/** A public note of `up` with two pages, forked by otto into his default team (test/support/forks.ts). */
async function setup() {
  const runbook = await forkedRunbook(app, cast);
  counter = runbook.number;
  return runbook;
}
const latestVersion = (pageId: number) => latestVersionOf(app, pageId);
const contentOf = (pageId: number) => contentOfPage(app, pageId);
const versionCount = async (noteId: number) => Number((await app.em().execute<{ n: string }[]>('select count(*) as n from page_versions where note_id = ?', [noteId]))[0]!.n);
const notificationsOf = async (requestId: number) =>
  (await app.em().find(Notification, { request: requestId }, { orderBy: { id: 'asc' } })).map((n) => ({ user: n.user.id, from: n.fromUser.id, event: n.event, type: n.type }));
const logsOf = async (requestId: number) => (await app.em().find(Log, { request: requestId }, { orderBy: { id: 'asc' } })).map((log) => [log.type, log.action, log.user.id]);

describe('createRequest', () => {
  it('opens a request on the original with the fork\'s versions, notifies its managers and logs it', async () => {
    const s = await setup();
    const version = await s.editFork(s.forkDeploy, DEPLOY.replace('clean checkout', 'tagged release'));
    const body = await s.request([version]);
    expect(body).toMatchObject({
      index: 1,
      label: 'request #1',
      status: 'opened',
      is_closed: false,
      is_merged: false,
      is_wip: false,
      active: true,
      can_open: true,
      to_note: { id: s.note.id, slug: s.note.slug },
      from_note: { id: s.fork.id, user_id: outsider.user.id, forked: { id: s.note.id } },
      user: { username: 'otto' },
      mergeable: true,
      mergeable_state: 'clean',
      mergeable_reason: null,
      html_url: `${app.baseUrl}/up/${s.note.slug}/requests/1`,
      attachments: [],
      model: 'request',
    });
    expect(body.pages).toHaveLength(1);
    expect(body.pages[0]).toMatchObject({ note_id: s.fork.id, type: 'update', path: `up / Runbook ${counter} / Deploy`, merged: false, classification: 'fork_only', conflicts: [] });
    expect(body.pages[0].diff).toContain('<del>&lt;p&gt;Run make deploy from a <strong>clean checkout</strong>.&lt;/p&gt;</del>');

    const stored = await app.em().findOneOrFail(MergeRequest, body.id, { populate: ['pages'] });
    expect([stored.toNote.id, stored.fromNote!.id, stored.index, stored.user.id, stored.status]).toEqual([s.note.id, s.fork.id, 1, outsider.user.id, 'opened']);
    const [page] = stored.pages.getItems();
    expect([page!.pageVersion?.id, page!.fromPage?.id, page!.toPage?.id, page!.baseVersion?.id]).toEqual([version, s.forkDeploy, s.deploy.id, await latestVersion(s.deploy.id)]);
    // the managers of the original's team hear of it (mona), members do not
    expect(await notificationsOf(body.id)).toEqual([{ user: manager.user.id, from: outsider.user.id, event: 'request', type: 'request' }]);
    expect(await logsOf(body.id)).toEqual([['request', 'create', outsider.user.id]]);

    // indexes count per original, without gaps
    const next = await s.request([await s.editFork(s.forkOther, '<p>other, edited</p>')], { is_wip: true });
    expect([next.index, next.status, next.is_wip, next.active]).toEqual([2, 'draft', true, false]);
  });

  it('proposes a page new in the fork as `create`, through a form body too', async () => {
    const s = await setup();
    const created = await outsider.client.post(`${s.forkPath}/pages`, { json: { page: { title: 'Rollback', content: '<p>roll back</p>', parent: s.forkDeploy } } });
    const version = await latestVersion(created.body.id);
    const answer = await outsider.client.post(`${s.forkPath}/requests`, { form: { 'page_versions[]': String(version) } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.pages[0]).toMatchObject({ type: 'create', path: `up / Runbook ${counter} / Deploy / Rollback`, classification: 'fork_only' });
  });

  it('answers 401, 404, 403, 400 and 422, changing nothing', async () => {
    const s = await setup();
    const version = await s.editFork(s.forkDeploy, '<p>changed</p>');
    const before = await app.em().count(MergeRequest, {});
    expect((await anonymous(app).post(`${s.forkPath}/requests`, { json: { page_versions: [version] } })).status).toBe(401);
    const hidden = await outsider.client.post(`/api/v1/up/${cast.notes.secret.slug}/requests`, { json: { page_versions: [version] } });
    expect(hidden.status).toBe(404);
    // milo may read otto's public fork but is not in its team
    const notTeam = await member.client.post(`${s.forkPath}/requests`, { json: { page_versions: [version] } });
    expect([notTeam.status, notTeam.body.code]).toEqual([403, 'forbidden']);
    const missing = await outsider.client.post(`${s.forkPath}/requests`, { json: {} });
    expect([missing.status, missing.body.code]).toEqual([422, 'invalid_page_version']);
    const wrongType = await outsider.client.post(`${s.forkPath}/requests`, { json: { page_versions: 'all' } });
    expect([wrongType.status, wrongType.body.code]).toEqual([400, 'validation_failed']);
    const foreign = await outsider.client.post(`${s.forkPath}/requests`, { json: { page_versions: [await latestVersion(s.deploy.id)] } });
    expect([foreign.status, foreign.body.code, foreign.body.errors]).toEqual([422, 'invalid_page_version', [{ pointer: '/page_versions/0', detail: 'not a version of a page of this fork' }]]);
    const second = await s.editFork(s.forkDeploy, '<p>changed again</p>');
    const twice = await outsider.client.post(`${s.forkPath}/requests`, { json: { page_versions: [version, second] } });
    expect([twice.status, twice.body.code]).toEqual([422, 'invalid_page_version']);
    const notFork = await manager.client.post(`${s.upstreamPath}/requests`, { json: { page_versions: [version] } });
    expect([notFork.status, notFork.body.code]).toEqual([422, 'not_a_fork']);
    expect(await app.em().count(MergeRequest, {})).toBe(before);
  });
});

describe('listRequests and getRequest', () => {
  it('lists by state, newest first, and shows one by index; 404 for what is not there or not readable', async () => {
    const s = await setup();
    const first = await s.request([await s.editFork(s.forkDeploy, '<p>one</p>')]);
    const second = await s.request([await s.editFork(s.forkOther, '<p>two</p>')]);
    expect((await manager.client.put(`${s.upstreamPath}/requests/${first.index}/close`)).status).toBe(200);
    const list = async (state?: string) =>
      (await reader.client.get(`${s.upstreamPath}/requests`, state ? { query: { state } } : {})).body.map((r: { index: number }) => r.index);
    expect(await list()).toEqual([second.index]);
    expect(await list('closed')).toEqual([first.index]);
    expect(await list('all')).toEqual([second.index, first.index]);
    expect(await list('merged')).toEqual([]);
    expect((await reader.client.get(`${s.upstreamPath}/requests`, { query: { state: 'bogus' } })).status).toBe(400);
    const shown = await outsider.client.get(`${s.upstreamPath}/requests/${second.index}`);
    expect(shown.body).toEqual({ ...second, can_open: true });
    expect((await outsider.client.get(`${s.upstreamPath}/requests/99`)).status).toBe(404);
    expect((await outsider.client.get(`/api/v1/up/${cast.notes.secret.slug}/requests`)).status).toBe(404);
    expect((await anonymous(app).get(`${s.upstreamPath}/requests`)).status).toBe(401);
  });
});

describe('openRequest and closeRequest', () => {
  it('follow the state rules: the author or a manager; a merged request is final', async () => {
    const s = await setup();
    const request = await s.request([await s.editFork(s.forkDeploy, '<p>one</p>')], { is_wip: true });
    const url = `${s.upstreamPath}/requests/${request.index}`;
    // milo is in the original's team but neither the author nor a manager
    expect((await member.client.put(`${url}/close`)).status).toBe(403);
    expect((await member.client.put(`${url}/open`)).status).toBe(403);
    const opened = await outsider.client.put(`${url}/open`);
    expect(opened.body).toMatchObject({ status: 'opened', is_wip: false, active: true });
    const closed = await manager.client.put(`${url}/close`);
    expect(closed.body).toMatchObject({ status: 'closed', is_closed: true, active: false, mergeable: false, mergeable_state: 'closed' });
    expect(closed.body.pages[0]).toMatchObject({ classification: null, conflicts: [] });
    // closing a closed request changes nothing
    expect((await manager.client.put(`${url}/close`)).body.updated_at).toBe(closed.body.updated_at);
    // a manager closing it tells the author
    expect(await notificationsOf(request.id)).toEqual([
      { user: manager.user.id, from: outsider.user.id, event: 'request', type: 'request' },
      { user: outsider.user.id, from: manager.user.id, event: 'close', type: 'request' },
    ]);
    expect((await outsider.client.put(`${url}/open`)).body.status).toBe('opened');
    expect((await manager.client.put(`${url}/merge`)).status).toBe(200);
    for (const action of ['open', 'close', 'merge']) {
      const answer = await manager.client.put(`${url}/${action}`);
      expect([action, answer.status, answer.body.code]).toEqual([action, 409, 'invalid_state']);
    }
    expect(await logsOf(request.id)).toEqual([
      ['request', 'create', outsider.user.id],
      ['request', 'open', outsider.user.id],
      ['request', 'close', manager.user.id],
      ['request', 'open', outsider.user.id],
      ['request', 'merge', manager.user.id],
    ]);
  });
});

describe('mergeRequest', () => {
  it('merges three ways: both sides changed different paragraphs -> one new version recording the request', async () => {
    const s = await setup();
    const version = await s.editFork(s.forkDeploy, DEPLOY.replace('clean checkout', 'tagged release'));
    const request = await s.request([version]);
    await s.editUpstream(s.deploy.id, DEPLOY.replace('the dashboard', 'the deploy dashboard'));
    const shown = await manager.client.get(`${s.upstreamPath}/requests/${request.index}`);
    expect(shown.body).toMatchObject({ mergeable: true, mergeable_state: 'outdated', pages: [{ classification: 'diverged', conflicts: [] }] });

    const merged = await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`);
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toMatchObject({ status: 'merged', is_merged: true, active: false, can_open: false, mergeable_state: 'merged', pages: [{ merged: true }] });
    expect(await contentOf(s.deploy.id)).toBe(DEPLOY.replace('clean checkout', 'tagged release').replace('the dashboard', 'the deploy dashboard'));
    const [latest] = await app.em().execute('select request_id, from_version_id, user_id from page_versions where page_id = ? order by index desc limit 1', [s.deploy.id]);
    expect(latest).toEqual({ request_id: request.id, from_version_id: version, user_id: manager.user.id });
    const stored = await app.em().findOneOrFail(MergeRequest, request.id);
    expect([stored.status, stored.mergedBy?.id, stored.mergedAt]).toEqual(['merged', manager.user.id, expect.any(Date)]);
    expect(await notificationsOf(request.id)).toContainEqual({ user: outsider.user.id, from: manager.user.id, event: 'merge', type: 'request' });
    // the fork's page lacks the original's own change: it keeps its base, and the fork can pull
    expect((await outsider.client.get(s.forkPath)).body.can_pull).toBe(true);
  });

  it('a fork-only change lands as is, and the fork page takes the new version as its base', async () => {
    const s = await setup();
    const version = await s.editFork(s.forkOther, '<p>other, better</p>');
    const request = await s.request([version]);
    expect((await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`)).status).toBe(200);
    expect(await contentOf(s.other.id)).toBe('<p>other, better</p>');
    const [row] = await app.em().execute<{ base_version_id: number }[]>('select base_version_id from pages where id = ?', [s.forkOther]);
    expect(row!.base_version_id).toBe(await latestVersion(s.other.id));
    expect((await outsider.client.get(s.forkPath)).body.can_pull).toBe(false);
  });

  it('creates the pages new in the fork, under the page their fork parent came from', async () => {
    const s = await setup();
    const created = await outsider.client.post(`${s.forkPath}/pages`, { json: { page: { title: 'Rollback', content: '<p>roll back</p>', parent: s.forkDeploy } } });
    const request = await s.request([await latestVersion(created.body.id)]);
    expect((await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`)).status).toBe(200);
    const [page] = await app.em().execute<{ id: number; parent_id: number; content: string }[]>("select id, parent_id, content from pages where note_id = ? and title = 'Rollback'", [s.note.id]);
    expect([page!.parent_id, page!.content]).toEqual([s.deploy.id, '<p>roll back</p>']);
    const [copy] = await app.em().execute<{ origin_page_id: number }[]>('select origin_page_id from pages where id = ?', [created.body.id]);
    expect(copy!.origin_page_id).toBe(page!.id);
  });

  it('merges the tree: a page the fork moved moves; moved to different parents on both sides is a `tree` conflict', async () => {
    const s = await setup();
    const third = await makePage(app, s.note, member, { title: 'Third' });
    const fork = await forkNote(app, s.note, outsider);
    const copies = new Map((await app.em().execute<{ id: number; origin_page_id: number }[]>('select id, origin_page_id from pages where note_id = ?', [fork.id])).map((row) => [row.origin_page_id, row.id]));
    const forkPath = `/api/v1/otto/${fork.id}`;
    const parentOf = async (pageId: number) => (await app.em().execute<{ parent_id: number | null }[]>('select parent_id from pages where id = ?', [pageId]))[0]!.parent_id;
    // the fork moves Other under Deploy (and edits it), the original leaves it: the move lands with the merge
    expect((await outsider.client.put(`${forkPath}/${copies.get(s.other.id)}`, { json: { page: { parent: copies.get(s.deploy.id), content: '<p>moved</p>' } } })).status).toBe(200);
    const moved = (await outsider.client.post(`${forkPath}/requests`, { json: { page_versions: [await latestVersion(copies.get(s.other.id)!)] } })).body;
    expect(moved).toMatchObject({ mergeable: true, pages: [{ conflicts: [] }] });
    expect((await manager.client.put(`${s.upstreamPath}/requests/${moved.index}/merge`)).status).toBe(200);
    expect(await parentOf(s.other.id)).toBe(s.deploy.id);
    // both move Third, to different parents
    expect((await outsider.client.put(`${forkPath}/${copies.get(third.id)}`, { json: { page: { parent: copies.get(s.deploy.id), content: '<p>3</p>' } } })).status).toBe(200);
    expect((await member.client.put(`${s.upstreamPath}/${third.id}`, { json: { page: { parent: s.other.id } } })).status).toBe(200);
    const crossed = (await outsider.client.post(`${forkPath}/requests`, { json: { page_versions: [await latestVersion(copies.get(third.id)!)] } })).body;
    const conflict = { page_id: copies.get(third.id), kind: 'tree', regions: [{ base: '', ours: String(s.other.id), theirs: String(s.deploy.id) }] };
    expect(crossed).toMatchObject({ mergeable: false, mergeable_state: 'conflicting', pages: [{ conflicts: [conflict] }] });
    const refused = await manager.client.put(`${s.upstreamPath}/requests/${crossed.index}/merge`);
    expect([refused.status, refused.body.conflicts]).toEqual([409, [conflict]]);
    const resolved = await manager.client.put(`${s.upstreamPath}/requests/${crossed.index}/merge`, { json: { resolutions: [{ page_id: copies.get(third.id), take: 'theirs' }] } });
    expect(resolved.status, resolved.text).toBe(200);
    expect(await parentOf(third.id)).toBe(s.deploy.id);
  });

  it('answers 409 merge_conflict with the regions and changes nothing; a resolution merges', async () => {
    const s = await setup();
    const version = await s.editFork(s.forkDeploy, DEPLOY.replace('clean checkout', 'tagged release'));
    const request = await s.request([version]);
    await s.editUpstream(s.deploy.id, DEPLOY.replace('clean checkout', 'fresh clone'));
    const shown = await manager.client.get(`${s.upstreamPath}/requests/${request.index}`);
    const region = { base: '<p>Run make deploy from a clean checkout.</p>\n', ours: '<p>Run make deploy from a fresh clone.</p>\n', theirs: '<p>Run make deploy from a tagged release.</p>\n' };
    expect(shown.body).toMatchObject({ mergeable: false, mergeable_state: 'conflicting', pages: [{ classification: 'diverged', conflicts: [{ page_id: s.forkDeploy, kind: 'content', regions: [region] }] }] });

    const versionsBefore = await versionCount(s.note.id);
    const notificationsBefore = await app.em().count(Notification, {});
    const refused = await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(refused.body.conflicts).toEqual([{ page_id: s.forkDeploy, kind: 'content', regions: [region] }]);
    expect(await versionCount(s.note.id)).toBe(versionsBefore);
    expect(await contentOf(s.deploy.id)).toBe(DEPLOY.replace('clean checkout', 'fresh clone'));
    expect((await app.em().findOneOrFail(MergeRequest, request.id)).status).toBe('opened');
    expect(await app.em().count(Notification, {})).toBe(notificationsBefore);

    const stale = await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`, { json: { expected_head_versions: [1] } });
    expect([stale.status, stale.body.code]).toEqual([409, 'version_conflict']);
    const resolved = await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`, {
      json: { expected_head_versions: [version], resolutions: [{ page_id: s.forkDeploy, take: 'theirs' }] },
    });
    expect(resolved.status, resolved.text).toBe(200);
    expect(await contentOf(s.deploy.id)).toBe(DEPLOY.replace('clean checkout', 'tagged release'));
  });

  it('takes a decision per region: one side for one, an edited text for another; the rest stays merged', async () => {
    const s = await setup();
    const three = '<h1>Deploy</h1>\n<p>Run make deploy from a clean checkout.</p>\n<p>Then check the dashboard.</p>\n<p>Page the on-call.</p>\n';
    await s.editUpstream(s.deploy.id, three);
    const fork = await forkNote(app, s.note, outsider);
    const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, s.deploy.id]);
    const forkPath = `/api/v1/otto/${fork.id}`;
    // the fork changes paragraphs 1, 2 and 3; the original changes 1 and 2 differently, not 3
    const theirs = three.replace('clean checkout', 'tagged release').replace('the dashboard', 'the status page').replace('Page the on-call', 'Page the on-call engineer');
    expect((await outsider.client.put(`${forkPath}/${copy!.id}`, { json: { page: { content: theirs } } })).status).toBe(200);
    await s.editUpstream(s.deploy.id, three.replace('clean checkout', 'fresh clone').replace('the dashboard', 'the graphs'));
    const request = (await outsider.client.post(`${forkPath}/requests`, { json: { page_versions: [await latestVersion(copy!.id)] } })).body;
    const shown = (await manager.client.get(`${s.upstreamPath}/requests/${request.index}`)).body;
    expect(shown.pages[0].conflicts[0].regions).toHaveLength(2);
    const url = `${s.upstreamPath}/requests/${request.index}/merge`;

    // a decision for each region but one, or one too many: the conflicts changed since they were read
    for (const regions of [[{ take: 'theirs' }], [{ take: 'theirs' }, { take: 'ours' }, { take: 'ours' }]]) {
      const stale = await manager.client.put(url, { json: { resolutions: [{ page_id: copy!.id, regions }] } });
      expect([stale.status, stale.body.code]).toEqual([409, 'stale_resolution']);
    }
    const empty = await manager.client.put(url, { json: { resolutions: [{ page_id: copy!.id, regions: [{ take: 'theirs' }, {}] }] } });
    expect([empty.status, empty.body.code, empty.body.errors?.[0]?.pointer]).toEqual([400, 'validation_failed', '/resolutions/0/regions/1']);
    expect(await contentOf(s.deploy.id)).toBe(three.replace('clean checkout', 'fresh clone').replace('the dashboard', 'the graphs'));

    // as a form, the way the browser's decision form sends it
    const merged = await manager.client.put(url, {
      form: { 'resolutions[0][page_id]': String(copy!.id), 'resolutions[0][regions][0][take]': 'theirs', 'resolutions[0][regions][1][content]': '<p>Then check the graphs and the status page.</p>\n' },
    });
    expect(merged.status, merged.text).toBe(200);
    expect(await contentOf(s.deploy.id)).toBe('<h1>Deploy</h1>\n<p>Run make deploy from a tagged release.</p>\n<p>Then check the graphs and the status page.</p>\n<p>Page the on-call engineer.</p>\n');
    // the version it wrote names the request; the versions before it name none
    const versions = (await manager.client.get(`${s.upstreamPath}/${s.deploy.id}/histories`)).body as { merged_request: { index: number; html_url: string } | null }[];
    expect(versions[0]!.merged_request).toEqual({ index: request.index, html_url: `${app.baseUrl}/up/${s.note.slug}/requests/${request.index}` });
    expect(versions.slice(1).every((version) => version.merged_request === null)).toBe(true);
    const one = await manager.client.get(`${s.upstreamPath}/${s.deploy.id}/histories/${versions.length}`);
    expect(one.body.merged_request).toEqual(versions[0]!.merged_request);
  });

  it('answers 403 to members, 422 to a draft, 404 for an unknown index', async () => {
    const s = await setup();
    const request = await s.request([await s.editFork(s.forkDeploy, '<p>x</p>')], { is_wip: true });
    const url = `${s.upstreamPath}/requests/${request.index}/merge`;
    expect((await member.client.put(url)).status).toBe(403);
    expect((await outsider.client.put(url)).status).toBe(403);
    const draft = await manager.client.put(url);
    expect([draft.status, draft.body.code]).toEqual([422, 'work_in_progress']);
    expect((await manager.client.put(`${s.upstreamPath}/requests/77/merge`)).status).toBe(404);
    expect((await anonymous(app).put(url)).status).toBe(401);
  });
});

describe('big pages', () => {
  it('are merged off the event loop when a request is read: mergeable null until the worker answers', async () => {
    const s = await setup();
    const paragraphs = Array.from({ length: 5000 }, (_, i) => `<p>Paragraph ${i} of a long page, with some words in it.</p>\n`);
    const big = paragraphs.join('');
    expect(big.length).toBeGreaterThan(256 * 1024);
    await s.editUpstream(s.other.id, big);
    const fork = await forkNote(app, s.note, outsider);
    const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, s.other.id]);
    expect((await outsider.client.put(`/api/v1/otto/${fork.id}/${copy!.id}`, { json: { page: { content: big.replace('Paragraph 10 ', 'Paragraph ten ') } } })).status).toBe(200);
    await s.editUpstream(s.other.id, big.replace('Paragraph 3000 ', 'Paragraph three thousand '));
    const request = (await outsider.client.post(`/api/v1/otto/${fork.id}/requests`, { json: { page_versions: [await latestVersion(copy!.id)] } })).body;
    expect(request).toMatchObject({ mergeable: null, mergeable_state: null, mergeable_reason: expect.stringContaining('being computed'), pages: [{ classification: 'diverged' }] });
    let shown = request;
    for (let i = 0; i < 100 && shown.mergeable === null; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      shown = (await manager.client.get(`${s.upstreamPath}/requests/${request.index}`)).body;
    }
    expect(shown).toMatchObject({ mergeable: true, mergeable_state: 'outdated', mergeable_reason: null });
    expect((await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`)).status).toBe(200);
    expect(await contentOf(s.other.id)).toBe(big.replace('Paragraph 10 ', 'Paragraph ten ').replace('Paragraph 3000 ', 'Paragraph three thousand '));
  });

  it('a list loads page contents up to a bound; past it a merge not in memory yet is unknown, never guessed', async () => {
    const s = await setup();
    const request = await s.request([await s.editFork(s.forkDeploy, DEPLOY.replace('Deploy<', 'Ship<'))]);
    await s.editUpstream(s.deploy.id, DEPLOY.replace('dashboard', 'board')); // a new key: not in memory
    const rows = await loadRequestPages(app.em(), [request.id], { contentBytes: 0 });
    expect(rows[0]!.f_content).toBeUndefined();
    expect(mergeabilityOf('opened', rows)).toMatchObject({ mergeable: null, state: null, reason: expect.stringContaining('read the request itself') });
    const shown = await manager.client.get(`${s.upstreamPath}/requests/${request.index}`);
    expect(shown.body).toMatchObject({ mergeable: true, mergeable_state: 'outdated', pages: [{ classification: 'diverged' }] });
  });
});

describe('a request\'s lifecycle through the generated client', () => {
  it('create -> close -> open -> merge, with its notifications and log entries', async () => {
    const s = await setup();
    const clientFor = (actor: Actor) => createClient({ baseUrl: app.baseUrl, auth: () => actor.token });
    const version = await s.editFork(s.forkDeploy, DEPLOY.replace('Deploy<', 'Deploying<'));
    const fork = { team: 'otto', note: String(s.fork.id) };
    const created = await createRequest({ client: clientFor(outsider), path: fork, body: { page_versions: [version] }, throwOnError: true });
    const path = { team: 'up', note: s.note.slug!, index: created.data.index };
    expect((await closeRequest({ client: clientFor(outsider), path, throwOnError: true })).data.status).toBe('closed');
    expect((await openRequest({ client: clientFor(manager), path, throwOnError: true })).data.status).toBe('opened');
    const listed = await listRequests({ client: clientFor(reader), path: { team: 'up', note: s.note.slug! }, query: { state: 'open' }, throwOnError: true });
    expect(listed.data.map((r) => r.id)).toEqual([created.data.id]);
    const merged = await mergeRequest({ client: clientFor(manager), path, throwOnError: true });
    expect(merged.data).toMatchObject({ status: 'merged', is_merged: true });
    expect((await getRequest({ client: clientFor(outsider), path, throwOnError: true })).data.mergeable_state).toBe('merged');
    expect(await contentOf(s.deploy.id)).toBe(DEPLOY.replace('Deploy<', 'Deploying<'));
    // the author closed it himself: no `close`; the manager merged it: `merge`
    expect(await notificationsOf(created.data.id)).toEqual([
      { user: manager.user.id, from: outsider.user.id, event: 'request', type: 'request' },
      { user: outsider.user.id, from: manager.user.id, event: 'merge', type: 'request' },
    ]);
    expect(await logsOf(created.data.id)).toEqual([
      ['request', 'create', outsider.user.id],
      ['request', 'close', outsider.user.id],
      ['request', 'open', manager.user.id],
      ['request', 'merge', manager.user.id],
    ]);
    // the notification and the log embed the request as getRequest presents it
    const told = (await listNotifications({ client: clientFor(outsider), throwOnError: true })).data.find((item) => item.event === 'merge');
    expect(told).toMatchObject({ type: 'request', request: { id: created.data.id, index: created.data.index, status: 'merged' } });
    const logged = (await listLogs({ client: clientFor(manager), query: { note_id: s.note.id }, throwOnError: true })).data;
    expect(logged.find((entry) => entry.type === 'request' && entry.action === 'merge')).toMatchObject({ request: { id: created.data.id }, note: { id: s.note.id } });
  });
});
