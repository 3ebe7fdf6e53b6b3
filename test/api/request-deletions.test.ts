// Requests that delete pages (`deleted_pages`, request page `type: delete`), and proposed pages whose original was
// deleted since the fork's base (an `update` that is a `delete_modify` conflict, not a page new in the fork).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makePage, type Actor } from '../support/factories.ts';
import { contentOfPage, DEPLOY, forkedRunbook, forkNote, latestVersionOf } from '../support/forks.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'secret'>;
let manager: Actor, member: Actor, outsider: Actor;

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'up', usernames: { manager: 'mona', member: 'milo', outsider: 'otto', reader: 'rita' }, notes: { secret: { isPrivate: true } } });
  ({ manager, member, outsider } = cast);
});
afterAll(async () => app?.close());

const pageIds = async (noteId: number) =>
  (await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? order by id', [noteId])).map((row) => row.id);
const storedEntries = async (requestId: number) =>
  app.em().execute<{ type: string; from_page_id: number | null; page_version_id: number | null; to_page_id: number | null; base_version_id: number | null; merged: boolean }[]>(
    'select type, from_page_id, page_version_id, to_page_id, base_version_id, merged from request_pages where request_id = ? order by id',
    [requestId],
  );

/** The runbook forked, with the fork's copy of Deploy deleted (as otto). */
async function forkWithoutDeploy() {
  const s = await forkedRunbook(app, cast);
  const [{ base }] = await app.em().execute<[{ base: number }]>('select base_version_id as base from pages where id = ?', [s.forkDeploy]);
  expect(base).toBe(await latestVersionOf(app, s.deploy.id));
  expect((await outsider.client.delete(`${s.forkPath}/${s.forkDeploy}`)).status).toBe(204);
  return { ...s, base };
}

describe('a request deleting pages (deleted_pages)', () => {
  it('proposes the deletion as a `delete` entry and merging deletes the original\'s page', async () => {
    const s = await forkWithoutDeploy();
    const answer = await outsider.client.post(`${s.forkPath}/requests`, { json: { deleted_pages: [s.deploy.id] } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ mergeable: true, mergeable_state: 'clean' });
    expect(answer.body.pages).toHaveLength(1);
    expect(answer.body.pages[0]).toMatchObject({ type: 'delete', path: `up / Runbook ${s.number} / Deploy`, merged: false, classification: 'fork_only', conflicts: [] });
    expect(answer.body.pages[0].diff).toContain('<del>');
    const [entry] = await storedEntries(answer.body.id);
    expect(entry).toMatchObject({ type: 'delete', from_page_id: null, page_version_id: null, to_page_id: s.deploy.id, base_version_id: s.base, merged: false });

    const merged = await manager.client.put(`${s.upstreamPath}/requests/${answer.body.index}/merge`);
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toMatchObject({ status: 'merged', pages: [{ type: 'delete', merged: true }] });
    expect(await pageIds(s.note.id)).toEqual([s.other.id]);
    expect((await member.client.get(`${s.upstreamPath}/${s.deploy.id}`)).status).toBe(404);
  });

  it('with a form body too, beside page versions', async () => {
    const s = await forkWithoutDeploy();
    const version = await s.editFork(s.forkOther, '<p>other, edited</p>');
    const answer = await outsider.client.post(`${s.forkPath}/requests`, { form: `page_versions[]=${version}&deleted_pages[]=${s.deploy.id}` });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.pages.map((page: { type: string }) => page.type)).toEqual(['update', 'delete']);
    expect((await manager.client.put(`${s.upstreamPath}/requests/${answer.body.index}/merge`)).status).toBe(200);
    expect(await pageIds(s.note.id)).toEqual([s.other.id]);
    expect(await contentOfPage(app, s.other.id)).toBe('<p>other, edited</p>');
  });

  it('deleted in the fork and edited in the original: a `delete_modify` conflict naming the original\'s page', async () => {
    const s = await forkWithoutDeploy();
    await s.editUpstream(s.deploy.id, DEPLOY.replace('clean checkout', 'fresh clone'));
    const request = await s.request([], { deleted_pages: [s.deploy.id] });
    expect(request).toMatchObject({ mergeable: false, mergeable_state: 'conflicting' });
    expect(request.pages[0]).toMatchObject({ type: 'delete', classification: 'diverged', conflicts: [{ page_id: s.deploy.id, kind: 'delete_modify' }] });
    const url = `${s.upstreamPath}/requests/${request.index}/merge`;

    const refused = await manager.client.put(url);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(refused.body.conflicts).toEqual([{ page_id: s.deploy.id, kind: 'delete_modify', regions: [expect.objectContaining({ theirs: '' })] }]);
    expect(await contentOfPage(app, s.deploy.id)).toBe(DEPLOY.replace('clean checkout', 'fresh clone'));

    const kept = await manager.client.put(url, { json: { resolutions: [{ page_id: s.deploy.id, take: 'ours' }] } });
    expect(kept.status, kept.text).toBe(200);
    expect(await pageIds(s.note.id)).toEqual([s.deploy.id, s.other.id]);
    expect(await contentOfPage(app, s.deploy.id)).toBe(DEPLOY.replace('clean checkout', 'fresh clone'));
  });

  it('resolved `theirs`, the deletion wins', async () => {
    const s = await forkWithoutDeploy();
    await s.editUpstream(s.deploy.id, '<p>changed upstream</p>');
    const request = await s.request([], { deleted_pages: [s.deploy.id] });
    const merged = await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`, { json: { resolutions: [{ page_id: s.deploy.id, take: 'theirs' }] } });
    expect(merged.status, merged.text).toBe(200);
    expect(await pageIds(s.note.id)).toEqual([s.other.id]);
  });

  it('a page with sub-pages the request does not delete is a conflict; naming them too deletes the subtree', async () => {
    const s = await forkedRunbook(app, cast);
    const child = await makePage(app, s.note, member, { title: 'Rollback', parent: s.deploy.id });
    const fork = await forkNote(app, s.note, outsider);
    const forkPath = `/api/v1/${fork.team.name}/${fork.id}`;
    const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, s.deploy.id]);
    expect((await outsider.client.delete(`${forkPath}/${copy!.id}`)).status).toBe(204);

    const parentOnly = await outsider.client.post(`${forkPath}/requests`, { json: { deleted_pages: [s.deploy.id] } });
    expect(parentOnly.status, parentOnly.text).toBe(200);
    expect(parentOnly.body).toMatchObject({ mergeable: false, pages: [{ type: 'delete', conflicts: [{ page_id: s.deploy.id, kind: 'delete_modify' }] }] });
    const refused = await manager.client.put(`${s.upstreamPath}/requests/${parentOnly.body.index}/merge`);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(await pageIds(s.note.id)).toEqual([s.deploy.id, s.other.id, child.id]);

    const both = await outsider.client.post(`${forkPath}/requests`, { json: { deleted_pages: [s.deploy.id, child.id] } });
    expect(both.body).toMatchObject({ mergeable: true, pages: [{ type: 'delete', conflicts: [] }, { type: 'delete', conflicts: [] }] });
    expect((await manager.client.put(`${s.upstreamPath}/requests/${both.body.index}/merge`)).status).toBe(200);
    expect(await pageIds(s.note.id)).toEqual([s.other.id]);
  });

  it('answers 422 for a page the fork still has, never had, or gives twice, and for a request proposing nothing; 401 and 403 as createRequest', async () => {
    const s = await forkWithoutDeploy();
    const count = async () => Number((await app.em().execute<{ n: string }[]>('select count(*) as n from requests where to_note_id = ?', [s.note.id]))[0]!.n);
    const cases: [unknown, string, string | undefined][] = [
      [{ deleted_pages: [s.other.id] }, 'invalid_deleted_page', '/deleted_pages/0'], // the fork still has its copy
      [{ deleted_pages: [s.forkOther] }, 'invalid_deleted_page', '/deleted_pages/0'], // a page of the fork, not of the original
      [{ deleted_pages: [2_000_000_000] }, 'invalid_deleted_page', '/deleted_pages/0'],
      [{ deleted_pages: [s.deploy.id, s.deploy.id] }, 'invalid_deleted_page', '/deleted_pages/1'],
      [{ page_versions: [], deleted_pages: [] }, 'invalid_page_version', '/page_versions'],
    ];
    for (const [json, code, pointer] of cases) {
      const answer = await outsider.client.post(`${s.forkPath}/requests`, { json });
      expect([answer.status, answer.body.code, answer.body.errors?.[0]?.pointer], JSON.stringify(json)).toEqual([422, code, pointer]);
    }
    const badType = await outsider.client.post(`${s.forkPath}/requests`, { json: { deleted_pages: ['x'] } });
    expect([badType.status, badType.body.code]).toEqual([400, 'validation_failed']);
    expect((await anonymous(app).post(`${s.forkPath}/requests`, { json: { deleted_pages: [s.deploy.id] } })).status).toBe(401);
    expect((await member.client.post(`${s.forkPath}/requests`, { json: { deleted_pages: [s.deploy.id] } })).status).toBe(403);
    expect(await count()).toBe(0);
  });
});

describe('a proposed page the original deleted since the fork\'s base', () => {
  it('is an `update` with a `delete_modify` conflict; `theirs` brings it back, `ours` leaves it deleted', async () => {
    const s = await forkedRunbook(app, cast);
    const version = await s.editFork(s.forkDeploy, DEPLOY.replace('clean checkout', 'tagged release'));
    expect((await member.client.delete(`${s.upstreamPath}/${s.deploy.id}`)).status).toBe(204);
    const request = await s.request([version]);
    expect(request).toMatchObject({ mergeable: false, mergeable_state: 'conflicting' });
    expect(request.pages[0]).toMatchObject({ type: 'update', conflicts: [{ page_id: s.forkDeploy, kind: 'delete_modify' }] });
    const url = `${s.upstreamPath}/requests/${request.index}/merge`;
    const refused = await manager.client.put(url);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(await pageIds(s.note.id)).toEqual([s.other.id]);

    const again = await s.request([version]);
    expect((await manager.client.put(`${s.upstreamPath}/requests/${again.index}/merge`, { json: { resolutions: [{ page_id: s.forkDeploy, take: 'ours' }] } })).status).toBe(200);
    expect(await pageIds(s.note.id)).toEqual([s.other.id]);

    const third = await s.request([version]);
    expect((await manager.client.put(`${s.upstreamPath}/requests/${third.index}/merge`, { json: { resolutions: [{ page_id: s.forkDeploy, take: 'theirs' }] } })).status).toBe(200);
    const pages = await app.em().execute<{ id: number; content: string }[]>('select id, content from pages where note_id = ? order by id', [s.note.id]);
    expect(pages.map((page) => page.content)).toEqual(['<p>other</p>', DEPLOY.replace('clean checkout', 'tagged release')]);
  });
});

describe('pulling deletions', () => {
  const checks = async () => (await outsider.client.get('/api/v1/checks', { query: { type: 'pull' } })).body.map((note: { id: number }) => note.id);
  const pageView = async (s: { forkPath: string }, pageId: number) => (await outsider.client.get(`${s.forkPath}/${pageId}`)).body;

  it('a page the original deleted goes from the fork too where the fork never changed it; an edited one asks', async () => {
    const s = await forkedRunbook(app, cast);
    const edited = await s.editFork(s.forkOther, '<p>other, edited in the fork</p>');
    expect(edited).toBeGreaterThan(0);
    expect(await checks()).not.toContain(s.fork.id);
    for (const id of [s.deploy.id, s.other.id]) expect((await member.client.delete(`${s.upstreamPath}/${id}`)).status).toBe(204);
    expect(await checks()).toContain(s.fork.id);
    expect((await pageView(s, s.forkOther)).note.can_pull).toBe(true);

    const refused = await outsider.client.post(`${s.forkPath}/pull`);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(refused.body.conflicts).toEqual([{ page_id: s.forkOther, kind: 'delete_modify', regions: [{ base: '', ours: '<p>other, edited in the fork</p>', theirs: '' }] }]);
    expect(await pageIds(s.fork.id)).toEqual([s.forkDeploy, s.forkOther]);

    const kept = await outsider.client.post(`${s.forkPath}/pull`, { json: { resolutions: [{ page_id: s.forkOther, take: 'ours' }] } });
    expect(kept.status, kept.text).toBe(200);
    expect(await pageIds(s.fork.id)).toEqual([s.forkOther]);
    expect(await contentOfPage(app, s.forkOther)).toBe('<p>other, edited in the fork</p>');
    expect(await checks()).not.toContain(s.fork.id);
    expect((await outsider.client.post(`${s.forkPath}/pull`)).status).toBe(200);
    expect(await pageIds(s.fork.id)).toEqual([s.forkOther]);
  });

  it('a page the fork deleted and the original changed since asks: `theirs` brings it back, `ours` keeps it deleted', async () => {
    const s = await forkWithoutDeploy();
    expect(await checks()).not.toContain(s.fork.id);
    await s.editUpstream(s.deploy.id, '<p>changed upstream</p>');
    expect(await checks()).toContain(s.fork.id);
    const refused = await outsider.client.post(`${s.forkPath}/pull`);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(refused.body.conflicts).toEqual([{ page_id: s.deploy.id, kind: 'delete_modify', regions: [{ base: DEPLOY, ours: '', theirs: '<p>changed upstream</p>' }] }]);

    const kept = await outsider.client.post(`${s.forkPath}/pull`, { json: { resolutions: [{ page_id: s.deploy.id, take: 'ours' }] } });
    expect(kept.status, kept.text).toBe(200);
    expect(await pageIds(s.fork.id)).toEqual([s.forkOther]);
    expect(await checks()).not.toContain(s.fork.id);

    await s.editUpstream(s.deploy.id, '<p>changed upstream again</p>');
    const back = await outsider.client.post(`${s.forkPath}/pull`, { json: { resolutions: [{ page_id: s.deploy.id, take: 'theirs' }] } });
    expect(back.status, back.text).toBe(200);
    const pages = await app.em().execute<{ content: string; origin_page_id: number }[]>('select content, origin_page_id from pages where note_id = ? order by id', [s.fork.id]);
    expect(pages).toEqual([{ content: '<p>other</p>', origin_page_id: s.other.id }, { content: '<p>changed upstream again</p>', origin_page_id: s.deploy.id }]);
    expect(await checks()).not.toContain(s.fork.id);
  });
});

describe('merge and pull bodies as forms', () => {
  it('take resolutions[n][page_id] and resolutions[n][take] with bracket names', async () => {
    const s = await forkWithoutDeploy();
    await s.editUpstream(s.deploy.id, '<p>changed upstream</p>');
    const request = await s.request([], { deleted_pages: [s.deploy.id] });
    const merged = await manager.client.put(`${s.upstreamPath}/requests/${request.index}/merge`, {
      form: `resolutions[0][page_id]=${s.deploy.id}&resolutions[0][take]=theirs`,
    });
    expect(merged.status, merged.text).toBe(200);
    expect(await pageIds(s.note.id)).toEqual([s.other.id]);

    const t = await forkWithoutDeploy();
    await t.editUpstream(t.deploy.id, '<p>changed upstream</p>');
    const pulled = await outsider.client.post(`${t.forkPath}/pull`, { form: `resolutions[0][page_id]=${t.deploy.id}&resolutions[0][take]=theirs` });
    expect(pulled.status, pulled.text).toBe(200);
    expect((await pageIds(t.fork.id)).length).toBe(2);
    const bad = await outsider.client.post(`${t.forkPath}/pull`, { form: 'resolutions[0][page_id]=x' });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
  });
});
