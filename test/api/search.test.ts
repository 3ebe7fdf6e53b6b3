// searchNotes: the matrix (happy path, 401, another team's private note, 400), Japanese matching, permissions
// applied before the limit, ordering, snippets, the index kept by the writes and rebuilt by reindex.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { searchNotes } from '../../generated/client/index.ts';
import { reindex, reindexIfEmpty } from '../../src/modules/search/search.indexer.ts';
import { BIG_RESULT } from '../../src/modules/search/search.repository.ts';
import { candidates } from '../../src/modules/search/search.stats.ts';
import { parseQuery } from '../../src/modules/search/query.ts';
import { createLogger } from '../../src/http/logger.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeIssue, makePage, makePageComment, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor, stranger: Actor;
let shared: Note, hidden: Note;
let sharedPages: Record<string, number>;

type Hit = { id: number; title: string; matches: { type: string; id: number; title: string; snippet: string; page_id?: number; issue_index?: number; comment_on?: string }[] };

/** A note made through the API (so its title and description are indexed like a user's). */
async function apiNote(actor: Actor, team: string, title: string, options: { slug?: string; description?: string; isPrivate?: boolean } = {}): Promise<Note> {
  const answer = await actor.client.post('/api/v1/notes', {
    json: { note: { title, team, ...(options.slug ? { slug: options.slug } : {}), description: options.description ?? '', is_private: options.isPrivate ?? false } },
  });
  expect(answer.status, answer.text).toBe(200);
  return app.em().findOneOrFail(Note, answer.body.id as number, { populate: ['team'] });
}

async function search(actor: Actor, query: Record<string, string | number | undefined>) {
  // the index is a projection of the change log: what the tests wrote is indexed first, as the server's worker does
  await app.settle();
  const parameters = new URLSearchParams(Object.entries(query).flatMap(([key, value]) => (value === undefined ? [] : [[key, String(value)]])));
  return actor.client.get<Hit[]>(`/api/v1/search?${parameters}`);
}
const titles = (hits: Hit[]) => hits.map((hit) => hit.title);

beforeAll(async () => {
  app = await startTestApp({}, { countQueries: true });
  ({ manager, member, outsider } = await makeScenario(app, { team: 'wiki' }));
  stranger = await makeUser(app, 'stranger');
  await makeTeam(app, 'elsewhere', [{ user: stranger.user, role: 'manager' }]);
  shared = await apiNote(manager, 'wiki', 'Operations handbook', { slug: 'ops', description: 'How we deploy and roll back' });
  hidden = await apiNote(stranger, 'elsewhere', 'Secret plans', { slug: 'secret', description: 'deploy 会議 secret', isPrivate: true });
  const page = async (title: string, content: string) => (await makePage(app, shared, member, { title, content })).id;
  sharedPages = {
    meeting: await page('定例会議', '<p>今週の<b>会議</b>では課題を確認した。</p>'),
    capture: await page('ツール', '<p>画面キャプチャツールの仕様を決める。</p>'),
    width: await page('Widths', '<p>ＡＰＩの全角とﾊﾝｶｸのカナ</p>'),
    english: await page('Deployment guide', '<p>Deploying the service: run the <i>rollback</i> script if needed.</p>'),
    xss: await page('Hostile', '<p>&lt;script&gt;alert(1)&lt;/script&gt; deploy <img src=x onerror=alert(2)> "quoted" & more</p>'),
  };
  await makePage(app, hidden, stranger, { title: '会議 secret page', content: '<p>deploy the secret 会議</p>' });
});
afterAll(async () => app?.close());

describe('searchNotes', () => {
  it('finds notes by their pages, with matches and highlighted snippets, and stores nothing', async () => {
    const answer = await search(outsider, { q: 'rollback' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.map((hit) => hit.id)).toEqual([shared.id]);
    expect(answer.headers.get('x-total-count')).toBe('1');
    const [note] = answer.body;
    expect(note).toMatchObject({ model: 'note', title: 'Operations handbook', slug: 'ops' });
    expect(note!.matches).toEqual([
      { type: 'page', id: sharedPages.english, title: 'Deployment guide', page_id: sharedPages.english, snippet: 'Deploying the service: run the <mark>rollback</mark> script if needed.' },
    ]);
    // the note's own title and description match too
    const own = (await search(outsider, { q: 'handbook deploy' })).body;
    expect(own[0]!.matches).toEqual([{ type: 'note', id: shared.id, title: 'Operations handbook', snippet: 'How we <mark>deploy</mark> and roll back' }]);
  });

  it('answers on the .json path too, with + for spaces as form-encoded queries send them', async () => {
    await app.settle();
    const answer = await outsider.client.get('/api/v1/search.json?q=handbook+deploy&type=note');
    expect([answer.status, answer.body.map((hit: Hit) => hit.id)]).toEqual([200, [shared.id]]);
  });

  it('answers 401 without a token', async () => {
    const answer = await anonymous(app).get('/api/v1/search?q=deploy');
    expect(answer.status).toBe(401);
  });

  it("never shows another team's private note, nor lets note_id reach it", async () => {
    for (const q of ['deploy', '会議', 'secret']) {
      const answer = await search(outsider, { q });
      expect(answer.status).toBe(200);
      expect(answer.body.map((hit) => hit.id)).not.toContain(hidden.id);
    }
    const direct = await search(outsider, { q: 'secret', note_id: hidden.id });
    const missing = await search(outsider, { q: 'secret', note_id: 2_000_000 });
    expect([direct.status, direct.body, direct.headers.get('x-total-count')]).toEqual([200, [], '0']);
    expect([missing.status, missing.body]).toEqual([200, []]);
    // its own team finds it
    expect((await search(stranger, { q: 'secret', note_id: hidden.id })).body.map((hit) => hit.id)).toEqual([hidden.id]);
  });

  it('answers 400 for bad input', async () => {
    const queries: Record<string, string | number>[] = [{ q: '' }, { q: 'x'.repeat(257) }, { q: '   ' }, { q: '!!! ??' }, { q: '-deploy' }, { q: 'a b c d e f g h i j k' },
      { q: 'deploy', type: 'everything' }, { q: 'deploy', order: 'best' }, { q: 'deploy', note_id: 0 }, { q: 'deploy', per_page: 101 }];
    for (const query of queries) {
      const answer = await search(member, query);
      expect(answer.status, JSON.stringify(query)).toBe(400);
      expect((answer.body as unknown as { code: string }).code).toBe('validation_failed');
    }
    expect((await member.client.get('/api/v1/search')).status).toBe(400);
  });

  it('finds Japanese words of one and two characters, inside compounds, in full and half width', async () => {
    const pagesOf = async (q: string) => (await search(member, { q, type: 'page' })).body.flatMap((hit) => hit.matches.map((match) => match.id));
    expect(await pagesOf('会議')).toEqual([sharedPages.meeting]);
    expect(await pagesOf('課題')).toEqual([sharedPages.meeting]);
    expect(await pagesOf('仕様')).toEqual([sharedPages.capture]);
    expect(await pagesOf('週')).toEqual([sharedPages.meeting]);
    expect(await pagesOf('キャプチャ')).toEqual([sharedPages.capture]);
    expect(await pagesOf('api')).toEqual([sharedPages.width]);
    expect(await pagesOf('ＡＰＩ')).toEqual([sharedPages.width]);
    expect(await pagesOf('ハンカク')).toEqual([sharedPages.width]);
    expect(await pagesOf('ﾊﾝｶｸ')).toEqual([sharedPages.width]);
    expect(await pagesOf('会議 -課題')).toEqual([]);
    const [hit] = (await search(member, { q: 'キャプチャ' })).body;
    expect(hit!.matches[0]!.snippet).toBe('画面<mark>キャプチャ</mark>ツールの仕様を決める。');
    const [width] = (await search(member, { q: 'ﾊﾝｶｸ', type: 'page' })).body;
    expect(width!.matches[0]!.snippet).toBe('ＡＰＩの全角と<mark>ﾊﾝｶｸ</mark>のカナ');
  });

  it('matches English words and prefixes, quoted phrases, and excludes -terms', async () => {
    const pagesOf = async (q: string) => (await search(member, { q, type: 'page' })).body.flatMap((hit) => hit.matches.map((match) => match.id)).sort();
    expect(await pagesOf('deploy')).toEqual([sharedPages.english, sharedPages.xss].sort());
    expect(await pagesOf('DEPLOYING')).toEqual([sharedPages.english]);
    expect(await pagesOf('roll')).toEqual([sharedPages.english]);
    expect(await pagesOf('"the service: run"')).toEqual([sharedPages.english]);
    expect(await pagesOf('"service run"')).toEqual([]);
    expect(await pagesOf('deploy -rollback')).toEqual([sharedPages.xss]);
    expect(await pagesOf('deploy -"rollback script"')).toEqual([sharedPages.xss]);
    expect(await pagesOf('ploy')).toEqual([]);
  });

  it('indexes content with a control character or a surrogate pair without failing the write (a lone surrogate is refused: 400)', async () => {
    const note = await apiNote(member, 'wiki', 'Odd text', { slug: 'odd' });
    const lone = await member.client.post('/api/v1/wiki/odd/pages', { raw: { contentType: 'application/json', body: '{"page":{"title":"odd title","content":"<p>tapir \\udc00 text</p>"}}' } });
    expect(lone.status).toBe(400);
    const answer = await member.client.post('/api/v1/wiki/odd/pages', { raw: { contentType: 'application/json', body: '{"page":{"title":"odd title","content":"<p>tapir \\ud83d\\ude00 \\u0001 text</p>"}}' } });
    expect(answer.status, answer.text).toBe(200);
    expect((await search(member, { q: 'tapir' })).body.map((hit) => hit.id)).toEqual([note.id]);
  });

  it('escapes everything in snippets but <mark>', async () => {
    const [hit] = (await search(member, { q: 'alert', type: 'page' })).body;
    const { snippet } = hit!.matches[0]!;
    expect(snippet).toBe('&#60;script&#62;<mark>alert</mark>(1)&#60;/script&#62; deploy &#34;quoted&#34; &#38; more');
    expect(snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
  });

  it('ranks whole words and title hits above substring hits', async () => {
    const note = await apiNote(member, 'wiki', 'Ranking', { slug: 'ranking' });
    const sub = await makePage(app, note, member, { title: 'A', content: '<p>会議室の予約</p>' });
    const whole = await makePage(app, note, member, { title: 'B', content: '<p>次の会議を開く</p>' });
    const titled = await makePage(app, note, member, { title: '会議', content: '<p>none</p>' });
    const [hit] = (await search(member, { q: '会議', note_id: note.id })).body;
    expect(hit!.matches.map((match) => match.id)).toEqual([titled.id, whole.id, sub.id]);
    expect(hit!.matches[0]!.snippet).toBe('<mark>会議</mark>');
  });

  it('searches issues and comments, and type narrows it', async () => {
    const note = await apiNote(member, 'wiki', 'Tracker', { slug: 'tracker' });
    const issue = await makeIssue(app, note, member, { title: 'Flaky upload', description: 'The zebra test fails' });
    const page = await makePage(app, note, member, { title: 'Zoo', content: '<p>animals</p>' });
    const comment = await makePageComment(page, outsider, { comment: 'a zebra was here' });
    const all = (await search(member, { q: 'zebra' })).body;
    expect(all.map((hit) => hit.id)).toEqual([note.id]);
    expect(all[0]!.matches).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: 'issue', id: issue.id, issue_index: issue.index, title: 'Flaky upload' }),
      expect.objectContaining({ type: 'comment', id: comment.id, page_id: page.id, comment_on: 'page', title: '' }),
    ]));
    expect((await search(member, { q: 'zebra', type: 'comment' })).body[0]!.matches.map((match) => match.type)).toEqual(['comment']);
    expect((await search(member, { q: 'zebra', type: 'issue' })).body[0]!.matches.map((match) => match.type)).toEqual(['issue']);
    expect((await search(member, { q: 'zebra', type: 'note' })).body).toEqual([]);
    expect((await search(member, { q: 'tracker', type: 'note' })).body.map((hit) => hit.id)).toEqual([note.id]);
  });

  it('keeps the index in step with updates and deletes', async () => {
    const note = await apiNote(member, 'wiki', 'Churn', { slug: 'churn' });
    const page = await makePage(app, note, member, { title: 'Draft', content: '<p>walrus</p>' });
    expect((await search(member, { q: 'walrus' })).body.map((hit) => hit.id)).toEqual([note.id]);
    await member.client.put(`/api/v1/wiki/churn/${page.id}`, { json: { page: { content: '<p>narwhal</p>' } } });
    expect((await search(member, { q: 'walrus' })).body).toEqual([]);
    expect((await search(member, { q: 'narwhal' })).body.map((hit) => hit.id)).toEqual([note.id]);
    await member.client.put('/api/v1/wiki/churn', { json: { note: { title: 'Churned', team: 'wiki' } } });
    expect((await search(member, { q: 'churned', type: 'note' })).body.map((hit) => hit.id)).toEqual([note.id]);
    expect((await member.client.delete(`/api/v1/wiki/churn/${page.id}`)).status).toBe(204);
    expect((await search(member, { q: 'narwhal' })).body).toEqual([]);
    // a private note is found by its team only, after it is made private
    await member.client.put('/api/v1/wiki/churn', { json: { note: { title: 'Churned', team: 'wiki', is_private: true } } });
    expect((await search(outsider, { q: 'churned' })).body).toEqual([]);
    expect((await search(member, { q: 'churned' })).body.map((hit) => hit.id)).toEqual([note.id]);
    expect((await manager.client.delete('/api/v1/wiki/churn')).status).toBe(204);
    const [left] = await app.em().execute<{ n: string }[]>(`select count(*) as n from search_documents where note_id = ?`, [note.id]);
    expect(Number(left!.n)).toBe(0);
  });

  it('indexes what forks, pulls and merges write set-based: the fork and its pages, the merged original', async () => {
    const original = await apiNote(member, 'wiki', 'Upstream lore', { slug: 'lore' });
    const page = await makePage(app, original, member, { title: 'Beasts', content: '<p>the okapi</p>' });
    const forked = await member.client.post('/api/v1/wiki/lore/forks', { json: { team: 'wiki', title: 'Lore fork' } });
    expect(forked.status, forked.text).toBe(200);
    expect(new Set((await search(member, { q: 'okapi' })).body.map((hit) => hit.id))).toEqual(new Set([original.id, forked.body.id]));
    expect((await search(member, { q: 'lore fork', type: 'note' })).body.map((hit) => hit.id)).toEqual([forked.body.id]);
    // the fork edits its copy and proposes it; the merge writes the original's page
    const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ?', [forked.body.id]);
    await member.client.put(`/api/v1/wiki/${forked.body.id}/${copy!.id}`, { json: { page: { content: '<p>the wombat</p>' } } });
    const [version] = await app.em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [copy!.id]);
    const request = await member.client.post(`/api/v1/wiki/${forked.body.id}/requests`, { json: { page_versions: [version!.id] } });
    expect(request.status, request.text).toBe(200);
    expect((await manager.client.put(`/api/v1/wiki/lore/requests/${request.body.index}/merge`)).status).toBe(200);
    expect((await search(member, { q: 'wombat', note_id: original.id })).body.map((hit) => hit.id)).toEqual([original.id]);
    expect((await search(member, { q: 'okapi', note_id: original.id })).body).toEqual([]);
    expect(page.id).toBeGreaterThan(0);
  });

  it('applies permissions before the limit: a page is full while more readable matches exist', async () => {
    // 6 private notes of a team the outsider is not in, then 5 public ones, all matching; newest first puts the private ones first
    const owner = await makeUser(app, 'owner');
    await makeTeam(app, 'closed', [{ user: owner.user, role: 'manager' }]);
    const open: number[] = [];
    for (let i = 0; i < 5; i += 1) open.push((await apiNote(owner, 'closed', `Quokka public ${i}`)).id);
    for (let i = 0; i < 6; i += 1) await apiNote(owner, 'closed', `Quokka private ${i}`, { isPrivate: true });
    const first = await search(outsider, { q: 'quokka', per_page: 2, order: '-created_at' });
    expect(first.body.map((hit) => hit.id)).toEqual([open[4], open[3]]);
    expect(first.headers.get('x-total-count')).toBe('5');
    expect(first.headers.get('link')).toContain('rel="next"');
    const third = await search(outsider, { q: 'quokka', per_page: 2, page: 3, order: '-created_at' });
    expect(third.body.map((hit) => hit.id)).toEqual([open[0]]);
    const past = await search(outsider, { q: 'quokka', per_page: 2, page: 4 });
    expect([past.body, past.headers.get('x-total-count')]).toEqual([[], '5']);
    expect((await search(owner, { q: 'quokka', per_page: 100 })).body).toHaveLength(11);
  });

  it('over a big result (more than BIG_RESULT documents) walks the notes in order: pages full, total a lower bound', async () => {
    const owner = await makeUser(app, 'bulk');
    const notes: Note[] = [];
    for (let i = 0; i < 4; i += 1) notes.push(await apiNote(owner, 'bulk', `Bulk ${i}`, { slug: `bulk${i}` }));
    const hiddenOne = await apiNote(stranger, 'elsewhere', 'Bulk hidden', { isPrivate: true });
    // BIG_RESULT + 100 pages mentioning the word, spread over the notes (set-based, then indexed by reindex)
    await app.em().execute(`insert into pages (note_id, parent_id, position, title, content, created_at, updated_at)
      select (array[?, ?, ?, ?, ?]::int[])[1 + g % 5], null, g, 'bulk ' || g, '<p>the pangolin number ' || g || '</p>', now(), now()
        from generate_series(1, ?) g`, [...notes.map((note) => note.id), hiddenOne.id, BIG_RESULT + 100]);
    await reindex(app.em());
    await app.em().execute(`update notes set updated_at = now() - (id || ' minutes')::interval where id = any(?::int[])`, [`{${notes.map((note) => note.id).join(',')}}`]);
    const first = await search(outsider, { q: 'pangolin', per_page: 3 });
    expect(first.status).toBe(200);
    // relevance falls back to most recently updated first: the lowest ids were updated last
    expect(first.body.map((hit) => hit.id)).toEqual(notes.slice(0, 3).map((note) => note.id));
    expect(first.headers.get('x-total-count')).toBe('4'); // a lower bound: one past the page
    expect(first.body[0]!.matches).toHaveLength(3);
    expect(first.body[0]!.matches[0]!.snippet).toMatch(/^the <mark>pangolin<\/mark> number \d+$/);
    const second = await search(outsider, { q: 'pangolin', per_page: 3, page: 2 });
    expect([second.body.map((hit) => hit.id), second.headers.get('x-total-count')]).toEqual([[notes[3]!.id], '4']);
    expect((await search(outsider, { q: 'pangolin', order: 'title' })).body.map((hit) => hit.title)).toEqual(['Bulk 0', 'Bulk 1', 'Bulk 2', 'Bulk 3']);
    expect((await search(stranger, { q: 'pangolin' })).body.map((hit) => hit.id)).toContain(hiddenOne.id);
    expect((await search(outsider, { q: 'pangolin -number' })).body).toEqual([]);
  });

  it('holds at most LIMIT_LIST_TEXT_BYTES of descriptions in a page of results, ranked or walked, with none skipped', async () => {
    // 30 notes with descriptions of 64K characters of 3 bytes (192 KiB each): 21 of them fit the default 4 MiB
    const owner = await makeUser(app, 'wide');
    const wide: number[] = []; // newest first, as the search is asked to order them
    for (let i = 0; i < 30; i += 1) wide.unshift((await apiNote(owner, 'wide', `Numbat ${i}`, { description: '語'.repeat(65536) })).id);
    const fits = Math.floor((4 * 1024 * 1024) / (3 * 65536));
    const readAll = async (query: Record<string, string | number>) => {
      const seen: number[] = [];
      const sizes: number[] = [];
      const totals: string[] = [];
      let next: URL | undefined = new URL(`http://x/api/v1/search?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`);
      while (next) {
        const answer = await search(outsider, Object.fromEntries(next.searchParams));
        expect(answer.status).toBe(200);
        seen.push(...answer.body.map((hit) => hit.id));
        sizes.push(answer.body.length);
        totals.push(answer.headers.get('x-total-count') ?? '');
        const link = /<([^>]+)>; rel="next"/.exec(answer.headers.get('link') ?? '')?.[1];
        next = link === undefined ? undefined : new URL(link);
        expect(sizes.length).toBeLessThan(10);
      }
      return { seen, sizes, totals };
    };
    // ranked: the page size comes down to what fits, the Link headers carry it, every note comes once
    const ranked = await readAll({ q: 'numbat', per_page: 100, order: '-updated_at' });
    expect(ranked.sizes).toEqual([fits, 30 - fits]);
    expect(ranked.seen).toEqual(wide);
    expect(ranked.totals).toEqual(['30', '30']);
    // a client that counts pages by the page size it asked for gets the same pages (the size is the result's)
    expect((await search(outsider, { q: 'numbat', per_page: 100, page: 2, order: '-updated_at' })).body.map((hit) => hit.id)).toEqual(wide.slice(fits));
    // small pages asked for are kept
    expect((await search(outsider, { q: 'numbat', per_page: 5, order: '-updated_at' })).body).toHaveLength(5);
    // walked (more than BIG_RESULT documents match): the same cut
    await app.em().execute(`insert into pages (note_id, parent_id, position, title, content, created_at, updated_at)
      select (?::int[])[1 + g % 30], null, g, 'numbat ' || g, '<p>a numbat burrow ' || g || '</p>', now(), now()
        from generate_series(1, ?) g`, [`{${wide.join(',')}}`, BIG_RESULT + 100]);
    await reindex(app.em());
    const walked = await readAll({ q: 'numbat', per_page: 100, order: '-updated_at' });
    expect(walked.sizes).toEqual([fits, 30 - fits]);
    expect(walked.seen).toEqual(wide);
    expect(walked.totals).toEqual([String(fits + 1), '30']); // the walk's total: a lower bound, one past the page
  });

  it('settles from the column statistics whether a word has few or many candidates, and counts where they cannot say', async () => {
    // after the big result above: reindex ran ANALYZE; `pangolin` is in nearly every document, `quokka` in a few
    const em = app.em();
    const log = createLogger('silent');
    const token = (word: string) => parseQuery(word).tokens;
    expect(await candidates(em, log, token('pangolin'), BIG_RESULT)).toBe('many');
    expect(await candidates(em, log, token('quokka'), BIG_RESULT)).toBe('few');
    // two common tokens: their intersection may be anything up to the rarer one's count (ranked where that is at most
    // twice the bound, counted past it)
    const both = [...token('pangolin'), ...token('number')];
    expect(await candidates(em, log, both, BIG_RESULT)).toBe('few');
    expect(await candidates(em, log, both, 1000)).toBe('count');
    // a word the statistics do not know, with a bound under the least common known share: not settled either
    expect(await candidates(em, log, token('zyzzyva'), 0)).toBe('count');
    // they choose how a search runs, never what it finds: narrowed to a kind (all these matches are of one kind) a
    // search counts its candidates, and answers the same
    for (const [q, type] of [['pangolin', 'page'], ['quokka', 'note']] as const) {
      const settled = await search(outsider, { q, per_page: 3 });
      const counted = await search(outsider, { q, per_page: 3, type });
      expect(settled.body.length).toBeGreaterThan(0);
      expect([settled.body, settled.headers.get('x-total-count')]).toEqual([counted.body, counted.headers.get('x-total-count')]);
    }
  });

  it('orders by relevance, timestamps and title', async () => {
    const owner = await makeUser(app, 'orderer');
    const a = await apiNote(owner, 'orderer', 'Bravo lemur');
    const b = await apiNote(owner, 'orderer', 'Alpha', { description: 'a lemur lives here' });
    // timestamps are kept to the second: make `a` the older one, `b` the more recently updated
    await app.em().execute(`update notes set created_at = now() - interval '2 days', updated_at = now() - interval '1 day' where id = ?`, [a.id]);
    const ids = async (order: string) => (await search(owner, { q: 'lemur', order })).body.map((hit) => hit.id);
    expect(await ids('relevance')).toEqual([a.id, b.id]);
    expect(await ids('created_at')).toEqual([a.id, b.id]);
    expect(await ids('-created_at')).toEqual([b.id, a.id]);
    expect(await ids('title')).toEqual([b.id, a.id]);
    expect(await ids('updated_at')).toEqual([a.id, b.id]);
    expect(await ids('-updated_at')).toEqual([b.id, a.id]);
  });

  it('is rebuilt whole by reindex (and at start-up when empty), with the same results', async () => {
    const before = (await search(member, { q: '会議' })).body;
    await app.em().execute('delete from search_documents');
    expect((await search(member, { q: '会議' })).body).toEqual([]);
    // start-up fills an empty index (reindexIfEmpty), and leaves a filled one alone
    const report = await reindexIfEmpty(app.em());
    expect(report!.documents.page).toBeGreaterThan(5);
    expect((await search(member, { q: '会議' })).body).toEqual(before);
    expect(await reindexIfEmpty(app.em())).toBeUndefined();
    expect((await reindex(app.em())).documents).toEqual(report!.documents);
    expect((await search(member, { q: '会議' })).body).toEqual(before);
  });

  it('works through the generated client', async () => {
    const client = createClient({ baseUrl: app.baseUrl, auth: () => member.token });
    const answer = await searchNotes({ client, query: { q: '仕様', type: 'page' }, throwOnError: true });
    expect(answer.data.map((note) => note.id)).toEqual([shared.id]);
    expect(answer.data[0]!.matches?.[0]?.snippet).toContain('<mark>仕様</mark>');
  });
});
