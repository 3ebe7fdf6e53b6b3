// The MCP server (/mcp), driven by the SDK's own client over Streamable HTTP with personal tokens: the 401 and the
// protected resource metadata it points at, the tool list per scope, the tools' happy paths with stored state
// checked, permission (another team's private note is "not found"), update_page's merge and conflict, and bad
// arguments (a tool error, never a protocol error or a 500).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageVersion } from '../../src/modules/pages/page.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makePage, type Actor } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario<'open' | 'secret'>;
let stranger: Scenario<'hidden'>;
const clients: Client[] = [];

async function connect(actor: Actor): Promise<Client> {
  const client = new Client({ name: 'notes-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${actor.token}` } } }));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }) as CallToolResult;
}

const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app, { notes: { open: {}, secret: { isPrivate: true } } });
  stranger = await makeScenario(app, { notes: { hidden: { isPrivate: true } } });
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await app.close();
});

describe('MCP: authorization', () => {
  it('without a token: 401 pointing at the protected resource metadata, which names the resource and this server', async () => {
    const answer = await fetch(`${app.baseUrl}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }) });
    expect(answer.status).toBe(401);
    const challenge = answer.headers.get('www-authenticate')!;
    const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(url).toBe(`${app.config.publicUrl.replace(/\/+$/, '')}/.well-known/oauth-protected-resource/mcp`);
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = await (await fetch(`${app.baseUrl}${path}`)).json() as Record<string, unknown>;
      expect(metadata.resource).toBe(`${app.config.publicUrl.replace(/\/+$/, '')}/mcp`);
      expect(metadata.authorization_servers).toEqual([app.config.publicUrl.replace(/\/+$/, '')]);
      expect(metadata.scopes_supported).toEqual(['read', 'write']);
    }
  });

  it('a token that is not valid: 401 with error="invalid_token"; GET and DELETE: 405 with Allow: POST', async () => {
    const answer = await fetch(`${app.baseUrl}/mcp`, { method: 'POST', headers: { Authorization: 'Bearer nt_nothing', 'Content-Type': 'application/json' }, body: '{}' });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
    for (const method of ['GET', 'DELETE']) {
      const refused = await fetch(`${app.baseUrl}/mcp`, { method, headers: { Authorization: `Bearer ${s.member.token}` } });
      expect(refused.status).toBe(405);
      expect(refused.headers.get('allow')).toBe('POST');
    }
  });

  it('a client that takes JSON alone (or sends no Accept) is answered in JSON; one that takes no JSON gets 406', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const send = (accept: string | undefined) => fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.member.token}`, 'Content-Type': 'application/json', ...(accept === undefined ? {} : { Accept: accept }) },
      body: list,
    });
    for (const accept of ['application/json', '*/*', undefined, 'application/json, text/event-stream']) {
      const answer = await send(accept);
      expect(answer.status, String(accept)).toBe(200);
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(((await answer.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    }
    expect((await send('text/html')).status).toBe(406);
  });

  it('a read token lists only the tools that read, and a write tool called anyway is refused as a tool error', async () => {
    const reader = await connect(s.reader);
    const names = (await reader.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(['search', 'list_notes', 'get_note', 'get_page', 'list_page_versions', 'compare_versions', 'list_issues', 'get_request', 'list_request_comments']);
    const writer = await connect(s.member);
    const all = (await writer.listTools()).tools;
    expect(all.map((tool) => tool.name)).toEqual([...names, 'create_page', 'update_page', 'create_issue', 'add_comment', 'comment_on_request', 'fork_note', 'propose_changes', 'merge_request']);
    // the schemas come from the document: update_page requires base_version, described as the operation describes it
    const update = all.find((tool) => tool.name === 'update_page')!;
    expect(update.inputSchema.required).toEqual(['team', 'note', 'page', 'base_version']);
    const refused = await call(reader, 'create_issue', { team: s.team.name, note: s.notes.open.slug, title: 'no' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/may only read/);
  });
});

describe('MCP: tools', () => {
  it('list_notes, get_note with its page tree, get_page with its version, search', async () => {
    const page = await makePage(app, s.notes.open, s.manager, { title: 'Deploy', content: '<p>rollback steps 手順</p>' });
    await makePage(app, s.notes.open, s.manager, { title: 'Child', parent: page.id });
    const client = await connect(s.member);
    const notes = await call(client, 'list_notes', { team: s.team.name });
    expect(notes.isError).toBeFalsy();
    expect((notes.structuredContent as { items: { slug: string }[] }).items.map((note) => note.slug)).toContain(s.notes.open.slug);
    const note = await call(client, 'get_note', { team: s.team.name, note: s.notes.open.slug });
    const tree = (note.structuredContent as { pages: { id: number; title: string; children?: unknown[] }[] }).pages;
    expect(JSON.stringify(tree)).toContain('"Child"');
    const read = await call(client, 'get_page', { team: s.team.name, note: s.notes.open.slug, page: page.id });
    expect(read.structuredContent).toMatchObject({ id: page.id, content: '<p>rollback steps 手順</p>', version: page.version });
    await app.settle();
    const found = await call(client, 'search', { q: '手順' });
    expect(JSON.stringify(found.structuredContent)).toContain(`"page_id":${page.id}`);
  });

  it('update_page with the version read writes a version; from an older base it merges; overlapping: a conflict with its regions, nothing written', async () => {
    const page = await makePage(app, s.notes.open, s.manager, { title: 'Merge', content: '<p>one</p>\n<p>two</p>\n<p>three</p>' });
    const client = await connect(s.member);
    const where = { team: s.team.name, note: s.notes.open.slug, page: page.id };
    const first = await call(client, 'update_page', { ...where, base_version: page.version, content: '<p>ONE</p>\n<p>two</p>\n<p>three</p>' });
    expect(first.isError).toBeFalsy();
    const afterFirst = (first.structuredContent as { version: number }).version;
    expect(afterFirst).toBe(page.version + 1);
    // from the first version, a change elsewhere: merged with the one made since
    const merged = await call(client, 'update_page', { ...where, base_version: page.version, content: '<p>one</p>\n<p>two</p>\n<p>THREE</p>' });
    expect(merged.isError).toBeFalsy();
    expect((merged.structuredContent as { content: string }).content).toBe('<p>ONE</p>\n<p>two</p>\n<p>THREE</p>');
    // from the first version again, the same line as the first change: a conflict, reported as data
    const conflict = await call(client, 'update_page', { ...where, base_version: page.version, content: '<p>uno</p>\n<p>two</p>\n<p>three</p>' });
    expect(conflict.isError).toBe(true);
    expect(textOf(conflict)).toMatch(/^conflict/);
    expect((conflict.structuredContent as { conflicts: unknown[] }).conflicts.length).toBeGreaterThan(0);
    const versions = await app.em().count(PageVersion, { page: page.id });
    expect(versions).toBe(3);
    // the versions as the tools show them
    const history = await call(client, 'list_page_versions', { ...where, per_page: 2 });
    expect((history.structuredContent as { items: unknown[] }).items).toHaveLength(2);
    const diff = await call(client, 'compare_versions', where);
    expect(diff.isError).toBeFalsy();
  });

  it('create_page, create_issue and add_comment write as the token\'s user', async () => {
    const client = await connect(s.member);
    const created = await call(client, 'create_page', { team: s.team.name, note: s.notes.open.slug, title: 'From an agent', content: '<p>hello</p>' });
    expect(created.isError).toBeFalsy();
    const page = created.structuredContent as { id: number; title: string };
    expect(await app.em().count(PageVersion, { page: page.id })).toBe(1);
    const issue = await call(client, 'create_issue', { team: s.team.name, note: s.notes.open.slug, title: 'Agent issue' });
    expect(issue.structuredContent).toMatchObject({ title: 'Agent issue', from_user: { username: s.member.user.username } });
    const comment = await call(client, 'add_comment', { team: s.team.name, note: s.notes.open.slug, page: page.id, comment: 'looks good' });
    expect(comment.isError).toBeFalsy();
  });

  it('list_issues, fork_note, propose_changes, get_request and merge_request: the review path, managers only merge', async () => {
    const page = await makePage(app, s.notes.open, s.manager, { title: 'Reviewed', content: '<p>before</p>' });
    const client = await connect(s.member);
    const note = { team: s.team.name, note: s.notes.open.slug };
    await call(client, 'create_issue', { ...note, title: 'Listed issue' });
    const issues = await call(client, 'list_issues', { ...note, state: 'open' });
    expect((issues.structuredContent as { items: { title: string }[] }).items.map((issue) => issue.title)).toContain('Listed issue');

    const forked = await call(client, 'fork_note', { ...note, into_team: s.member.user.username, title: 'Agent fork' });
    expect(forked.isError, textOf(forked)).toBeFalsy();
    const fork = forked.structuredContent as { id: number; title: string };
    expect(fork.title).toBe('Agent fork');
    const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, page.id]);
    const inFork = { team: s.member.user.username, note: String(fork.id), page: copy!.id };
    const edited = await call(client, 'update_page', { ...inFork, base_version: 0, content: '<p>after</p>' });
    expect(edited.isError, textOf(edited)).toBeFalsy();
    const [{ id: versionId }] = await app.em().execute<{ id: number }[]>('select max(id) as id from page_versions where page_id = ?', [copy!.id]) as [{ id: number }];
    const proposed = await call(client, 'propose_changes', { team: s.member.user.username, note: String(fork.id), page_versions: [versionId], description: 'from the agent' });
    expect(proposed.isError, textOf(proposed)).toBeFalsy();
    const index = (proposed.structuredContent as { index: number }).index;

    const shown = await call(client, 'get_request', { ...note, index });
    expect(shown.structuredContent).toMatchObject({ index, pages: [{ type: 'update' }] });
    // the reviewer's comment and the agent's answer, through the tools
    await s.manager.client.post(`/api/v1/${s.team.name}/${s.notes.open.slug}/requests/${index}/comments`, { json: { comment: { comment: 'Please say why' } } });
    const answered = await call(client, 'comment_on_request', { ...note, index, comment: 'Because the old step was wrong' });
    expect(answered.isError, textOf(answered)).toBeFalsy();
    expect(answered.structuredContent).toMatchObject({ type: 'request', request: { index }, user: { username: s.member.user.username } });
    const thread = await call(client, 'list_request_comments', { ...note, index });
    expect((thread.structuredContent as { items: { comment: string }[] }).items.map((comment) => comment.comment)).toEqual(['Please say why', 'Because the old step was wrong']);
    // a member may not merge: a tool error, nothing merged
    const refused = await call(client, 'merge_request', { ...note, index });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^not permitted/);
    expect((await s.member.client.get(`/api/v1/${s.team.name}/${s.notes.open.slug}/${page.id}`)).body.content).toBe('<p>before</p>');
    const merged = await call(await connect(s.manager), 'merge_request', { ...note, index });
    expect(merged.isError, textOf(merged)).toBeFalsy();
    expect((await s.member.client.get(`/api/v1/${s.team.name}/${s.notes.open.slug}/${page.id}`)).body.content).toBe('<p>after</p>');
  });

  it('a page is a resource notes://<team>/<note>/<page id>: its content as HTML; another team\'s private page is not found', async () => {
    const page = await makePage(app, s.notes.secret, s.manager, { title: 'Context', content: '<p>attach me</p>' });
    const client = await connect(s.reader);
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((template) => template.uriTemplate)).toEqual(['notes://{team}/{note}/{page}']);
    const uri = `notes://${s.team.name}/${s.notes.secret.slug}/${page.id}`;
    const read = await client.readResource({ uri });
    expect(read.contents).toEqual([{ uri, mimeType: 'text/html', text: '<p>attach me</p>', _meta: { title: 'Context', version: page.version } }]);
    const hidden = await makePage(app, stranger.notes.hidden, stranger.manager, { title: 'Hidden' });
    await expect(client.readResource({ uri: `notes://${stranger.team.name}/${stranger.notes.hidden.slug}/${hidden.id}` })).rejects.toThrow(/not found/);
    await expect(client.readResource({ uri: 'notes://only/two' })).rejects.toThrow(/not a page resource/);
  });

  it('another team\'s private note is "not found"; bad arguments are tool errors', async () => {
    const client = await connect(s.member);
    const hidden = await call(client, 'get_note', { team: stranger.team.name, note: stranger.notes.hidden.slug });
    expect(hidden.isError).toBe(true);
    expect(textOf(hidden)).toMatch(/^not found/);
    for (const args of [{ team: s.team.name }, { team: s.team.name, note: s.notes.open.slug, page: 'x'.repeat(100_000) }, { team: 1, note: {}, page: [] }, { team: s.team.name, note: s.notes.open.slug, page: 1, extra: true }]) {
      const bad = await call(client, 'get_page', args);
      expect(bad.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      expect(textOf(bad)).toMatch(/^invalid arguments/);
    }
    const nul = await call(client, 'create_page', { team: s.team.name, note: s.notes.open.slug, title: 'a\u0000b', content: '<p>x</p>' });
    expect(nul.isError).toBe(true);
    expect(textOf(nul)).toMatch(/refused \(400\)/);
    const unknown = await call(client, 'drop_everything', {});
    expect(unknown.isError).toBe(true);
  });
});
