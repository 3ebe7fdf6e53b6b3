import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Page, PageVersion } from '../../src/modules/pages/page.entity.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  app = await startTestApp({ LIMIT_PAGE_TREE_DEPTH: '4' });
  ({ manager, member, outsider, reader } = await makeScenario(app, { team: 'paper' }));
});
afterAll(async () => app?.close());

let counter = 0;
async function freshNote(options: { isPrivate?: boolean } = {}) {
  counter += 1;
  return makeNote(app, 'paper', manager.user, { slug: `book-${counter}`, isPrivate: options.isPrivate ?? false });
}
const base = (slug: string) => `/api/v1/paper/${slug}`;
/** A page written by the member, as the API answered it. */
const create = (note: Note, title: string, parent?: number, content?: string) => makePage(app, note, member, { title, parent, content });
const versionsOf = (pageId: number) => app.em().find(PageVersion, { page: pageId }, { orderBy: { index: 'asc' } });

describe('createPage', () => {
  it('creates the first page as the cover, with version 1 and its path', async () => {
    const note = await freshNote();
    const answer = await member.client.post(`${base(note.slug!)}/pages`, { json: { page: { title: 'Intro', content: '<h1>Hi</h1>' } } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ title: 'Intro', content: '<h1>Hi</h1>', is_cover: true, path: 'Intro', children: [], model: 'page' });
    expect(answer.body).not.toHaveProperty('parent');
    expect(answer.body.note.id).toBe(note.id);
    expect(answer.body.html_url).toBe(`${app.baseUrl}/paper/${note.slug}/${answer.body.id}`);
    const versions = await versionsOf(answer.body.id);
    expect(versions.map((version) => [version.index, version.title, version.content, version.user.id])).toEqual([[1, 'Intro', '<h1>Hi</h1>', member.user.id]]);
    // the diff is made when the version is first read, and kept
    expect(versions[0]!.diff).toBeNull();
    expect((await member.client.get(`${base(note.slug!)}/${answer.body.id}/histories/1`)).body.diff).toContain('<li class="ins"><ins>&lt;h1&gt;Hi&lt;/h1&gt;</ins></li>');
    expect((await versionsOf(answer.body.id))[0]!.diff).toContain('<li class="ins"><ins>&lt;h1&gt;Hi&lt;/h1&gt;</ins></li>');
  });

  it('nests under a parent: path starts with the parent\'s path; only the first page is the cover', async () => {
    const note = await freshNote();
    const root = await create(note, 'Guide');
    const child = await create(note, 'Setup', root.id);
    expect(child).toMatchObject({ path: 'Guide / Setup', is_cover: false });
    expect(child.parent).toMatchObject({ id: root.id, title: 'Guide', path: 'Guide' });
    expect(child.parent).not.toHaveProperty('children');
    const grandchild = await create(note, 'Linux', child.id);
    expect(grandchild.path).toBe('Guide / Setup / Linux');
    expect((await app.em().findOneOrFail(Note, note.id)).coverPageId).toBe(root.id);
  });

  it('accepts a legacy form with an empty parent', async () => {
    const note = await freshNote();
    const answer = await member.client.post(`${base(note.slug!)}/pages.json`, { form: 'page%5Btitle%5D=Form&page%5Bcontent%5D=text&page%5Bparent%5D=' });
    expect(answer.status).toBe(200);
    expect(answer.body.path).toBe('Form');
  });

  it('answers 400 for an empty or too long title, 413 for content over 1 MiB, 422 for a foreign or too deep parent', async () => {
    const note = await freshNote();
    const other = await freshNote();
    const foreign = await create(other, 'Elsewhere');
    const url = `${base(note.slug!)}/pages`;
    expect((await member.client.post(url, { json: { page: { title: '', content: 'x' } } })).status).toBe(400);
    expect((await member.client.post(url, { json: { page: { title: 'x'.repeat(256), content: 'x' } } })).status).toBe(400);
    expect((await member.client.post(url, { json: { page: { title: 'No content' } } })).status).toBe(400);
    const big = await member.client.post(url, { json: { page: { title: 'Big', content: 'é'.repeat(524_289) } } });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
    const foreignParent = await member.client.post(url, { json: { page: { title: 'Orphan', content: 'x', parent: foreign.id } } });
    expect(foreignParent.status).toBe(422);
    expect(foreignParent.body.code).toBe('parent_not_found');
    let parent = await create(note, 'L1');
    for (const level of [2, 3, 4]) parent = await create(note, `L${level}`, parent.id);
    const deep = await member.client.post(url, { json: { page: { title: 'L5', content: 'x', parent: parent.id } } });
    expect(deep.status).toBe(422);
    expect(deep.body.code).toBe('tree_too_deep');
    expect(await app.em().count(Page, { note: note.id })).toBe(4);
  });

  it('answers 403 outside the team and to a read token, 404 for a private note of another team, 401 without a token', async () => {
    const open = await freshNote();
    const closed = await freshNote({ isPrivate: true });
    const body = { json: { page: { title: 'T', content: 'c' } } };
    expect((await outsider.client.post(`${base(open.slug!)}/pages`, body)).status).toBe(403);
    expect((await reader.client.post(`${base(open.slug!)}/pages`, body)).status).toBe(403);
    expect((await outsider.client.post(`${base(closed.slug!)}/pages`, body)).status).toBe(404);
    expect((await anonymous(app).post(`${base(open.slug!)}/pages`, body)).status).toBe(401);
    expect(await app.em().count(Page, { note: { $in: [open.id, closed.id] } })).toBe(0);
  });
});

describe('getPage', () => {
  it('shows the page with its children in position order, its parent, and an ETag', async () => {
    const note = await freshNote();
    const root = await create(note, 'Root');
    const b = await create(note, 'B', root.id);
    const a = await create(note, 'A', root.id);
    const answer = await outsider.client.get(`${base(note.slug!)}/${root.id}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('etag')).toMatch(/^"page-\d+-1"$/);
    expect(answer.body.children.map((child: { id: number }) => child.id)).toEqual([b.id, a.id]);
    expect(answer.body.children[0]).toMatchObject({ path: 'Root / B' });
    expect(answer.body.children[0]).not.toHaveProperty('children');
    const html = await outsider.client.get(answer.body.html_url.replace(app.baseUrl, ''));
    expect(html.status).toBe(200);
  });

  it('lists its ancestors from the root with ids, titles and links, whatever the titles hold (a title with " / ")', async () => {
    const note = await freshNote();
    const top = await create(note, 'Ops');
    const middle = await create(note, 'CI / CD', top.id);
    const leaf = await create(note, 'Runners', middle.id);
    const answer = await outsider.client.get(`${base(note.slug!)}/${leaf.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.path).toBe('Ops / CI / CD / Runners');
    const root = await outsider.client.get(`${base(note.slug!)}/${top.id}`);
    expect(root.body.ancestors).toEqual([]);
    expect(answer.body.ancestors).toEqual([
      { id: top.id, title: 'Ops', html_url: root.body.html_url },
      { id: middle.id, title: 'CI / CD', html_url: root.body.html_url.replace(/\/\d+$/, `/${middle.id}`) },
    ]);
    // a page's versions embed it (PageSummary) with the same ancestors
    const versions = await outsider.client.get(`${base(note.slug!)}/${leaf.id}/histories`);
    expect(versions.body[0].page.ancestors.map((ancestor: { id: number }) => ancestor.id)).toEqual([top.id, middle.id]);
    // the list of pages carries them too
    const listed = await outsider.client.get(`${base(note.slug!)}/pages?parent=${middle.id}`);
    expect(listed.body.pages[0].ancestors.map((ancestor: { title: string }) => ancestor.title)).toEqual(['Ops', 'CI / CD']);
  });

  it('answers 404 for a page of another note, a private note of another team, and 401 without a token', async () => {
    const note = await freshNote();
    const other = await freshNote();
    const closed = await freshNote({ isPrivate: true });
    const foreign = await create(other, 'Foreign');
    const hidden = await create(closed, 'Hidden');
    expect((await member.client.get(`${base(note.slug!)}/${foreign.id}`)).status).toBe(404);
    expect((await outsider.client.get(`${base(closed.slug!)}/${hidden.id}`)).status).toBe(404);
    expect((await member.client.get(`${base(note.slug!)}/999999`)).status).toBe(404);
    expect((await anonymous(app).get(`${base(other.slug!)}/${foreign.id}`)).status).toBe(401);
  });
});

describe('listPages', () => {
  it('pages through a note 20 at a time in tree order, with last_page', async () => {
    const note = await freshNote();
    const roots = [];
    for (let i = 0; i < 3; i += 1) roots.push(await create(note, `R${i}`));
    const nested = [];
    for (let i = 0; i < 19; i += 1) nested.push(await create(note, `C${i}`, roots[1]!.id));
    const first = await member.client.get(`${base(note.slug!)}/pages`, { query: { parent: 'all' } });
    expect(first.status).toBe(200);
    expect(first.body.last_page).toBe(false);
    expect(first.body.pages.map((page: { title: string }) => page.title)).toEqual(['R0', 'R1', ...nested.slice(0, 18).map((page) => page.title)]);
    const second = await member.client.get(`${base(note.slug!)}/pages`, { query: { page: '2' } });
    expect(second.body.last_page).toBe(true);
    expect(second.body.pages.map((page: { title: string }) => page.title)).toEqual(['C18', 'R2']);
    const beyond = await member.client.get(`${base(note.slug!)}/pages`, { query: { page: '3' } });
    expect(beyond.body).toEqual({ pages: [], last_page: true });
  });

  it('filters by parent and sorts by the order given', async () => {
    const note = await freshNote();
    const root = await create(note, 'm-root');
    await create(note, 'a-root');
    const kids = [await create(note, 'zeta', root.id), await create(note, 'alpha', root.id)];
    const titles = async (query: Record<string, string>) =>
      (await member.client.get(`${base(note.slug!)}/pages`, { query })).body.pages.map((page: { title: string }) => page.title);
    expect(await titles({ parent: 'root' })).toEqual(['m-root', 'a-root']);
    expect(await titles({ parent: String(root.id) })).toEqual(['zeta', 'alpha']);
    expect(await titles({ parent: String(root.id), order: 'title' })).toEqual(['alpha', 'zeta']);
    expect(await titles({ order: '-title' })).toEqual(['zeta', 'm-root', 'alpha', 'a-root']);
    expect(await titles({ parent: 'root', order: '-position' })).toEqual(['a-root', 'm-root']);
    expect(kids).toHaveLength(2);
  });

  it('answers 400 for unknown parent or order values, 404 for a parent of another note', async () => {
    const note = await freshNote();
    const other = await freshNote();
    const foreign = await create(other, 'Foreign');
    const url = `${base(note.slug!)}/pages`;
    expect((await member.client.get(url, { query: { parent: 'top' } })).status).toBe(400);
    expect((await member.client.get(url, { query: { order: 'size' } })).status).toBe(400);
    expect((await member.client.get(url, { query: { page: '0' } })).status).toBe(400);
    expect((await member.client.get(url, { query: { parent: String(foreign.id) } })).status).toBe(404);
    expect((await anonymous(app).get(url)).status).toBe(401);
  });
});

describe('updatePage', () => {
  it('records a version for a title or content change, none for no change; PUT and PATCH alike', async () => {
    const note = await freshNote();
    const page = await create(note, 'Draft', undefined, 'one\ntwo');
    const url = `${base(note.slug!)}/${page.id}`;
    const put = await member.client.put(url, { json: { page: { content: 'one\nthree' } } });
    expect(put.status).toBe(200);
    expect(put.body.content).toBe('one\nthree');
    expect(put.headers.get('etag')).toMatch(/-2"$/);
    const patch = await member.client.patch(url, { form: { 'page[title]': 'Final' } });
    expect(patch.body.title).toBe('Final');
    const same = await member.client.put(url, { json: { page: { title: 'Final', content: 'one\nthree' } } });
    expect(same.status).toBe(200);
    const versions = await versionsOf(page.id);
    expect(versions.map((version) => [version.index, version.title, version.content])).toEqual([
      [1, 'Draft', 'one\ntwo'], [2, 'Draft', 'one\nthree'], [3, 'Final', 'one\nthree'],
    ]);
    expect(versions.map((version) => version.diff)).toEqual([null, null, null]);
    // the history made every diff from the version before it, and kept them
    const history = await member.client.get(`${url}/histories`);
    expect(history.body.map((version: { index: number }) => version.index)).toEqual([3, 2, 1]);
    const kept = await versionsOf(page.id);
    expect(kept.map((version) => version.diff)).toEqual(history.body.map((version: { diff: string }) => version.diff).reverse());
    expect(kept[1]!.diff).toContain('<li class="unchanged"><span>one</span></li>');
    expect(kept[1]!.diff).toContain('<li class="del"><del>');
    expect(kept[0]!.diff).toContain('<li class="ins"><ins>one</ins></li>');
  });

  it('answers 412 to a stale If-Match and changes nothing; a current one passes', async () => {
    const note = await freshNote();
    const page = await create(note, 'Shared');
    const url = `${base(note.slug!)}/${page.id}`;
    const etag = (await member.client.get(url)).headers.get('etag')!;
    expect((await manager.client.put(url, { json: { page: { content: 'manager was first' } }, headers: { 'If-Match': etag } })).status).toBe(200);
    const stale = await member.client.put(url, { json: { page: { content: 'member overwrites' } }, headers: { 'If-Match': etag } });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe('precondition_failed');
    expect((await app.em().findOneOrFail(Page, page.id)).content).toBe('manager was first');
    const fresh = (await member.client.get(url)).headers.get('etag')!;
    expect((await member.client.put(url, { json: { page: { content: 'member now' } }, headers: { 'If-Match': fresh } })).status).toBe(200);
  });

  it('moves a page with its subtree, to the top with an empty parent, and keeps the tree a tree', async () => {
    const note = await freshNote();
    const a = await create(note, 'A');
    const b = await create(note, 'B');
    const b1 = await create(note, 'B1', b.id);
    const url = (id: number) => `${base(note.slug!)}/${id}`;
    const moved = await member.client.put(url(b.id), { json: { page: { parent: a.id } } });
    expect(moved.status).toBe(200);
    expect(moved.body.path).toBe('A / B');
    expect((await member.client.get(url(b1.id))).body.path).toBe('A / B / B1');
    const cycle = await member.client.put(url(a.id), { json: { page: { parent: b1.id } } });
    expect(cycle.status).toBe(422);
    expect(cycle.body.code).toBe('page_cycle');
    expect((await member.client.put(url(a.id), { json: { page: { parent: a.id } } })).status).toBe(422);
    const other = await freshNote();
    const foreign = await create(other, 'Foreign');
    expect((await member.client.put(url(b.id), { json: { page: { parent: foreign.id } } })).status).toBe(422);
    expect((await app.em().findOneOrFail(Page, a.id)).parent).toBeNull();
    const top = await member.client.patch(url(b.id), { form: 'page%5Bparent%5D=' });
    expect(top.body.path).toBe('B');
    expect(top.body).not.toHaveProperty('parent');
  });

  it('refuses a move past the depth limit, counting the moved subtree', async () => {
    const note = await freshNote();
    const l1 = await create(note, 'L1');
    const l2 = await create(note, 'L2', l1.id);
    const l3 = await create(note, 'L3', l2.id);
    const x = await create(note, 'X');
    await create(note, 'X1', x.id);
    const answer = await member.client.put(`${base(note.slug!)}/${x.id}`, { json: { page: { parent: l3.id } } });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('tree_too_deep');
    expect((await member.client.put(`${base(note.slug!)}/${x.id}`, { json: { page: { parent: l2.id } } })).status).toBe(200);
  });

  it('moves the cover with is_cover', async () => {
    const note = await freshNote();
    const first = await create(note, 'First');
    const second = await create(note, 'Second');
    const answer = await member.client.put(`${base(note.slug!)}/${second.id}`, { form: { 'page[is_cover]': '1' } });
    expect(answer.body.is_cover).toBe(true);
    expect((await app.em().findOneOrFail(Note, note.id)).coverPageId).toBe(second.id);
    expect(first.is_cover).toBe(true);
  });

  it('answers 403 outside the team, 404 for another note\'s page, 400/413 for bad input, 401 without a token', async () => {
    const note = await freshNote();
    const page = await create(note, 'Guarded');
    const url = `${base(note.slug!)}/${page.id}`;
    expect((await outsider.client.put(url, { json: { page: { title: 'Mine' } } })).status).toBe(403);
    expect((await reader.client.put(url, { json: { page: { title: 'Mine' } } })).status).toBe(403);
    expect((await member.client.put(url, { json: { page: { title: '' } } })).status).toBe(400);
    expect((await member.client.put(url, { json: { page: { bogus: 1 } } })).status).toBe(400);
    expect((await member.client.put(url, { json: { page: { content: 'x'.repeat(1_048_577) } } })).status).toBe(413);
    expect((await member.client.put(`${base('book-1')}/${page.id}`, { json: { page: { title: 'Moved' } } })).status).toBe(404);
    expect((await anonymous(app).put(url, { json: { page: { title: 'Mine' } } })).status).toBe(401);
    expect(await versionsOf(page.id)).toHaveLength(1);
  });
});

describe('deletePage', () => {
  it('deletes the page with its subtree and their versions; the next top-level page becomes the cover', async () => {
    const note = await freshNote();
    const cover = await create(note, 'Cover');
    const child = await create(note, 'Child', cover.id);
    const next = await create(note, 'Next');
    const answer = await member.client.delete(`${base(note.slug!)}/${cover.id}`);
    expect(answer.status).toBe(204);
    expect(await app.em().count(Page, { id: { $in: [cover.id, child.id] } })).toBe(0);
    expect(await app.em().count(PageVersion, { page: { $in: [cover.id, child.id] } })).toBe(0);
    expect((await app.em().findOneOrFail(Note, note.id)).coverPageId).toBe(next.id);
  });

  it('answers 403 outside the team, 404 for another note\'s page, 401 without a token', async () => {
    const note = await freshNote();
    const page = await create(note, 'Stays');
    expect((await outsider.client.delete(`${base(note.slug!)}/${page.id}`)).status).toBe(403);
    expect((await member.client.delete(`${base('book-1')}/${page.id}`)).status).toBe(404);
    expect((await anonymous(app).delete(`${base(note.slug!)}/${page.id}`)).status).toBe(401);
    expect(await app.em().count(Page, { id: page.id })).toBe(1);
  });
});
