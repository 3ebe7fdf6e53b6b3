// Text reaches the database exactly as written: the ORM writes every value into the SQL text, quoted by
// src/db/postgresql-driver.ts, and the search document's values go in the same way (search.indexer.ts). A page whose
// title and content hold what quoting must get right is created and updated; its row, its versions (content and
// diff) and its search document are read back and compared with what the service computes in JavaScript.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Page, PageVersion } from '../../src/modules/pages/page.entity.ts';
import { renderDiff } from '../../src/modules/pages/diff.ts';
import { htmlToText, indexTokens, normalize } from '../../src/modules/search/text.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor;

beforeAll(async () => {
  app = await startTestApp();
  ({ manager } = await makeScenario(app, { team: 'quoting' }));
});
afterAll(async () => app?.close());

const TRICKY = [
  "it's", "''", "\\'", '\\', '\\\\', "E'x'", "'; drop table pages; --", '?', '??', '\\?', '$1', '$$', '"quoted"',
  'tab\there', 'crlf\r\nline', '日本語のテキスト', 'emoji \u{1F600}', 'é', '<p class="x">&amp;</p>', '%s %d', '\u2028',
];

async function storedDocument(pageId: number) {
  await app.settle();
  const [row] = await app.em().getConnection().execute<{ title: string; body: string; norm_title: string; norm_body: string; tokens: number[] }[]>(
    `select title, body, norm_title, norm_body, tokens from search_documents where kind = 'page' and object_id = ${pageId}`,
  );
  return row!;
}

function expectedDocument(title: string, content: string) {
  const body = htmlToText(content);
  const normTitle = normalize(title);
  const normBody = normalize(body);
  return { title, body, norm_title: normTitle, norm_body: normBody, tokens: indexTokens(normTitle === '' ? normBody : `${normTitle} ${normBody}`) };
}

describe('text written through the ORM', () => {
  it('stores a page, its versions and its search document exactly', async () => {
    await makeNote(app, 'quoting', manager.user, { slug: 'tricky' });
    const title = `Quotes ' \\ ? ${TRICKY[5]}`;
    const first = TRICKY.map((text, line) => `<p>${line}: ${text}</p>`).join('\n');
    const created = await manager.client.post('/api/v1/quoting/tricky/pages', { json: { page: { title, content: first } } });
    expect(created.status, created.text).toBe(200);
    expect(created.body.content).toBe(first);
    const pageId = created.body.id as number;

    const second = [...TRICKY].reverse().map((text, line) => `<p>${line % 3 === 0 ? 'changed ' : ''}${text}</p>`).join('\r\n');
    const updated = await manager.client.put(`/api/v1/quoting/tricky/${pageId}`, { json: { page: { content: second } } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.content).toBe(second);

    const page = await app.em().findOneOrFail(Page, pageId);
    expect(page.title).toBe(title);
    expect(page.content).toBe(second);
    // the diffs are made on the first read of the history, and kept
    expect((await manager.client.get(`/api/v1/quoting/tricky/${pageId}/histories`)).status).toBe(200);
    const versions = await app.em().find(PageVersion, { page: pageId }, { orderBy: { index: 'asc' } });
    expect(versions.map((version) => [version.title, version.content, version.diff])).toEqual([
      [title, first, renderDiff('', first).html],
      [title, second, renderDiff(first, second).html],
    ]);
    expect(await storedDocument(pageId)).toEqual(expectedDocument(title, second));
  });

  it('stores 1 MiB of content with quotes and backslashes whole', async () => {
    await makeNote(app, 'quoting', manager.user, { slug: 'large' });
    const line = "<p>it's \\ a line with 'quotes' and \\\\ backslashes</p>\n";
    const content = line.repeat(Math.floor(app.config.limits.pageContentBytes / line.length));
    const created = await manager.client.post('/api/v1/quoting/large/pages', { json: { page: { title: 'Large', content } } });
    expect(created.status, created.text.slice(0, 300)).toBe(200);
    const pageId = created.body.id as number;
    const page = await app.em().findOneOrFail(Page, pageId);
    expect(page.content === content).toBe(true);
    expect((await manager.client.get(`/api/v1/quoting/large/${pageId}/histories/1`)).status).toBe(200);
    const [version] = await app.em().find(PageVersion, { page: pageId });
    expect(version!.diff === renderDiff('', content).html).toBe(true);
    const stored = await storedDocument(pageId);
    const expected = expectedDocument('Large', content);
    expect(stored.norm_body === expected.norm_body).toBe(true);
    expect(stored.tokens).toEqual(expected.tokens);
  });
});
