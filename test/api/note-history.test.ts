// The note at any moment (issue 23): `?at=` on getNote, listPages and getPage answers the tree then, each page's
// version then, pages deleted since shown and pages created later absent; the rows behind it (page_places written by
// triggers, deleted_page_versions) are checked as stored. Versions are stamped to the second, so the moments read
// here are a second and more away from every write.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HtmlValidate } from 'html-validate';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor;
type Listed = { id: number; title: string; content: string; path: string; version: number; at?: string; parent?: { id: number }; children: { id: number }[] };

/** A moment with a clear second on each side of it. */
async function moment(): Promise<string> {
  await sleep(1100);
  const at = new Date().toISOString();
  await sleep(1100);
  return at;
}

let base: string;
let privateBase: string;
let noteCreatedAt: string;
let t1: string, t2: string;
const ids: Record<'a' | 'b' | 'c' | 'd', number> = { a: 0, b: 0, c: 0, d: 0 };

beforeAll(async () => {
  app = await startTestApp();
  ({ manager, member, outsider } = await makeScenario(app, { team: 'then' }));
  const note = await makeNote(app, 'then', manager.user, { slug: 'moments' });
  const secret = await makeNote(app, 'then', manager.user, { slug: 'secret', isPrivate: true });
  base = '/api/v1/then/moments';
  privateBase = '/api/v1/then/secret';
  noteCreatedAt = note.createdAt.toISOString();
  await makePage(app, secret, manager, { title: 'Hidden' });
  // at t1: A (a1) > B (b1), and D (d1) at the top
  ids.a = (await makePage(app, note, manager, { title: 'A', content: '<p>a1</p>' })).id;
  ids.b = (await makePage(app, note, member, { title: 'B', content: '<p>b1</p>', parent: ids.a })).id;
  ids.d = (await makePage(app, note, manager, { title: 'D', content: '<p>d1</p>' })).id;
  t1 = await moment();
  // at t2: A is "A2" (a2), B moved to the top, C made, D deleted
  expect((await member.client.put(`${base}/${ids.a}`, { json: { page: { title: 'A2', content: '<p>a2</p>' } } })).status).toBe(200);
  expect((await member.client.put(`${base}/${ids.b}`, { json: { page: { parent: null } } })).status).toBe(200);
  ids.c = (await makePage(app, note, member, { title: 'C', content: '<p>c1</p>' })).id;
  expect((await manager.client.delete(`${base}/${ids.d}`)).status).toBe(204);
  t2 = await moment();
});
afterAll(async () => app?.close());

describe('listPages with at', () => {
  it('answers the tree then: versions, places and titles then, a page deleted since, none created later', async () => {
    const then = await outsider.client.get(`${base}/pages`, { query: { at: t1 } });
    expect(then.status).toBe(200);
    const pages = then.body.pages as Listed[];
    expect(pages.map((page) => [page.id, page.title, page.content, page.path, page.version])).toEqual([
      [ids.a, 'A', '<p>a1</p>', 'A', 1],
      [ids.b, 'B', '<p>b1</p>', 'A / B', 1],
      [ids.d, 'D', '<p>d1</p>', 'D', 1],
    ]);
    expect(pages[0]!.children.map((child) => child.id)).toEqual([ids.b]);
    expect(pages[1]!.parent?.id).toBe(ids.a);
    // the ancestors then, with their titles then (A was renamed A2 after t1)
    expect((pages[1] as Listed & { ancestors: unknown[] }).ancestors).toEqual([{ id: ids.a, title: 'A', html_url: `${app.baseUrl}/then/moments/${ids.a}` }]);
    expect(pages.every((page) => page.at === new Date(t1).toISOString())).toBe(true);
    expect(then.body.last_page).toBe(true);

    const later = (await outsider.client.get(`${base}/pages`, { query: { at: t2 } })).body.pages as Listed[];
    const now = (await outsider.client.get(`${base}/pages`)).body.pages as Listed[];
    expect(later.map((page) => [page.id, page.title, page.content, page.path, page.version])).toEqual([
      [ids.a, 'A2', '<p>a2</p>', 'A2', 2],
      [ids.b, 'B', '<p>b1</p>', 'B', 1], // a move makes no version
      [ids.c, 'C', '<p>c1</p>', 'C', 1],
    ]);
    expect((later[1] as Listed & { ancestors: unknown[] }).ancestors).toEqual([]);
    // the moment after the last change is the note now, page for page
    expect(later.map(({ at: _at, ...page }) => page)).toEqual(now.map(({ at: _at, ...page }) => page));
  });

  it('filters and orders the tree then: root, a parent then, titles', async () => {
    const roots = await member.client.get(`${base}/pages`, { query: { at: t1, parent: 'root', order: '-title' } });
    expect(roots.body.pages.map((page: Listed) => page.id)).toEqual([ids.d, ids.a]);
    const children = await member.client.get(`${base}/pages`, { query: { at: t1, parent: String(ids.a) } });
    expect(children.body.pages.map((page: Listed) => page.id)).toEqual([ids.b]);
    // C was not a page then
    expect((await member.client.get(`${base}/pages`, { query: { at: t1, parent: String(ids.c) } })).status).toBe(404);
  });
});

describe('getPage with at', () => {
  it('shows a page as it was, one deleted since included, and 404 for one not made yet', async () => {
    const deleted = await outsider.client.get(`${base}/${ids.d}`, { query: { at: t1 } });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: ids.d, title: 'D', content: '<p>d1</p>', version: 1, at: new Date(t1).toISOString() });
    expect(deleted.headers.get('etag')).toBe(`"page-${ids.d}-at-1"`);
    expect((await outsider.client.get(`${base}/${ids.d}`)).status).toBe(404);
    expect((await outsider.client.get(`${base}/${ids.d}`, { query: { at: t2 } })).status).toBe(404);
    expect((await outsider.client.get(`${base}/${ids.c}`, { query: { at: t1 } })).status).toBe(404);
  });

  it('is never answered from, nor kept as, the answer of now', async () => {
    const now = await member.client.get(`${base}/${ids.a}`);
    expect(now.body).toMatchObject({ title: 'A2', version: 2 });
    const then = await member.client.get(`${base}/${ids.a}`, { query: { at: t1 } });
    expect(then.body).toMatchObject({ title: 'A', content: '<p>a1</p>', version: 1 });
    expect(then.body.children.map((child: { id: number }) => child.id)).toEqual([ids.b]);
    const again = await member.client.get(`${base}/${ids.a}`);
    expect(again.body).toMatchObject({ title: 'A2', content: '<p>a2</p>', version: 2 });
    expect(again.body.at).toBeUndefined();
  });
});

describe('getNote with at', () => {
  it('says which moment it shows', async () => {
    const answer = await outsider.client.get(base, { query: { at: t1 } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ name: 'moments', at: new Date(t1).toISOString() });
    expect((await outsider.client.get(base)).body.at).toBeUndefined();
  });
});

describe('bad moments', () => {
  const paths = () => [base, `${base}/pages`, `${base}/${ids.a}`];

  it('answers 422 at_in_future for a moment to come and at_before_note for one before the note', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const before = new Date(new Date(noteCreatedAt).getTime() - 86_400_000).toISOString();
    for (const path of paths()) {
      const late = await member.client.get(path, { query: { at: future } });
      expect([path, late.status, late.body.code]).toEqual([path, 422, 'at_in_future']);
      const early = await member.client.get(path, { query: { at: before } });
      expect([path, early.status, early.body.code]).toEqual([path, 422, 'at_before_note']);
    }
  });

  it('answers 400 for a moment that is not RFC 3339, 401 without a token, 404 for a private note of another team', async () => {
    for (const path of paths()) {
      expect((await member.client.get(path, { query: { at: 'yesterday' } })).status).toBe(400);
      expect((await anonymous(app).get(path, { query: { at: t1 } })).status).toBe(401);
    }
    expect((await outsider.client.get(privateBase, { query: { at: t2 } })).status).toBe(404);
    expect((await outsider.client.get(`${privateBase}/pages`, { query: { at: t2 } })).status).toBe(404);
  });
});

describe('the stored history', () => {
  it('records each place, the deletion, and keeps the deleted page\'s versions', async () => {
    const places = await app.em().execute<{ page_id: number; parent_id: number | null; present: boolean }[]>(
      'select page_id, parent_id, present from page_places where page_id in (?, ?) order by id',
      [ids.b, ids.d],
    );
    expect(places).toEqual([
      { page_id: ids.b, parent_id: ids.a, present: true },
      { page_id: ids.d, parent_id: null, present: true },
      { page_id: ids.b, parent_id: null, present: true },
      { page_id: ids.d, parent_id: null, present: false },
    ]);
    const kept = await app.em().execute<{ index: number; content: string }[]>('select index, content from deleted_page_versions where page_id = ?', [ids.d]);
    expect(kept).toEqual([{ index: 1, content: '<p>d1</p>' }]);
  });

  it('leaves nothing behind when the note is deleted', async () => {
    const note = await makeNote(app, 'then', manager.user, { slug: 'short-lived' });
    const page = await makePage(app, note, manager, { title: 'Gone' });
    expect((await manager.client.delete(`${base.replace('moments', 'short-lived')}/${page.id}`)).status).toBe(204);
    expect((await manager.client.delete('/api/v1/then/short-lived')).status).toBe(204);
    const [left] = await app.em().execute<{ places: string; versions: string }[]>(
      'select (select count(*) from page_places where note_id = ?) as places, (select count(*) from deleted_page_versions where note_id = ?) as versions',
      [note.id, note.id],
    );
    expect([Number(left!.places), Number(left!.versions)]).toEqual([0, 0]);
  });
});

describe('the web views with at', () => {
  const HTML = { Accept: 'text/html' };
  // the rules of test/browser/web-views.test.ts, which validates every view
  const validator = new HtmlValidate({ extends: ['html-validate:standard', 'html-validate:document'], rules: { 'require-sri': ['error', { target: 'crossorigin' }] } });

  it('show the note and a page deleted since as they were, with the moment and the way back to now', async () => {
    const note = await outsider.client.get('/then/moments', { headers: HTML, query: { at: t1 } });
    expect(note.status).toBe(200);
    expect(note.text).toContain(`href="${app.baseUrl}/then/moments/${ids.d}?at=${encodeURIComponent(t1)}"`);
    expect(note.text).toContain(`<a href="${app.baseUrl}/then/moments">Show it as it is now</a>`);
    expect(note.text).not.toContain(`/then/moments/${ids.c}`);
    const deleted = await outsider.client.get(`/then/moments/${ids.d}`, { headers: HTML, query: { at: t1 } });
    expect(deleted.status).toBe(200);
    expect(deleted.text).toContain('<p>d1</p>');
    for (const view of [note, deleted]) expect((await validator.validateString(view.text)).results).toEqual([]);
    expect((await outsider.client.get(`/then/moments/${ids.d}`, { headers: HTML })).status).toBe(404);
  });

  it('refuse a moment that is not RFC 3339 (400) or to come (422)', async () => {
    expect((await outsider.client.get('/then/moments', { headers: HTML, query: { at: 'yesterday' } })).status).toBe(400);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await outsider.client.get(`/then/moments/${ids.a}`, { headers: HTML, query: { at: future } })).status).toBe(422);
  });
});
