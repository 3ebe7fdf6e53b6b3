import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addMember, anonymous, makeNote, makePage, makeTeam, type Actor } from '../support/factories.ts';
import { bulkPages } from '../support/forks.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'open' | 'secret'>;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  cast = await makeScenario(app, { team: 'upstream', notes: { open: { title: 'Runbook' }, secret: { title: 'Secret', isPrivate: true } } });
  ({ manager, member, outsider, reader } = cast);
});
afterAll(async () => app?.close());

type PageRow = { id: number; parent_id: number | null; position: number; title: string; content: string; origin_page_id: number | null; base_version_id: number | null };
const pagesOf = (noteId: number) =>
  app.em().execute<PageRow[]>('select id, parent_id, position, title, content, origin_page_id, base_version_id from pages where note_id = ? order by origin_page_id', [noteId]);
const latestVersionId = async (pageId: number) =>
  (await app.em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [pageId]))[0]!.id;

describe('createFork', () => {
  it('copies the note and its page tree into the caller\'s default team, each page with its origin and base', async () => {
    const note = await makeNote(app, cast.team, manager.user, { title: 'Handbook', slug: 'handbook', description: 'How we work' });
    const top = await makePage(app, note, member, { title: 'Top', content: '<p>top</p>' });
    const child = await makePage(app, note, member, { title: 'Child', content: '<p>child</p>', parent: top.id });
    await member.client.put(`/api/v1/upstream/handbook/${child.id}`, { json: { page: { content: '<p>child v2</p>' } } });

    const answer = await outsider.client.post('/api/v1/upstream/handbook/forks');
    expect(answer.status, answer.text).toBe(200);
    const fork = answer.body;
    expect(fork).toMatchObject({
      title: 'Copy of Handbook (upstream)',
      is_private: false,
      user_id: outsider.user.id,
      team: { name: outsider.user.username },
      forked: { id: note.id, slug: 'handbook' },
      name: String(fork.id),
      model: 'note',
    });
    expect(fork).not.toHaveProperty('slug');
    expect(fork.pulled_at).toMatch(/\.000Z$/);

    const stored = await app.em().findOneOrFail(Note, fork.id);
    expect([stored.forkedFrom?.id, stored.user.id, stored.slug, stored.description, stored.pulledAt]).toEqual([note.id, outsider.user.id, null, 'How we work', expect.any(Date)]);
    const [copyTop, copyChild] = await pagesOf(fork.id);
    expect(copyTop).toMatchObject({ parent_id: null, title: 'Top', content: '<p>top</p>', origin_page_id: top.id, base_version_id: await latestVersionId(top.id) });
    expect(copyChild).toMatchObject({ parent_id: copyTop!.id, title: 'Child', content: '<p>child v2</p>', origin_page_id: child.id, base_version_id: await latestVersionId(child.id) });
    // the cover (the first page) is the copy of the cover
    expect(stored.coverPageId).toBe(copyTop!.id);
    // no versions are written by the copy
    expect(await app.em().execute('select id from page_versions where note_id = ?', [fork.id])).toEqual([]);
    const log = await app.em().findOneOrFail(Log, { note: fork.id, type: 'note' });
    expect([log.action, log.user.id, log.summary]).toEqual(['fork', outsider.user.id, { title: fork.title, original_id: note.id }]);
    // the fork reads back as a fork
    const shown = await outsider.client.get(`/api/v1/${outsider.user.username}/${fork.id}`);
    expect(shown.body).toMatchObject({ forked: { id: note.id }, can_request: true, can_pull: false });
  });

  it('takes a title and a team the caller is a member of (form body too)', async () => {
    const team = await makeTeam(app, 'forkers', [{ user: member.user, role: 'member' }]);
    const answer = await member.client.post(`/api/v1/upstream/${cast.notes.open.slug}/forks`, { form: { title: 'My copy', team: 'FORKERS' } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ title: 'My copy', team: { id: team.id } });
  });

  it('keeps a private note private', async () => {
    const answer = await member.client.post(`/api/v1/upstream/${cast.notes.secret.slug}/forks`, { json: {} });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ is_private: true, title: 'Copy of Secret (upstream)' });
  });

  it('answers 401 without a token', async () => {
    expect((await anonymous(app).post(`/api/v1/upstream/${cast.notes.open.slug}/forks`)).status).toBe(401);
  });

  it('answers 404 for a private note of another team, and changes nothing', async () => {
    const before = await app.em().count(Note, {});
    const answer = await outsider.client.post(`/api/v1/upstream/${cast.notes.secret.slug}/forks`);
    expect([answer.status, answer.body.code]).toEqual([404, 'not_found']);
    expect(await app.em().count(Note, {})).toBe(before);
  });

  it('answers 403 for a team the caller is not in, 422 for a team that does not exist', async () => {
    const theirs = await outsider.client.post(`/api/v1/upstream/${cast.notes.open.slug}/forks`, { json: { team: 'upstream' } });
    expect([theirs.status, theirs.body.code]).toEqual([403, 'forbidden']);
    const none = await outsider.client.post(`/api/v1/upstream/${cast.notes.open.slug}/forks`, { json: { team: 'nosuchteam' } });
    expect([none.status, none.body.code]).toEqual([422, 'unknown_team']);
  });

  it('answers 403 to a read-only token, 400 for a title too long', async () => {
    expect((await reader.client.post(`/api/v1/upstream/${cast.notes.open.slug}/forks`)).status).toBe(403);
    const long = await member.client.post(`/api/v1/upstream/${cast.notes.open.slug}/forks`, { json: { title: 'x'.repeat(256) } });
    expect([long.status, long.body.code]).toEqual([400, 'validation_failed']);
  });

  it('copies 1,000 pages in as many statements as 10', async () => {
    const small = await makeNote(app, cast.team, manager.user, { title: 'Small', slug: 'small' });
    const large = await makeNote(app, cast.team, manager.user, { title: 'Large', slug: 'large' });
    await bulkPages(app, small, manager.user.id, 10);
    await bulkPages(app, large, manager.user.id, 1000);
    await member.client.get('/api/v1/me');
    const smallCount = await app.countQueries(async () => expect((await member.client.post('/api/v1/upstream/small/forks')).status).toBe(200));
    let forkId = 0;
    const started = performance.now();
    const largeCount = await app.countQueries(async () => {
      const answer = await member.client.post('/api/v1/upstream/large/forks');
      expect(answer.status).toBe(200);
      forkId = answer.body.id;
    });
    const elapsed = performance.now() - started;
    expect(largeCount).toBe(smallCount);
    expect(largeCount).toBeLessThanOrEqual(16);
    const copies = await pagesOf(forkId);
    expect(copies).toHaveLength(1000);
    // chains of ten: every copy's parent is a copy whose origin is the origin's parent
    const byId = new Map(copies.map((row) => [row.id, row]));
    const originals = new Map((await pagesOf(large.id)).map((row) => [row.id, row]));
    for (const copy of copies) {
      const origin = originals.get(copy.origin_page_id!)!;
      expect(copy.parent_id === null ? null : byId.get(copy.parent_id)!.origin_page_id).toBe(origin.parent_id);
    }
    console.log(`fork of 1,000 pages: ${largeCount} statements, ${elapsed.toFixed(0)} ms (10 pages: ${smallCount})`);
  });
});

describe('a fork of a fork', () => {
  it('takes the base of pages that never changed in the middle fork', async () => {
    const note = await makeNote(app, cast.team, manager.user, { title: 'Chain', slug: 'chain' });
    const page = await makePage(app, note, member, { title: 'One', content: '<p>one</p>' });
    const outsiderTeam = outsider.user.username;
    const first = await outsider.client.post('/api/v1/upstream/chain/forks');
    const other = await makeTeam(app, 'second-forkers', [{ user: outsider.user, role: 'manager' }]);
    await addMember(app, other, member.user, 'member');
    const second = await outsider.client.post(`/api/v1/${outsiderTeam}/${first.body.id}/forks`, { json: { team: 'second-forkers' } });
    expect(second.status, second.text).toBe(200);
    const [copy] = await pagesOf(second.body.id);
    expect(copy!.base_version_id).toBe(await latestVersionId(page.id));
  });
});
