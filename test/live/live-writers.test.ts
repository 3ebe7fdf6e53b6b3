// Writes from elsewhere into an open live document: an MCP tool's update_page (merged with its base_version, the
// typing kept), a merged request, and an app that only proposes changes, which connects read-only and whose page
// writes go to its fork, never into the original's document.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { htmlOfYDoc } from '../../src/modules/live/content.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makePage, notePath } from '../support/factories.ts';
import { forkedRunbook } from '../support/forks.ts';
import { connectLive, type LiveClient } from '../support/live.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'open'>;
const clients: LiveClient[] = [];
const agents: Client[] = [];

beforeAll(async () => {
  app = await startTestApp({ LIVE_SAVE_PAUSE_MS: '300', LIVE_SAVE_MAX_MS: '1000' });
  cast = await makeScenario(app, { notes: { open: {} } });
});
afterAll(async () => {
  for (const client of clients) client.close();
  for (const agent of agents) await agent.close();
  await app?.close();
});

function live(name: string, token: string): LiveClient {
  const client = connectLive(app, name, { token });
  clients.push(client);
  return client;
}

async function mcp(token: string): Promise<Client> {
  const client = new Client({ name: 'live-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  agents.push(client);
  return client;
}

const nameOf = (path: string, pageId: number) => `${path.replace(/^\/api\/v1\//, '')}/${pageId}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('writes from elsewhere into a live document', () => {
  it('an MCP update_page is merged into the open document with its base_version, the typing kept', async () => {
    const page = await makePage(app, cast.notes.open, cast.manager, { title: 'Agent target', content: '<p>one</p><p>two</p>' });
    const path = await notePath(app, cast.notes.open);
    const editor = live(nameOf(path, page.id), cast.member.token);
    await editor.ready;
    editor.write('<p>one, typed</p><p>two</p>');
    const agent = await mcp(cast.manager.token);
    const result = await agent.callTool({ name: 'update_page', arguments: { team: cast.team.name, note: cast.notes.open.slug, page: page.id, base_version: 1, content: '<p>one</p><p>two, from the agent</p>' } }) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const html = await editor.until((text) => text.includes('from the agent'), 3_000);
    expect(html).toBe('<p>one, typed</p><p>two, from the agent</p>');
    // the typing is saved over the agent's version: both in the page
    await expect.poll(async () => (await cast.manager.client.get(`${path}/${page.id}`)).body.content, { timeout: 8_000 }).toBe('<p>one, typed</p><p>two, from the agent</p>');
  });

  it('a merged request shows in the open document of the page it changes', async () => {
    const runbook = await forkedRunbook(app, cast);
    const editor = live(nameOf(runbook.upstreamPath, runbook.deploy.id), cast.member.token);
    await editor.ready;
    const version = await runbook.editFork(runbook.forkDeploy, '<h1>Deploy</h1>\n<p>Run make deploy from a tagged release.</p>\n<p>Then check the dashboard.</p>\n');
    const request = await runbook.request([version]);
    const merged = await cast.manager.client.put(`${runbook.upstreamPath}/requests/${request.index}/merge`);
    expect(merged.status, merged.text).toBe(200);
    const html = await editor.until((text) => text.includes('tagged release'), 3_000);
    expect(html).toContain('<h1>Deploy</h1>');
  });

  it('an app that only proposes connects read-only, and its writes go to its fork: the original\'s document never changes', async () => {
    const registered = await cast.member.client.post('/api/v1/me/apps', { json: { app: { name: 'Proposing Agent', redirect_uris: ['http://127.0.0.1:9/cb'], confidential: false, writes: 'proposals' } } });
    expect(registered.status, registered.text).toBe(200);
    const [row] = await app.em().execute<{ id: number }[]>('select id from oauth_clients where client_id = ?', [registered.body.client_id]);
    const { token, secret } = await issueToken(app.em(), cast.member.user, { scope: 'write' });
    await app.em().execute('update tokens set client_id = ? where id = ?', [row!.id, token.id]);

    const page = await makePage(app, cast.notes.open, cast.manager, { title: 'Guarded', content: '<p>as written</p>' });
    const path = await notePath(app, cast.notes.open);
    const name = nameOf(path, page.id);
    const person = live(name, cast.member.token);
    const proposer = live(name, secret);
    await Promise.all([person.ready, proposer.ready]);
    expect(app.live()!.hocuspocus.documents.get(name)!.getConnections().map((connection) => connection.readOnly).sort()).toEqual([false, true]);
    // the app's own update is dropped on the server
    proposer.write('<p>as the app would have it</p>');
    // its MCP write is a proposal: the fork is written, the original's document and page are not
    const agent = await mcp(secret);
    const result = await agent.callTool({ name: 'update_page', arguments: { team: cast.team.name, note: cast.notes.open.slug, page: page.id, base_version: 1, content: '<p>proposed</p>' } }) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    await pause(1_500);
    expect(htmlOfYDoc(app.live()!.hocuspocus.documents.get(name)!)).toBe('<p>as written</p>');
    expect(person.html()).toBe('<p>as written</p>');
    expect((await cast.manager.client.get(`${path}/${page.id}`)).body).toMatchObject({ content: '<p>as written</p>', version: 1 });
    const forks = await app.em().execute<{ fork_id: number }[]>('select fork_id from proposal_forks where client_id = ?', [row!.id]);
    expect(forks).toHaveLength(1);
  });
});
