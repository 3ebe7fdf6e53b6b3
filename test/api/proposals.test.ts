// Apps that only propose (`writes: proposals`, src/modules/requests/proposals.ts): their page writes land in a fork of
// the app and the user, and one open request on the original carries them, kept up to date; the original is never
// written; their other writes are limited (403 `proposals_only`); through MCP the tool says where the change went.
// The PostgreSQL pass races parallel writes of one agent: one fork, one request.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { ApiClient } from '../support/client.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { databaseKind } from '../support/database.ts';
import { makeNote, makePage, type Actor } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import { authorizePath, CookieBrowser, givePassword, hiddenFields, pkcePair } from '../support/oauth.ts';

let app: TestApp;
let s: Scenario<'guide' | 'secret'>;
let agentToken: string;
let agent: ApiClient;
let agentAppId: number;
let agentClientId: string;

/** A token of the app for the user, as the authorization code flow would issue it. */
async function appToken(actor: Actor, clientRowId: number, scope: 'read' | 'write' = 'write'): Promise<string> {
  const { token, secret } = await issueToken(app.em(), actor.user, { scope });
  await app.em().execute('update tokens set client_id = ? where id = ?', [clientRowId, token.id]);
  return secret;
}

async function registerApp(owner: Actor, name: string, writes?: 'direct' | 'proposals') {
  const answer = await owner.client.post('/api/v1/me/apps', { json: { app: { name, redirect_uris: ['http://127.0.0.1:9/cb'], confidential: false, ...(writes ? { writes } : {}) } } });
  expect(answer.status, answer.text).toBe(200);
  const [{ id }] = await app.em().execute<{ id: number }[]>('select id from oauth_clients where client_id = ?', [answer.body.client_id]) as [{ id: number }];
  return { body: answer.body, id };
}

const forkRows = (noteId: number) =>
  app.em().execute<{ fork_id: number; request_id: number | null }[]>('select fork_id, request_id from proposal_forks where client_id = ? and note_id = ?', [agentAppId, noteId]);
const requestPages = (requestId: number) =>
  app.em().execute<{ from_page_id: number; to_page_id: number | null; type: string; page_version_id: number }[]>(
    'select from_page_id, to_page_id, type, page_version_id from request_pages where request_id = ? order by id', [requestId]);

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app, { notes: { guide: {}, secret: { isPrivate: true } } });
  const registered = await registerApp(s.member, 'Careful Agent', 'proposals');
  expect(registered.body.writes).toBe('proposals');
  agentAppId = registered.id;
  agentClientId = registered.body.client_id;
  agentToken = await appToken(s.member, agentAppId);
  agent = new ApiClient(app.baseUrl, agentToken);
});
afterAll(async () => app?.close());

describe('an app with writes: proposals', () => {
  it('is listed with its way of writing; an app registered without it writes directly', async () => {
    const listed = await s.member.client.get('/api/v1/me/apps');
    expect(listed.body.map((each: { name: string; writes: string }) => [each.name, each.writes])).toContainEqual(['Careful Agent', 'proposals']);
    const plain = await registerApp(s.member, 'Plain App');
    expect(plain.body.writes).toBe('direct');
    const bad = await s.member.client.post('/api/v1/me/apps', { json: { app: { name: 'Odd', redirect_uris: ['http://127.0.0.1:9/cb'], writes: 'sometimes' } } });
    expect(bad.status).toBe(400);
  });

  it('says so on the consent page a user sees before authorizing it', async () => {
    const password = await givePassword(app, s.reader.user, 'reader password here');
    const browser = new CookieBrowser(app.baseUrl);
    const form = await browser.get('/oauth/sign-in');
    await browser.post('/oauth/sign-in', { ...hiddenFields(form.text), login: s.reader.user.username, password });
    const parameters = { response_type: 'code', client_id: agentClientId, redirect_uri: 'http://127.0.0.1:9/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', scope: 'write' };
    const consent = await browser.get(authorizePath(parameters));
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain('propose changes to pages');
    expect(consent.text).not.toContain('create and change notes');
  });

  it('writes a page change into its fork and opens one request with the diff; the original is unchanged', async () => {
    const page = await makePage(app, s.notes.guide, s.manager, { title: 'Setup', content: '<p>Install it.</p>' });
    const path = `/api/v1/${s.team.name}/${s.notes.guide.slug}/${page.id}`;
    const answer = await agent.put(path, { json: { page: { content: '<p>Install it with care.</p>', base_version: page.version } } });
    expect(answer.status, answer.text).toBe(200);
    const { proposal } = answer.body;
    expect(proposal).toMatchObject({ note_id: s.notes.guide.id, page_id: page.id, request_index: expect.any(Number) });
    expect(answer.body.note.id).toBe(proposal.fork_id);
    expect(answer.body.id).not.toBe(page.id);
    expect(answer.body.content).toBe('<p>Install it with care.</p>');
    expect(proposal.request_html_url).toContain(`/${s.team.name}/${s.notes.guide.slug}/requests/${proposal.request_index}`);

    // the original page did not change
    const original = await s.member.client.get(path);
    expect([original.body.content, original.body.version]).toEqual(['<p>Install it.</p>', page.version]);
    // the fork is the member's, in their own team, remembered for the app
    const [row] = await forkRows(s.notes.guide.id);
    expect(row!.fork_id).toBe(proposal.fork_id);
    const [fork] = await app.em().execute<{ forked_from_id: number; team: string }[]>(
      'select n.forked_from_id, t.name as team from notes n join teams t on t.id = n.team_id where n.id = ?', [proposal.fork_id]);
    expect(fork).toEqual({ forked_from_id: s.notes.guide.id, team: s.member.user.username });
    // the request on the original, with the page's diff
    const request = await s.manager.client.get(`/api/v1/${s.team.name}/${s.notes.guide.slug}/requests/${proposal.request_index}`);
    expect(request.status).toBe(200);
    expect(request.body.status).toBe('opened');
    expect(request.body.pages).toHaveLength(1);
    expect(request.body.pages[0].diff).toContain('with care');
  });

  it('keeps the one open request up to date: a second change of the page moves its entry, a new page is added', async () => {
    const page = await makePage(app, s.notes.guide, s.manager, { title: 'Backups', content: '<p>Nightly.</p>' });
    const path = `/api/v1/${s.team.name}/${s.notes.guide.slug}/${page.id}`;
    const first = await agent.put(path, { json: { page: { content: '<p>Nightly, kept a week.</p>', base_version: page.version } } });
    const second = await agent.put(path, { json: { page: { content: '<p>Nightly, kept a month.</p>', base_version: page.version } } });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.proposal.request_index).toBe(first.body.proposal.request_index);
    expect(second.body.proposal.fork_id).toBe(first.body.proposal.fork_id);
    const created = await agent.post(`/api/v1/${s.team.name}/${s.notes.guide.slug}/pages`, { json: { page: { title: 'Restore drill', content: '<p>Monthly.</p>', parent: page.id } } });
    expect(created.status, created.text).toBe(200);
    expect(created.body.proposal).toMatchObject({ page_id: null, request_index: first.body.proposal.request_index });
    // the new page sits under the fork's copy of its parent
    expect(created.body.note.id).toBe(first.body.proposal.fork_id);
    const [{ parent_id: parentId }] = await app.em().execute<{ parent_id: number }[]>('select parent_id from pages where id = ?', [created.body.id]) as [{ parent_id: number }];
    expect(parentId).toBe(second.body.id);

    const [row] = await forkRows(s.notes.guide.id);
    const entries = await requestPages(row!.request_id!);
    const forBackups = entries.filter((entry) => entry.from_page_id === second.body.id);
    expect(forBackups).toHaveLength(1);
    const [{ id: latest }] = await app.em().execute<{ id: number }[]>('select max(id) as id from page_versions where page_id = ?', [second.body.id]) as [{ id: number }];
    expect(forBackups[0]!.page_version_id).toBe(latest);
    expect(entries.find((entry) => entry.from_page_id === created.body.id)).toMatchObject({ type: 'create', to_page_id: null });
    const request = await s.manager.client.get(`/api/v1/${s.team.name}/${s.notes.guide.slug}/requests/${first.body.proposal.request_index}`);
    expect(request.body.pages.map((entry: { diff: string }) => entry.diff).join('')).toContain('kept a month');
    // still the original holds none of it
    expect((await s.member.client.get(path)).body.content).toBe('<p>Nightly.</p>');
  });

  it('opens a new request once the one it kept was merged, and people see their merge in the note', async () => {
    const note = await makeNote(app, s.team, s.manager.user, { slug: 'merged-proposals' });
    const page = await makePage(app, note, s.manager, { title: 'Rota', content: '<p>Alice.</p>' });
    const path = `/api/v1/${s.team.name}/merged-proposals/${page.id}`;
    const first = await agent.put(path, { json: { page: { content: '<p>Alice, Bob.</p>', base_version: 1 } } });
    const index = first.body.proposal.request_index;
    const merged = await s.manager.client.put(`/api/v1/${s.team.name}/merged-proposals/requests/${index}/merge`, { json: {} });
    expect(merged.status, merged.text).toBe(200);
    expect((await s.member.client.get(path)).body.content).toBe('<p>Alice, Bob.</p>');
    const next = await agent.put(path, { json: { page: { content: '<p>Alice, Bob, Carol.</p>', base_version: 2 } } });
    expect(next.status, next.text).toBe(200);
    expect(next.body.proposal.request_index).not.toBe(index);
    expect(next.body.proposal.fork_id).toBe(first.body.proposal.fork_id);
  });

  it('refuses its other writes with 403 proposals_only, changing nothing, and takes comments and issues', async () => {
    const page = await makePage(app, s.notes.guide, s.manager, { title: 'Keep me' });
    const base = `/api/v1/${s.team.name}/${s.notes.guide.slug}`;
    const refused = [
      await agent.delete(`${base}/${page.id}`),
      await agent.post(`/api/v1/teams/${s.member.user.username}/webhooks`, { json: { webhook: { url: 'https://hooks.example.com/x', events: ['page'] } } }),
      await agent.post(`${base}/${page.id}/histories/1/restore`),
      await agent.post('/api/v1/teams', { json: { team: { name: 'agent-team' } } }),
    ];
    for (const answer of refused) expect([answer.status, answer.body.code], answer.text).toEqual([403, 'proposals_only']);
    expect((await s.member.client.get(`${base}/${page.id}`)).status).toBe(200);
    expect(await app.em().execute('select 1 from webhooks w join teams t on t.id = w.team_id where t.name = ?', [s.member.user.username])).toHaveLength(0);
    const comment = await agent.post(`${base}/${page.id}/comments`, { json: { comment: { comment: 'Looks outdated.' } } });
    expect(comment.status, comment.text).toBe(200);
    const issue = await agent.post(`${base}/issues`, { json: { issue: { title: 'Outdated page', description: 'see Keep me' } } });
    expect(issue.status, issue.text).toBe(200);
  });

  it('gets 404 for another team\'s private note and 403 where its user may not edit, like the user', async () => {
    const outsiderToken = await appToken(s.outsider, agentAppId);
    const outsiderAgent = new ApiClient(app.baseUrl, outsiderToken);
    const secretPage = await makePage(app, s.notes.secret, s.manager, { title: 'Hidden' });
    const hidden = await outsiderAgent.put(`/api/v1/${s.team.name}/${s.notes.secret.slug}/${secretPage.id}`, { json: { page: { content: '<p>x</p>' } } });
    expect(hidden.status).toBe(404);
    const guidePage = await makePage(app, s.notes.guide, s.manager, { title: 'Readable' });
    const readOnly = await outsiderAgent.put(`/api/v1/${s.team.name}/${s.notes.guide.slug}/${guidePage.id}`, { json: { page: { content: '<p>x</p>' } } });
    expect(readOnly.status).toBe(403);
    const rows = await app.em().execute('select 1 from proposal_forks where user_id = ?', [s.outsider.user.id]);
    expect(rows).toHaveLength(0);
    // a base version the page does not have
    const bad = await agent.put(`/api/v1/${s.team.name}/${s.notes.guide.slug}/${guidePage.id}`, { json: { page: { content: '<p>x</p>', base_version: 99 } } });
    expect([bad.status, bad.body.code]).toEqual([422, 'invalid_base_version']);
  });

  it('through MCP: update_page says the change was proposed, with the request to review', async () => {
    const page = await makePage(app, s.notes.guide, s.manager, { title: 'Via MCP', content: '<p>One.</p>' });
    const client = new Client({ name: 'proposals-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${agentToken}` } } }));
    try {
      const result = await client.callTool({ name: 'update_page', arguments: { team: s.team.name, note: s.notes.guide.slug, page: page.id, base_version: 1, content: '<p>One, two.</p>' } }) as CallToolResult;
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      const text = (result.content[0] as { text: string }).text;
      expect(text).toMatch(/^Proposed, not applied/);
      expect(text).toMatch(/request #\d+ on the original: http/);
      expect((result.structuredContent as { proposal: { page_id: number } }).proposal.page_id).toBe(page.id);
      expect((await s.member.client.get(`/api/v1/${s.team.name}/${s.notes.guide.slug}/${page.id}`)).body.content).toBe('<p>One.</p>');
    } finally {
      await client.close();
    }
  });

  it.runIf(databaseKind === 'postgres')('makes one fork and one request for parallel writes of one agent', async () => {
    const note = await makeNote(app, s.team, s.manager.user, { slug: 'raced-proposals' });
    const pages = await Promise.all(Array.from({ length: 6 }, (_, i) => makePage(app, note, s.manager, { title: `Raced ${i}` })));
    const answers = await Promise.all(pages.flatMap((page) => [1, 2].map((round) =>
      agent.put(`/api/v1/${s.team.name}/raced-proposals/${page.id}`, { json: { page: { content: `<p>round ${round} of ${page.id}</p>` } } }))));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const rows = await forkRows(note.id);
    expect(rows).toHaveLength(1);
    expect(new Set(answers.map((answer) => answer.body.proposal.request_index))).toEqual(new Set([answers[0]!.body.proposal.request_index]));
    const [{ count }] = await app.em().execute<{ count: string }[]>('select count(*)::text as count from notes where forked_from_id = ?', [note.id]) as [{ count: string }];
    expect(count).toBe('1');
    const entries = await requestPages(rows[0]!.request_id!);
    expect(new Set(entries.map((entry) => entry.to_page_id))).toEqual(new Set(pages.map((page) => page.id)));
    expect(entries).toHaveLength(6);
  });
});

describe('attribution: what an app makes says "via <app>"', () => {
  it('records the app on versions, comments, issues, requests and log entries, and not for a personal token', async () => {
    const direct = await registerApp(s.member, 'Helpful Bot');
    const bot = new ApiClient(app.baseUrl, await appToken(s.member, direct.id));
    const via = { client_id: direct.body.client_id, name: 'Helpful Bot' };
    const note = await makeNote(app, s.team, s.manager.user, { slug: 'attributed' });
    const base = `/api/v1/${s.team.name}/attributed`;
    const page = await makePage(app, note, s.manager, { title: 'Plan', content: '<p>a</p>' });
    expect((await bot.put(`${base}/${page.id}`, { json: { page: { content: '<p>a b</p>' } } })).status).toBe(200);
    expect((await s.member.client.put(`${base}/${page.id}`, { json: { page: { content: '<p>a b c</p>' } } })).status).toBe(200);
    const versions = (await s.member.client.get(`${base}/${page.id}/histories`)).body as { index: number; via: unknown }[];
    expect(versions.map((version) => [version.index, version.via])).toEqual([[3, null], [2, via], [1, null]]);

    const comment = await bot.post(`${base}/${page.id}/comments`, { json: { comment: { comment: 'From the bot.' } } });
    expect(comment.body.via).toEqual(via);
    const issue = await bot.post(`${base}/issues`, { json: { issue: { title: 'Bot found this' } } });
    expect(issue.body.via).toEqual(via);
    expect((await s.member.client.get(`${base}/issues/${issue.body.index}`)).body.via).toEqual(via);
    const mine = await s.member.client.post(`${base}/issues`, { json: { issue: { title: 'I found this' } } });
    expect(mine.body.via).toBeNull();

    // a request opened by the app (from a fork the app made for its user)
    const fork = await bot.post(`${base}/forks`, { json: {} });
    expect(fork.status, fork.text).toBe(200);
    const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.body.id, page.id]);
    const changed = await bot.put(`/api/v1/${s.member.user.username}/${fork.body.id}/${copy!.id}`, { json: { page: { content: '<p>forked</p>' } } });
    expect(changed.status, changed.text).toBe(200);
    const [{ id: versionId }] = await app.em().execute<{ id: number }[]>('select max(id) as id from page_versions where page_id = ?', [copy!.id]) as [{ id: number }];
    const request = await bot.post(`/api/v1/${s.member.user.username}/${fork.body.id}/requests`, { json: { page_versions: [versionId] } });
    expect(request.status, request.text).toBe(200);
    expect(request.body.via).toEqual(via);

    const log = (await s.member.client.get('/api/v1/logs', { query: { note_id: String(note.id) } })).body as { type: string; action: string; via: unknown; user: { id: number } }[];
    const byBot = log.filter((entry) => entry.via !== null);
    expect(byBot.length).toBeGreaterThanOrEqual(3);
    for (const entry of byBot) expect(entry.via).toEqual(via);
    expect(log.filter((entry) => entry.type === 'issue' && entry.action === 'create').map((entry) => entry.via)).toEqual([null, via]);

    // the history view in the browser says so
    const password = await givePassword(app, s.member.user, 'member password here');
    const browser = new CookieBrowser(app.baseUrl);
    const form = await browser.get('/oauth/sign-in');
    await browser.post('/oauth/sign-in', { ...hiddenFields(form.text), login: s.member.user.username, password });
    const history = await browser.get(`/${s.team.name}/attributed/${page.id}/histories`);
    expect(history.status).toBe(200);
    expect(history.text).toContain('via Helpful Bot');
    expect(history.text.match(/via Helpful Bot/g)).toHaveLength(1);
    // and the views of the issue and the request it made, and of the comment on the page
    for (const made of [issue.body, request.body]) {
      const shown = await browser.get(new URL(made.html_url as string).pathname);
      expect([made.html_url, shown.status]).toEqual([made.html_url, 200]);
      expect(shown.text).toContain('via Helpful Bot');
    }
    expect((await browser.get(`/${s.team.name}/attributed/${page.id}`)).text).toContain('via Helpful Bot');
  });
});
