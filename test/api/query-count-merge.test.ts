// Merge-on-write costs a fixed number of statements (issue 19): a write whose base is the page's current version is
// the one-statement write, as one without a base; from an older base, a clean merge, a conflict, on_conflict=fail
// and overwrite each cost the same however many versions lie between the base and the page now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Answer } from '../support/client.ts';
import { makeNote, makePage, makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let reader: Actor;

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  reader = await makeUser(app, 'counter');
});
afterAll(async () => app?.close());

describe('a write with page[base_version] costs a fixed number of statements', () => {
  // three paragraphs: the versions in between change the last, the merged writes the first, the conflicting ones the
  // first too (differently from the versions in between)
  const paragraphs = (first: string, last: string) => `<p>${first}</p><p>The middle paragraph.</p><p>${last}</p>`;
  let slug = 0;
  /** A page with `between` versions after its first (each changing the last paragraph); its url and id. */
  const pageWith = async (between: number, firstEdit?: string) => {
    const note = await makeNote(app, 'counter', reader.user, { slug: `based-${(slug += 1)}` });
    const page = await makePage(app, note, reader, { title: 'Based', content: paragraphs('First.', 'Last.') });
    const url = `/api/v1/counter/based-${slug}/${page.id}`;
    for (let n = 1; n <= between; n += 1) {
      const content = paragraphs(n === between && firstEdit ? firstEdit : 'First.', `Last, edit ${n}.`);
      expect((await reader.client.put(url, { json: { page: { content } } })).status).toBe(200);
    }
    return { url, id: page.id };
  };
  const versionsOf = (pageId: number) => app.em().execute<{ index: number; content: string; merged_from_base: number | null }[]>(
    'select index, content, merged_from_base from page_versions where page_id = ? order by index', [pageId]);
  const counted = async (url: string, body: Record<string, unknown>, status: number) => {
    await reader.client.get('/api/v1/me'); // the token's last_used_at, outside the count
    let answer!: Answer;
    const statements = await app.countQueries(async () => {
      answer = await reader.client.put(url, { json: body });
    });
    expect(answer.status, answer.text).toBe(status);
    return { statements, answer };
  };

  it('4 with the current version as base, as without one; from an older base 11 for a clean merge and 5 for an edit_conflict, however many versions lie between', async () => {
    // the current base is the one-statement write, as a write without a base
    const plain = await pageWith(2);
    const withoutBase = await counted(plain.url, { page: { content: paragraphs('First, plainly.', 'Last, edit 2.') } }, 200);
    const currentBase = await counted(plain.url, { page: { content: paragraphs('First, based.', 'Last, edit 2.'), base_version: 4 } }, 200);
    expect([withoutBase.statements, currentBase.statements]).toEqual([4, 4]);
    expect(currentBase.answer.body).toMatchObject({ version: 5 });
    expect(currentBase.answer.body.merge).toBeUndefined();
    expect((await versionsOf(plain.id)).map((version) => version.merged_from_base)).toEqual([null, null, null, null, null]);

    // an older base, merged cleanly: the same count over 1 and over 10 versions
    const merges: number[] = [];
    for (const between of [1, 10]) {
      const page = await pageWith(between);
      const { statements, answer } = await counted(page.url, { page: { content: paragraphs('First, merged.', 'Last.'), base_version: 1 } }, 200);
      merges.push(statements);
      expect(answer.body).toMatchObject({ version: between + 2, content: paragraphs('First, merged.', `Last, edit ${between}.`) });
      expect(answer.body.merge).toEqual({ base_version: 1, merged_over: Array.from({ length: between }, (_, i) => i + 2), result: 'merged' });
      const versions = await versionsOf(page.id);
      expect(versions).toHaveLength(between + 2);
      expect(versions.filter((version) => version.merged_from_base !== null)).toEqual([{ index: between + 2, content: answer.body.content, merged_from_base: 1 }]);
    }
    expect(merges[1]).toBe(merges[0]);
    // the scope; begin, the page's row locked, the base version, the change, the log entry, the new version, the page,
    // commit; the view, the members
    expect(merges[0]).toBe(11);

    // an older base whose write overlaps the versions since: 409 edit_conflict, nothing written
    const conflicts: number[] = [];
    for (const between of [1, 10]) {
      const page = await pageWith(between, 'First, changed meanwhile.');
      const { statements, answer } = await counted(page.url, { page: { content: paragraphs('First, changed here.', 'Last.'), base_version: 1 } }, 409);
      conflicts.push(statements);
      expect(answer.body).toMatchObject({ code: 'edit_conflict', latest_version: between + 1 });
      expect(await versionsOf(page.id)).toHaveLength(between + 1);
    }
    expect(conflicts[1]).toBe(conflicts[0]);
    // the scope; begin, the page's row locked, the base version, rollback
    expect(conflicts[0]).toBe(5);

    // on_conflict=fail (409 without merging) and overwrite (the write wins) from an older base
    const failing = await pageWith(3);
    const failed = await counted(`${failing.url}?on_conflict=fail`, { page: { content: paragraphs('First, failed.', 'Last.'), base_version: 1 } }, 409);
    expect(await versionsOf(failing.id)).toHaveLength(4);
    const overwritten = await counted(failing.url, { page: { content: paragraphs('First, overwritten.', 'Last.'), base_version: 2 }, on_conflict: 'overwrite' }, 200);
    expect(overwritten.answer.body.merge).toEqual({ base_version: 2, merged_over: [3, 4], result: 'overwritten' });
    expect((await versionsOf(failing.id)).map((version) => version.merged_from_base)).toEqual([null, null, null, null, null]);
    // fail: the scope; begin, the page's row locked, rollback; overwrite: a clean merge's statements but the base version
    expect([failed.statements, overwritten.statements]).toEqual([4, 10]);
  });
});
