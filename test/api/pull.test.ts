import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, type Actor } from '../support/factories.ts';
import { contentOfPage, forkNote } from '../support/forks.ts';
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

const TEXT = '<p>First paragraph here.</p>\n<p>Second paragraph here.</p>\n';

let counter = 0;
async function setup() {
  counter += 1;
  const note = await makeNote(app, cast.team, manager.user, { title: `Guide ${counter}`, slug: `guide-${counter}` });
  const page = await makePage(app, note, member, { title: 'Intro', content: TEXT });
  const fork = await forkNote(app, note, outsider);
  const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, page.id]);
  return {
    note,
    page,
    fork,
    copyId: copy!.id,
    upstreamPath: `/api/v1/up/${note.slug}`,
    forkPath: `/api/v1/otto/${fork.id}`,
  };
}
const contentOf = (pageId: number) => contentOfPage(app, pageId);
const checks = async (actor: Actor) => (await actor.client.get('/api/v1/checks', { query: { type: 'pull' } })).body.map((note: { id: number }) => note.id);

describe('listChecks and pullFork', () => {
  it('lists the fork once the original changed; pull merges three ways and moves the bases', async () => {
    const s = await setup();
    expect(await checks(outsider)).not.toContain(s.fork.id);
    await member.client.put(`${s.upstreamPath}/${s.page.id}`, { json: { page: { content: TEXT.replace('First', 'Opening') } } });
    await outsider.client.put(`${s.forkPath}/${s.copyId}`, { json: { page: { content: TEXT.replace('Second', 'Closing') } } });
    const added = await makePage(app, s.note, member, { title: 'Appendix', content: '<p>more</p>', parent: s.page.id });
    const listed = await outsider.client.get('/api/v1/checks');
    expect(listed.status).toBe(200);
    expect(listed.body.find((note: { id: number }) => note.id === s.fork.id)).toMatchObject({ can_pull: true, forked: { id: s.note.id } });
    // only the fork's team sees it
    expect(await checks(member)).not.toContain(s.fork.id);

    const before = (await app.em().findOneOrFail(Note, s.fork.id)).pulledAt!;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const pulled = await outsider.client.post(`${s.forkPath}/pull`);
    expect(pulled.status, pulled.text).toBe(200);
    expect(pulled.body).toMatchObject({ id: s.fork.id, user_id: outsider.user.id, can_pull: false, forked: { id: s.note.id } });
    expect(new Date(pulled.body.pulled_at).getTime()).toBeGreaterThan(before.getTime());
    expect(await contentOf(s.copyId)).toBe(TEXT.replace('First', 'Opening').replace('Second', 'Closing'));
    // the new page of the original is copied in, under the copy of its parent
    const [copy] = await app.em().execute<{ parent_id: number; content: string }[]>('select parent_id, content from pages where note_id = ? and origin_page_id = ?', [s.fork.id, added.id]);
    expect(copy).toEqual({ parent_id: s.copyId, content: '<p>more</p>' });
    expect(await checks(outsider)).not.toContain(s.fork.id);
    const log = await app.em().findOneOrFail(Log, { note: s.fork.id, action: 'pull' });
    expect([log.type, log.user.id, log.summary]).toEqual(['note', outsider.user.id, { title: s.fork.title, original_id: s.note.id, pages: 2 }]);
  });

  it('a page the fork deleted is not a change to pull; a page new in the original is, until it is pulled', async () => {
    // timestamps have whole seconds, and "new since the last pull" is created in or after the second of the pull
    // (what pullFork copies in): the page here is made a second before the fork
    counter += 1;
    const note = await makeNote(app, cast.team, manager.user, { title: `Guide ${counter}`, slug: `guide-${counter}` });
    const page = await makePage(app, note, member, { title: 'Intro', content: TEXT });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const fork = await forkNote(app, note, outsider);
    const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, page.id]);
    const s = { note, page, fork, copyId: copy!.id, upstreamPath: `/api/v1/up/${note.slug}`, forkPath: `/api/v1/otto/${fork.id}` };
    expect((await outsider.client.delete(`${s.forkPath}/${s.copyId}`)).status).toBe(204);
    expect((await outsider.client.get(s.forkPath)).body.can_pull).toBe(false);
    expect(await checks(outsider)).not.toContain(s.fork.id);
    // a page created in the original after the fork's last pull is
    const added = await makePage(app, s.note, member, { title: 'Added', content: '<p>new</p>' });
    expect((await outsider.client.get(s.forkPath)).body.can_pull).toBe(true);
    expect(await checks(outsider)).toContain(s.fork.id);
    expect((await outsider.client.post(`${s.forkPath}/pull`)).status).toBe(200);
    expect(await app.em().execute('select id from pages where note_id = ? and origin_page_id = ?', [s.fork.id, s.page.id])).toEqual([]);
    expect((await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [s.fork.id, added.id]))).toHaveLength(1);
    expect((await outsider.client.get(s.forkPath)).body.can_pull).toBe(false);
    expect(await checks(outsider)).not.toContain(s.fork.id);
  });

  it('answers 409 merge_conflict and changes nothing; a resolution pulls', async () => {
    const s = await setup();
    await member.client.put(`${s.upstreamPath}/${s.page.id}`, { json: { page: { content: TEXT.replace('First paragraph', 'Upstream words') } } });
    await outsider.client.put(`${s.forkPath}/${s.copyId}`, { json: { page: { content: TEXT.replace('First paragraph', 'Fork words') } } });
    const versionsBefore = await app.em().execute('select id from page_versions where note_id = ?', [s.fork.id]);
    const refused = await outsider.client.post(`${s.forkPath}/pull`);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(refused.body.conflicts).toEqual([{
      page_id: s.copyId,
      kind: 'content',
      regions: [{ base: '<p>First paragraph here.</p>\n', ours: '<p>Fork words here.</p>\n', theirs: '<p>Upstream words here.</p>\n' }],
    }]);
    expect(await contentOf(s.copyId)).toBe(TEXT.replace('First paragraph', 'Fork words'));
    expect(await app.em().execute('select id from page_versions where note_id = ?', [s.fork.id])).toEqual(versionsBefore);
    const resolved = await outsider.client.post(`${s.forkPath}/pull`, { json: { resolutions: [{ page_id: s.copyId, content: '<p>Both.</p>' }] } });
    expect(resolved.status, resolved.text).toBe(200);
    expect(await contentOf(s.copyId)).toBe('<p>Both.</p>');
  });

  it('merges the tree three ways: a move on one side is taken, moves to different parents conflict (`tree`)', async () => {
    const s = await setup();
    const a = await makePage(app, s.note, member, { title: 'A' });
    const b = await makePage(app, s.note, member, { title: 'B' });
    const c = await makePage(app, s.note, member, { title: 'C' });
    expect((await outsider.client.post(`${s.forkPath}/pull`)).status).toBe(200);
    const copies = new Map((await app.em().execute<{ id: number; origin_page_id: number }[]>('select id, origin_page_id from pages where note_id = ?', [s.fork.id])).map((row) => [row.origin_page_id, row.id]));
    const parentOf = async (pageId: number) => (await app.em().execute<{ parent_id: number | null }[]>('select parent_id from pages where id = ?', [pageId]))[0]!.parent_id;
    const move = (actor: Actor, path: string, parent: number | null) => actor.client.put(path, { json: { page: { parent } } });

    expect((await move(member, `${s.upstreamPath}/${c.id}`, a.id)).status).toBe(200);
    expect((await outsider.client.post(`${s.forkPath}/pull`)).status).toBe(200);
    expect(await parentOf(copies.get(c.id)!)).toBe(copies.get(a.id));

    expect((await move(member, `${s.upstreamPath}/${c.id}`, b.id)).status).toBe(200);
    expect((await move(outsider, `${s.forkPath}/${copies.get(c.id)}`, null)).status).toBe(200);
    const refused = await outsider.client.post(`${s.forkPath}/pull`);
    expect([refused.status, refused.body.code]).toEqual([409, 'merge_conflict']);
    expect(refused.body.conflicts).toEqual([{ page_id: copies.get(c.id), kind: 'tree', regions: [{ base: String(a.id), ours: '', theirs: String(b.id) }] }]);
    expect(await parentOf(copies.get(c.id)!)).toBe(null);
    const resolved = await outsider.client.post(`${s.forkPath}/pull`, { json: { resolutions: [{ page_id: copies.get(c.id), take: 'theirs' }] } });
    expect(resolved.status, resolved.text).toBe(200);
    expect(await parentOf(copies.get(c.id)!)).toBe(copies.get(b.id));
  });

  it('answers 401, 404, 403 and 422', async () => {
    const s = await setup();
    expect((await anonymous(app).post(`${s.forkPath}/pull`)).status).toBe(401);
    expect((await anonymous(app).get('/api/v1/checks')).status).toBe(401);
    expect((await outsider.client.post(`/api/v1/up/${cast.notes.secret.slug}/pull`)).status).toBe(404);
    expect((await member.client.post(`${s.forkPath}/pull`)).status).toBe(403);
    const notFork = await manager.client.post(`${s.upstreamPath}/pull`);
    expect([notFork.status, notFork.body.code]).toEqual([422, 'not_a_fork']);
    expect((await reader.client.get('/api/v1/checks', { query: { type: 'other' } })).status).toBe(400);
  });
});
