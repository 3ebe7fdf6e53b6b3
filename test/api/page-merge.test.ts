// Merge-on-write (issue 19): `Page.version`, `page[base_version]` and `on_conflict` on updatePage. Every test checks
// what was stored (pages, page_versions) besides the answer: a merge keeps both edits and says so in its version, a
// conflict or a refusal writes nothing. The 20-writer race is in page-merge-race.test.ts (PostgreSQL pass only).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Page, PageVersion } from '../../src/modules/pages/page.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor;

beforeAll(async () => {
  app = await startTestApp();
  ({ manager, member, outsider, reader } = await makeScenario(app, { team: 'merging' }));
});
afterAll(async () => app?.close());

let counter = 0;
/** A page (version 1) by the manager in a note of its own; `url` is its updatePage path. */
async function freshPage(content: string, options: { title?: string; isPrivate?: boolean } = {}) {
  counter += 1;
  const note = await makeNote(app, 'merging', manager.user, { slug: `merge-${counter}`, isPrivate: options.isPrivate ?? false });
  const page = await makePage(app, note, manager, { title: options.title ?? 'Page', content });
  return { note, page, base: `/api/v1/merging/${note.slug}`, url: `/api/v1/merging/${note.slug}/${page.id}` };
}
const versionsOf = (pageId: number) => app.em().find(PageVersion, { page: pageId }, { orderBy: { index: 'asc' } });
const storedPage = (pageId: number) => app.em().findOneOrFail(Page, pageId);
/** [index, title, content, merged_from_base] of every stored version. */
const history = async (pageId: number) => (await versionsOf(pageId)).map((v) => [v.index, v.title, v.content, v.mergedFromBase]);
/** A write without a base (the manager's, standing for "someone else wrote since"). */
async function plainWrite(url: string, page: Record<string, unknown>) {
  const answer = await manager.client.put(url, { json: { page } });
  expect(answer.status, answer.text).toBe(200);
  return answer;
}

const THREE = '<p>One.</p>\n<p>Two.</p>\n<p>Three.</p>\n';

describe('Page.version', () => {
  it('is the current version index on create, get and update; a write that changes nothing keeps it', async () => {
    const { page, url } = await freshPage('<p>a</p>');
    expect(page.version).toBe(1);
    expect((await member.client.get(url)).body.version).toBe(1);
    const put = await member.client.put(url, { json: { page: { content: '<p>b</p>' } } });
    expect([put.status, put.body.version]).toEqual([200, 2]);
    expect(put.body).not.toHaveProperty('merge');
    const same = await member.client.patch(url, { json: { page: { content: '<p>b</p>' } } });
    expect(same.body.version).toBe(2);
    const title = await member.client.patch(url, { form: { 'page[title]': 'Renamed' } });
    expect(title.body.version).toBe(3);
    expect((await member.client.get(url)).body.version).toBe(3);
    expect((await storedPage(page.id)).versionSequence).toBe(3);
    expect((await versionsOf(page.id)).map((v) => v.index)).toEqual([1, 2, 3]);
    const listed = await member.client.get(url.replace(/\/\d+$/, '/pages'));
    expect(listed.body.pages[0].version).toBe(3);
  });
});

describe('a base equal to the current version', () => {
  it('is a plain write: no merge member, one new version, not marked as merged', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One', 'Uno') });
    const answer = await member.client.put(url, { json: { page: { content: '<p>Replaced.</p>', base_version: 2 } } });
    expect(answer.status).toBe(200);
    expect(answer.body).not.toHaveProperty('merge');
    expect([answer.body.version, answer.body.content]).toEqual([3, '<p>Replaced.</p>']);
    expect(await history(page.id)).toEqual([
      [1, 'Page', THREE, null], [2, 'Page', THREE.replace('One', 'Uno'), null], [3, 'Page', '<p>Replaced.</p>', null],
    ]);
  });
});

describe('an older base, merged', () => {
  it('merges edits of different paragraphs, records the base, and lists the versions merged over', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'One, edited.') });
    await plainWrite(url, { content: THREE.replace('One.', 'One, edited.').replace('Two.', 'Two, edited.') });
    const answer = await member.client.put(url, { json: { page: { content: THREE.replace('Three.', 'Three, edited.'), base_version: 1 } } });
    expect(answer.status, answer.text).toBe(200);
    const merged = '<p>One, edited.</p>\n<p>Two, edited.</p>\n<p>Three, edited.</p>\n';
    expect(answer.body).toMatchObject({ content: merged, title: 'Page', version: 4, merge: { base_version: 1, merged_over: [2, 3], result: 'merged' } });
    expect((await storedPage(page.id)).content).toBe(merged);
    const versions = await versionsOf(page.id);
    expect(versions.map((v) => [v.index, v.mergedFromBase, v.user.id])).toEqual([[1, null, manager.user.id], [2, null, manager.user.id], [3, null, manager.user.id], [4, 1, member.user.id]]);
    expect(versions[3]!.content).toBe(merged);
    expect((await member.client.get(`${url}/histories/4`)).body.merged_from_base).toBe(1);
    expect((await member.client.get(`${url}/histories/3`)).body.merged_from_base).toBeNull();
    expect((await member.client.get(url)).body).not.toHaveProperty('merge');
  });

  it('merges a title change on one side with a content change on the other (PATCH)', async () => {
    const { page, url } = await freshPage(THREE, { title: 'Old title' });
    await plainWrite(url, { title: 'New title' });
    const answer = await member.client.patch(url, { json: { page: { title: 'Old title', content: THREE.replace('Two.', 'Zwei.'), base_version: 1 } } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ title: 'New title', content: THREE.replace('Two.', 'Zwei.'), version: 3, merge: { base_version: 1, merged_over: [2], result: 'merged' } });
    expect((await history(page.id)).at(-1)).toEqual([3, 'New title', THREE.replace('Two.', 'Zwei.'), 1]);
    const stored = await storedPage(page.id);
    expect([stored.title, stored.content]).toEqual(['New title', THREE.replace('Two.', 'Zwei.')]);
  });

  it('takes a field the write leaves out as unchanged since the base: the other side\'s change stays', async () => {
    const { page, url } = await freshPage(THREE, { title: 'Base title' });
    await plainWrite(url, { title: 'Their title' });
    // only content, from version 1: the title changed since (version 2) and must stay
    const contentOnly = await member.client.put(url, { json: { page: { content: THREE.replace('One.', '1.'), base_version: 1 } } });
    expect(contentOnly.status, contentOnly.text).toBe(200);
    expect([contentOnly.body.title, contentOnly.body.content, contentOnly.body.merge.result]).toEqual(['Their title', THREE.replace('One.', '1.'), 'merged']);
    // only title, from version 2: the content changed since (version 3) and must stay
    const titleOnly = await member.client.put(url, { json: { page: { title: 'My title', base_version: 2 } } });
    expect(titleOnly.status, titleOnly.text).toBe(200);
    expect([titleOnly.body.title, titleOnly.body.content]).toEqual(['My title', THREE.replace('One.', '1.')]);
    expect(await history(page.id)).toEqual([
      [1, 'Base title', THREE, null], [2, 'Their title', THREE, null],
      [3, 'Their title', THREE.replace('One.', '1.'), 1], [4, 'My title', THREE.replace('One.', '1.'), 2],
    ]);
  });
});

describe('an older base that conflicts', () => {
  const DEPLOY = '<p>Run make deploy from a clean checkout.</p>\n<p>Then watch.</p>\n';

  it('answers 409 edit_conflict with the page now and the region, and writes nothing', async () => {
    const { page, url } = await freshPage(DEPLOY, { title: 'Deploy' });
    const ours = DEPLOY.replace('clean checkout', 'fresh clone');
    await plainWrite(url, { content: ours });
    const before = await storedPage(page.id);
    const theirs = DEPLOY.replace('clean checkout', 'tagged release');
    const answer = await member.client.put(url, { json: { page: { content: theirs, base_version: 1 } } });
    expect(answer.status).toBe(409);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    const { request_id: requestId, detail, ...rest } = answer.body;
    expect(typeof requestId).toBe('string');
    expect(detail).toMatch(/version 1/);
    expect(rest).toEqual({
      type: 'about:blank', title: 'Conflict', status: 409, code: 'edit_conflict',
      latest_version: 2, latest_title: 'Deploy', latest_content: ours,
      conflicts: [{ kind: 'content', regions: [{
        base: '<p>Run make deploy from a clean checkout.</p>\n',
        ours: '<p>Run make deploy from a fresh clone.</p>\n',
        theirs: '<p>Run make deploy from a tagged release.</p>\n',
      }] }],
    });
    const after = await storedPage(page.id);
    expect([after.content, after.versionSequence, after.lockVersion]).toEqual([ours, 2, before.lockVersion]);
    expect(await versionsOf(page.id)).toHaveLength(2);
  });

  it('answers a title conflict as kind title (and both kinds when both conflict)', async () => {
    const { page, url } = await freshPage(DEPLOY, { title: 'A' });
    await plainWrite(url, { title: 'B', content: DEPLOY.replace('watch', 'rest') });
    const titleOnly = await member.client.put(url, { json: { page: { title: 'C', base_version: 1 } } });
    expect([titleOnly.status, titleOnly.body.code, titleOnly.body.latest_title]).toEqual([409, 'edit_conflict', 'B']);
    expect(titleOnly.body.conflicts).toEqual([{ kind: 'title', regions: [{ base: 'A', ours: 'B', theirs: 'C' }] }]);
    const both = await member.client.put(url, { json: { page: { title: 'C', content: DEPLOY.replace('watch', 'sleep'), base_version: 1 } } });
    expect(both.status).toBe(409);
    expect(both.body.conflicts.map((conflict: { kind: string }) => conflict.kind)).toEqual(['title', 'content']);
    expect(both.body.conflicts[1].regions).toEqual([{ base: '<p>Then watch.</p>\n', ours: '<p>Then rest.</p>\n', theirs: '<p>Then sleep.</p>\n' }]);
    // the same title on both sides is no conflict
    const same = await member.client.put(url, { json: { page: { title: 'B', base_version: 1 } } });
    expect([same.status, same.body.title]).toEqual([200, 'B']);
    expect((await versionsOf(page.id)).map((v) => v.title)).toEqual(['A', 'B']);
  });
});

describe('on_conflict', () => {
  it('fail: 409 with conflicts [] even where a merge would be clean; as a body field or a query parameter; the body wins', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'Eins.') });
    const write = { page: { content: THREE.replace('Three.', 'Drei.'), base_version: 1 } };
    const inBody = await member.client.put(url, { json: { ...write, on_conflict: 'fail' } });
    expect(inBody.status).toBe(409);
    expect(inBody.body).toMatchObject({ code: 'edit_conflict', latest_version: 2, latest_title: 'Page', latest_content: THREE.replace('One.', 'Eins.'), conflicts: [] });
    const inQuery = await member.client.put(url, { json: write, query: { on_conflict: 'fail' } });
    expect([inQuery.status, inQuery.body.code, inQuery.body.conflicts]).toEqual([409, 'edit_conflict', []]);
    const bodyFailsQueryMerges = await member.client.put(url, { json: { ...write, on_conflict: 'fail' }, query: { on_conflict: 'merge' } });
    expect(bodyFailsQueryMerges.status).toBe(409);
    expect(await versionsOf(page.id)).toHaveLength(2);
    const bodyMergesQueryFails = await member.client.put(url, { json: { ...write, on_conflict: 'merge' }, query: { on_conflict: 'fail' } });
    expect(bodyMergesQueryFails.status, bodyMergesQueryFails.text).toBe(200);
    expect(bodyMergesQueryFails.body.merge).toEqual({ base_version: 1, merged_over: [2], result: 'merged' });
    expect((await storedPage(page.id)).content).toBe('<p>Eins.</p>\n<p>Two.</p>\n<p>Drei.</p>\n');
    // without a base, on_conflict is ignored; with the current base, fail does not matter: plain writes
    expect((await member.client.put(url, { json: { page: { title: 'No base' }, on_conflict: 'fail' } })).status).toBe(200);
    const current = await member.client.put(url, { json: { page: { content: '<p>x</p>', base_version: 4 }, on_conflict: 'fail' } });
    expect([current.status, current.body.version, 'merge' in current.body]).toEqual([200, 5, false]);
  });

  it('overwrite: the write wins over what came since, recorded as a plain version', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'Lost.') });
    await plainWrite(url, { title: 'Lost title' });
    const answer = await member.client.put(url, { json: { page: { content: '<p>Mine.</p>', base_version: 1 }, on_conflict: 'overwrite' } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ content: '<p>Mine.</p>', title: 'Lost title', version: 4, merge: { base_version: 1, merged_over: [2, 3], result: 'overwritten' } });
    expect((await storedPage(page.id)).content).toBe('<p>Mine.</p>');
    expect((await history(page.id)).at(-1)).toEqual([4, 'Lost title', '<p>Mine.</p>', null]);
    expect((await member.client.get(`${url}/histories/4`)).body.merged_from_base).toBeNull();
  });
});

describe('invalid bases and If-Match', () => {
  it('answers 422 invalid_base_version for 0, -1, current + 1 and 2^31 - 1; 400 past 32-bit integers (1e15); writing nothing', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    for (const base of [0, -1, 3, 2_147_483_647, -2_147_483_648]) {
      const answer = await member.client.put(url, { json: { page: { content: '<p>nope</p>', base_version: base } } });
      expect([answer.status, answer.body.code], `base ${base}`).toEqual([422, 'invalid_base_version']);
      expect(answer.body.errors, `base ${base}`).toEqual([{ pointer: '/page/base_version', detail: 'a version from 1 to 2' }]);
    }
    // no version lies outside 32-bit integers: the document bounds the field (PageUpdateInput), 400 like any integer field
    for (const base of [1e15, 2_147_483_648, -2_147_483_649]) {
      const answer = await member.client.put(url, { json: { page: { content: '<p>nope</p>', base_version: base } } });
      expect([answer.status, answer.body.code, answer.body.errors?.[0]?.pointer], `base ${base}`).toEqual([400, 'validation_failed', '/page/base_version']);
    }
    // a base alone (nothing to write) is checked too, and so is one in a form
    expect((await member.client.patch(url, { json: { page: { base_version: 0 } } })).status).toBe(422);
    expect((await member.client.put(url, { form: { 'page[content]': '<p>nope</p>', 'page[base_version]': '9' } })).body.code).toBe('invalid_base_version');
    expect(await versionsOf(page.id)).toHaveLength(2);
    expect((await storedPage(page.id)).content).toBe(THREE.replace('One.', 'Uno.'));
  });

  it('checks a stale If-Match first (412, nothing written); a current one with an older base merges', async () => {
    const { page, url } = await freshPage(THREE);
    const oldEtag = (await member.client.get(url)).headers.get('etag')!;
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    const lockVersion = (await storedPage(page.id)).lockVersion;
    for (const base of [1, 2]) {
      const stale = await member.client.put(url, { json: { page: { content: THREE.replace('Three.', 'Tres.'), base_version: base } }, headers: { 'If-Match': oldEtag } });
      expect([stale.status, stale.body.code], `base ${base}`).toEqual([412, 'precondition_failed']);
    }
    const after = await storedPage(page.id);
    expect([after.versionSequence, after.lockVersion, after.content]).toEqual([2, lockVersion, THREE.replace('One.', 'Uno.')]);
    const etag = (await member.client.get(url)).headers.get('etag')!;
    const fresh = await member.client.put(url, { json: { page: { content: THREE.replace('Three.', 'Tres.'), base_version: 1 } }, headers: { 'If-Match': etag } });
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.merge.result).toBe('merged');
    expect((await storedPage(page.id)).content).toBe('<p>Uno.</p>\n<p>Two.</p>\n<p>Tres.</p>\n');
  });
});

describe('moves and the form encoding', () => {
  it('applies a move (parent, is_cover) with a stale base as without one; only the text merges', async () => {
    const { note, page, url, base } = await freshPage(THREE);
    const other = await makePage(app, note, manager, { title: 'Other' });
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    const moved = await member.client.put(url, { json: { page: { parent: other.id, content: THREE.replace('Two.', 'Dos.'), base_version: 1 } } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ path: 'Other / Page', content: '<p>Uno.</p>\n<p>Dos.</p>\n<p>Three.</p>\n', merge: { result: 'merged', merged_over: [2] } });
    expect((await storedPage(page.id)).parent?.id).toBe(other.id);
    // a move alone with a stale base: applied, no version, no merge
    const back = await member.client.put(url, { json: { page: { parent: null, base_version: 1 } } });
    expect([back.status, back.body.path, 'merge' in back.body, back.body.version]).toEqual([200, 'Page', false, 3]);
    await plainWrite(`${base}/${other.id}`, { title: 'Other, renamed' });
    const cover = await member.client.patch(`${base}/${other.id}`, { json: { page: { is_cover: true, base_version: 1 } } });
    expect([cover.status, cover.body.is_cover, cover.body.version, 'merge' in cover.body]).toEqual([200, true, 2, false]);
    expect((await app.em().findOneOrFail(Note, note.id)).coverPageId).toBe(other.id);
    expect((await storedPage(page.id)).parent).toBeNull();
    expect((await versionsOf(page.id)).map((v) => [v.index, v.mergedFromBase])).toEqual([[1, null], [2, null], [3, 1]]);
  });

  it('takes page[base_version] and on_conflict as form fields', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    const failed = await member.client.put(url, { form: { 'page[content]': THREE.replace('Two.', 'Dos.'), 'page[base_version]': '1', on_conflict: 'fail' } });
    expect([failed.status, failed.body.code, failed.body.conflicts]).toEqual([409, 'edit_conflict', []]);
    expect(await versionsOf(page.id)).toHaveLength(2);
    const merged = await member.client.patch(url, { form: { 'page[content]': THREE.replace('Two.', 'Dos.'), 'page[base_version]': '1' } });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body.merge).toEqual({ base_version: 1, merged_over: [2], result: 'merged' });
    expect((await history(page.id)).at(-1)).toEqual([3, 'Page', '<p>Uno.</p>\n<p>Dos.</p>\n<p>Three.</p>\n', 1]);
  });
});

describe('bad input', () => {
  it('answers 400 for a base that is not an integer (a boolean or null included) and an unknown on_conflict, writing nothing', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    const content = THREE.replace('Three.', 'Tres.');
    const bodies: [string, { json?: unknown; form?: Record<string, string>; query?: Record<string, string> }][] = [
      ['string x', { json: { page: { content, base_version: 'x' } } }],
      ['1.5', { json: { page: { content, base_version: 1.5 } } }],
      ['an object', { json: { page: { content, base_version: { index: 1 } } } }],
      ['an array', { json: { page: { content, base_version: [1] } } }],
      // booleans and null are wrong types, not 1 and 0 (form-coercion.ts), here and in every number field
      ['true', { json: { page: { content, base_version: true } } }],
      ['false', { json: { page: { content, base_version: false } } }],
      ['null', { json: { page: { content, base_version: null } } }],
      ['a parent of true', { json: { page: { content, base_version: 2, parent: true } } }],
      ['on_conflict nope (body)', { json: { page: { content, base_version: 1 }, on_conflict: 'nope' } }],
      ['on_conflict nope (query)', { json: { page: { content, base_version: 1 } }, query: { on_conflict: 'nope' } }],
      ['on_conflict a number', { json: { page: { content, base_version: 1 }, on_conflict: 1 } }],
      ['on_conflict in the wrong place', { json: { page: { content, base_version: 1, on_conflict: 'fail' } } }],
      ['form x', { form: { 'page[content]': content, 'page[base_version]': 'x' } }],
      ['form 1.5', { form: { 'page[content]': content, 'page[base_version]': '1.5' } }],
      ['form on_conflict nope', { form: { 'page[content]': content, 'page[base_version]': '1', on_conflict: 'nope' } }],
    ];
    for (const [name, options] of bodies) {
      const answer = await member.client.put(url, options);
      expect([answer.status, answer.body?.code], name).toEqual([400, 'validation_failed']);
    }
    expect(await versionsOf(page.id)).toHaveLength(2);
    expect((await storedPage(page.id)).content).toBe(THREE.replace('One.', 'Uno.'));
  });

  it('answers 413 for a huge body or content with a base, writing nothing', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    const limits = app.config.limits;
    const overContent = `<p>${'x'.repeat(limits.pageContentBytes)}</p>`;
    const overBody = 'y'.repeat(limits.requestBodyBytes + 1);
    for (const [name, content] of [['content past its limit', overContent], ['body past its limit', overBody]] as const) {
      const answer = await member.client.put(url, { json: { page: { content, base_version: 1 } } });
      expect([answer.status, answer.body?.code], name).toEqual([413, 'payload_too_large']);
    }
    expect(await versionsOf(page.id)).toHaveLength(2);
  });
});

describe('Japanese, full-width and half-width text', () => {
  const WEATHER = '<p>今日は晴れです。明日は雨が降るでしょう。週末は出かけます。</p>';

  it('merges edits of different sentences of one paragraph; the same words edited differently conflict', async () => {
    const { page, url } = await freshPage(WEATHER, { title: '天気' });
    await plainWrite(url, { content: WEATHER.replace('晴れ', '曇り') });
    const clean = await member.client.put(url, { json: { page: { content: WEATHER.replace('出かけます', '家にいます'), base_version: 1 } } });
    expect(clean.status, clean.text).toBe(200);
    const merged = '<p>今日は曇りです。明日は雨が降るでしょう。週末は家にいます。</p>';
    expect([clean.body.content, clean.body.merge.result]).toEqual([merged, 'merged']);
    expect((await history(page.id)).at(-1)).toEqual([3, '天気', merged, 1]);
    // from version 1 again: 晴れ became 曇り since, this write makes it 雪
    const same = await member.client.put(url, { json: { page: { content: WEATHER.replace('晴れ', '雪'), base_version: 1 } } });
    expect([same.status, same.body.code, same.body.latest_content]).toEqual([409, 'edit_conflict', merged]);
    expect(same.body.conflicts).toEqual([{ kind: 'content', regions: [{ base: WEATHER, ours: merged, theirs: WEATHER.replace('晴れ', '雪') }] }]);
    expect(await versionsOf(page.id)).toHaveLength(3);
  });

  it('treats a change between full-width and half-width forms as a change like any other', async () => {
    const WIDE = '<p>ＡＢＣ</p>\n<p>１２３</p>\n';
    const { page, url } = await freshPage(WIDE, { title: 'ｶﾀｶﾅ' });
    // a width-only change is a version of its own
    await plainWrite(url, { content: WIDE.replace('ＡＢＣ', 'ABC') });
    const clean = await member.client.put(url, { json: { page: { title: 'カタカナ', content: WIDE.replace('１２３', '123'), base_version: 1 } } });
    expect(clean.status, clean.text).toBe(200);
    expect([clean.body.title, clean.body.content]).toEqual(['カタカナ', '<p>ABC</p>\n<p>123</p>\n']);
    // version 2 made ＡＢＣ half-width; a write from version 1 making it ＡＢＤ changed the same text differently
    const conflict = await member.client.put(url, { json: { page: { content: WIDE.replace('ＡＢＣ', 'ＡＢＤ'), base_version: 1 } } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.conflicts).toEqual([{ kind: 'content', regions: [{ base: '<p>ＡＢＣ</p>\n', ours: '<p>ABC</p>\n', theirs: '<p>ＡＢＤ</p>\n' }] }]);
    expect(await history(page.id)).toEqual([
      [1, 'ｶﾀｶﾅ', WIDE, null], [2, 'ｶﾀｶﾅ', '<p>ABC</p>\n<p>１２３</p>\n', null], [3, 'カタカナ', '<p>ABC</p>\n<p>123</p>\n', 1],
    ]);
  });
});

describe('the merge bound', () => {
  /** A page of `count` blocks `<p>n</p>`; since version 1 `ours` was written; then the member's write `theirs` from version 1. */
  async function overBlocks(count: number, ours: (i: number) => string, theirs: (i: number) => string) {
    const blocks = (text: (i: number) => string) => Array.from({ length: count }, (_, i) => `<p>${text(i)}</p>`).join('');
    const { page, url } = await freshPage(blocks(String));
    await plainWrite(url, { content: blocks(ours) });
    const answer = await member.client.put(url, { json: { page: { content: blocks(theirs), base_version: 1 } } });
    return { page, answer, ours: blocks(ours), both: blocks((i) => (ours(i) !== String(i) ? ours(i) : theirs(i))) };
  }
  const first = (i: number) => (i === 0 ? 'first' : String(i));
  const last = (count: number) => (i: number) => (i === count - 1 ? 'last' : String(i));

  it('merges the first and the last of 2,000 blocks cleanly; past 50,000 pieces answers 409 with conflicts [], writing nothing', async () => {
    const small = await overBlocks(2_000, first, last(2_000));
    expect(small.answer.status, small.answer.text.slice(0, 300)).toBe(200);
    expect((await storedPage(small.page.id)).content).toBe(small.both);
    // 50,001 blocks (about 590 KB, under the 1 MiB content limit): every block lies between the two edits
    const big = await overBlocks(50_001, first, last(50_001));
    expect(Buffer.byteLength(big.both)).toBeLessThan(app.config.limits.pageContentBytes);
    // both sides changing every block: a real conflict, still past the bound (no 50,001 regions in an answer)
    const every = await overBlocks(50_001, (i) => `o${i}`, (i) => `t${i}`);
    for (const { page, answer, ours } of [big, every]) {
      expect(answer.status, answer.text.slice(0, 300)).toBe(409);
      expect(answer.body).toMatchObject({ code: 'edit_conflict', conflicts: [], latest_version: 2, latest_title: 'Page' });
      expect(answer.body.latest_content).toBe(ours);
      expect(answer.body.detail).toMatch(/not tried.*more than 50000 pieces/);
      expect((await storedPage(page.id)).versionSequence).toBe(2);
      expect(await versionsOf(page.id)).toHaveLength(2);
    }
  });

  it('never stores a merge past the page content limit: each side under it, both together over it, is refused', async () => {
    const { page, url } = await freshPage('<p>a</p>\n<p>b</p>\n');
    const big = (letter: string) => `<p>${letter.repeat(600_000)}</p>\n`;
    const ours = `<p>a</p>\n${big('x')}<p>b</p>\n`;
    await plainWrite(url, { content: ours });
    const answer = await member.client.put(url, { json: { page: { content: `<p>a</p>\n<p>b</p>\n${big('y')}`, base_version: 1 } } });
    const stored = await storedPage(page.id);
    const limit = app.config.limits.pageContentBytes;
    expect({ version: stored.versionSequence, bytes: Buffer.byteLength(stored.content) }, `stored past ${limit} bytes`).toEqual({ version: 2, bytes: Buffer.byteLength(ours) });
    expect([answer.status, answer.body?.code]).toEqual([413, 'payload_too_large']);
  });
});

describe('access', () => {
  it('answers 401 without a token, 403 to a reader and an outsider with a base, 404 for another team\'s private note', async () => {
    const { page, url } = await freshPage(THREE);
    const hidden = await freshPage(THREE, { isPrivate: true });
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    const write = { json: { page: { content: THREE.replace('Two.', 'Dos.'), base_version: 1 } } };
    expect((await anonymous(app).put(url, write)).status).toBe(401);
    const byReader = await reader.client.put(url, write);
    expect([byReader.status, byReader.body.code]).toEqual([403, 'insufficient_scope']);
    const byOutsider = await outsider.client.patch(url, write);
    expect([byOutsider.status, byOutsider.body.code]).toEqual([403, 'forbidden']);
    // an invalid base does not tell an outsider anything: refused first
    expect((await outsider.client.put(url, { json: { page: { content: 'x', base_version: 0 } } })).status).toBe(403);
    expect((await outsider.client.put(hidden.url, write)).status).toBe(404);
    expect(await versionsOf(page.id)).toHaveLength(2);
    expect(await versionsOf(hidden.page.id)).toHaveLength(1);
  });
});

describe('restorePageVersion', () => {
  it('still restores after a merge; the restored version is not marked as merged', async () => {
    const { page, url } = await freshPage(THREE);
    await plainWrite(url, { content: THREE.replace('One.', 'Uno.') });
    const merged = await member.client.put(url, { json: { page: { content: THREE.replace('Two.', 'Dos.'), base_version: 1 } } });
    expect(merged.body.merge.result).toBe('merged');
    const restored = await member.client.post(`${url}/histories/1/restore`);
    expect([restored.status, restored.body.content, restored.body.version]).toEqual([200, THREE, 4]);
    expect('merge' in restored.body).toBe(false);
    expect((await history(page.id)).map(([index, , , base]) => [index, base])).toEqual([[1, null], [2, null], [3, 1], [4, null]]);
    expect((await member.client.get(`${url}/histories/4`)).body).toMatchObject({ content: THREE, merged_from_base: null });
    // and a write from the restored version's base merges over it like any other
    const after = await member.client.put(url, { json: { page: { content: '<p>Uno.</p>\n<p>Dos.</p>\n<p>Tres.</p>\n', base_version: 3 } } });
    expect([after.status, after.body.content, after.body.merge?.merged_over]).toEqual([200, '<p>One.</p>\n<p>Two.</p>\n<p>Tres.</p>\n', [4]]);
  });
});
