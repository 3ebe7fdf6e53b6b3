// The MCP server reached the way an MCP client reaches it, with nothing but its URL: the SDK's own client and its
// own OAuth flow (client/auth.js `auth()`, driven by the Streamable HTTP transport): the 401 and its
// resource_metadata, the protected resource metadata (RFC 9728), the authorization server metadata, dynamic client
// registration (RFC 7591), the authorization code with PKCE (the user signing in and consenting on the server's own
// pages, headlessly), the token, then the tools: a write authorization lists and calls the write tools, a read one
// lists the read tools only. The SDK's provider below only keeps what the SDK hands it and plays the browser. The
// SDK asks for the scopes the metadata lists (SEP-835); a read authorization is asked for through auth()'s `scope`.
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationFull, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationCode, OAuthClient, OAuthGrant } from '../../src/modules/oauth/oauth.entity.ts';
import { PageVersion } from '../../src/modules/pages/page.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { CookieBrowser, givePassword } from '../support/oauth.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

const REDIRECT = 'http://127.0.0.1:8765/callback';

let app: TestApp;
let s: Scenario<'open'>;
let password: string;

/** What an MCP client keeps between runs, and the user's browser: it signs in and consents on the server's pages. */
class TestProvider implements OAuthClientProvider {
  information: OAuthClientInformationFull | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** The code the server sent the browser back with, once the user allowed. */
  code: string | undefined;
  authorizationUrl: URL | undefined;

  readonly scope: 'read' | 'read write';
  readonly login: string;

  constructor(scope: 'read' | 'read write', login: string) {
    this.scope = scope;
    this.login = login;
  }

  get redirectUrl(): string {
    return REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: `SDK client (${this.scope})`, redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: this.scope };
  }

  clientInformation() {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationFull): void {
    this.information = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** The browser: sign in where the server sends it, allow, and keep the code from the redirect. */
  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrl = url;
    const browser = new CookieBrowser(app.baseUrl);
    const consent = await browser.signIn(`${url.pathname}${url.search}`, this.login, password);
    expect(consent.status, consent.text).toBe(200);
    expect(consent.text).toContain(this.clientMetadata.client_name);
    const decided = await browser.decide(consent, 'allow');
    expect(decided.status).toBe(303);
    const back = new URL(decided.location!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe(url.searchParams.get('state'));
    this.code = back.searchParams.get('code') ?? undefined;
  }
}

/** What the server stored of the flow: the app's single code (PKCE challenge, redirect URI, scope) and the user's grant. */
async function storedFlow(provider: TestProvider) {
  const em = app.em();
  const client = await em.findOneOrFail(OAuthClient, { clientId: provider.information!.client_id });
  const codes = await em.find(AuthorizationCode, { client }, { populate: ['user'] });
  const grants = await em.find(OAuthGrant, { client }, { populate: ['user'] });
  return { client, codes, grants };
}

/** Connects as a new MCP client would: the first attempt ends in the authorization, the second uses the token. */
async function connectThroughOAuth(provider: TestProvider): Promise<Client> {
  const url = new URL(`${app.baseUrl}/mcp`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: 'notes-oauth-test', version: '1.0.0' });
  await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.code).toBeDefined();
  await first.finishAuth(provider.code!);
  expect(provider.saved?.access_token).toBeDefined();
  const connected = new Client({ name: 'notes-oauth-test', version: '1.0.0' });
  await connected.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return connected;
}

const clients: Client[] = [];

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app, { notes: { open: {} } });
  password = await givePassword(app, s.member.user, 'the member signs in here');
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await app?.close();
});

describe('MCP through OAuth, as an MCP client finds it', () => {
  it('finds the authorization server from the 401 and the metadata, as the SDK reads them', async () => {
    const answer = await fetch(`${app.baseUrl}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    expect(answer.status).toBe(401);
    const challenge = answer.headers.get('www-authenticate')!;
    // the Bearer scheme, and no error: the request carried no token at all (RFC 6750 section 3.1)
    expect(challenge).toBe(`Bearer resource_metadata="${app.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    const resource = await (await fetch(metadataUrl!)).json() as { resource: string; authorization_servers: string[] };
    expect(resource).toMatchObject({ resource: `${app.baseUrl}/mcp`, authorization_servers: [app.baseUrl] });
    const server = await (await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>;
    expect(server).toMatchObject({ registration_endpoint: `${app.baseUrl}/oauth/register`, code_challenge_methods_supported: ['S256'] });
  });

  it('registers, authorizes with PKCE through sign-in and consent, gets a token, and uses the write tools', async () => {
    const provider = new TestProvider('read write', s.member.user.username);
    const client = await connectThroughOAuth(provider);
    clients.push(client);
    // what the SDK did, as the server saw it: a registered public app, authorized by the member, with PKCE
    expect(provider.information).toMatchObject({ token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT] });
    expect(provider.information!.client_secret).toBeUndefined();
    const { client: registered, codes, grants } = await storedFlow(provider);
    expect(registered).toMatchObject({ registeredDynamically: true, confidential: false, name: 'SDK client (read write)', redirectUris: [REDIRECT], owner: null });
    expect(registered.authorizedAt).toBeInstanceOf(Date);
    // PKCE: the code was issued for the S256 challenge of the verifier the SDK kept, and used up by the exchange
    expect(provider.authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256');
    const challenge = createHash('sha256').update(provider.verifier).digest('base64url');
    expect(codes).toHaveLength(1);
    expect(codes[0]).toMatchObject({ codeChallenge: challenge, codeChallengeMethod: 'S256', redirectUri: REDIRECT, scope: 'write' });
    expect(codes[0]!.usedAt).toBeInstanceOf(Date);
    expect(codes[0]!.user.id).toBe(s.member.user.id);
    expect(grants.map((grant) => [grant.user.id, grant.scope])).toEqual([[s.member.user.id, 'write']]);
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', scope: 'read write' });

    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['create_page', 'update_page', 'merge_request', 'get_page']));
    const created = await client.callTool({ name: 'create_page', arguments: { team: s.team.name, note: s.notes.open.slug, title: 'Through OAuth', content: '<p>hi</p>' } }) as CallToolResult;
    expect(created.isError, JSON.stringify(created)).toBeFalsy();
    const page = created.structuredContent as { id: number; user?: unknown };
    const [version] = await app.em().find(PageVersion, { page: page.id }, { populate: ['user'] });
    expect(version!.user.username).toBe(s.member.user.username);
    // the version records the app it came through
    expect(version!.viaClient).toBe(provider.information!.client_id);
    // the member sees the app among their authorizations
    const authorizations = await s.member.client.get('/api/v1/me/authorizations');
    expect(authorizations.body.map((item: { app: { client_id: string } }) => item.app.client_id)).toContain(provider.information!.client_id);
  });

  it('a read authorization lists only the read tools, and a write tool is refused as a tool error', async () => {
    // the SDK asks for what the metadata lists (scopes_supported: read write, SEP-835) unless told a scope: a client
    // that wants to read only passes it to the SDK's auth()
    const provider = new TestProvider('read', s.member.user.username);
    const serverUrl = new URL(`${app.baseUrl}/mcp`);
    expect(await auth(provider, { serverUrl, scope: 'read' })).toBe('REDIRECT');
    expect(await auth(provider, { serverUrl, scope: 'read', authorizationCode: provider.code! })).toBe('AUTHORIZED');
    expect(provider.saved).toMatchObject({ scope: 'read' });
    const { client: registered, codes, grants } = await storedFlow(provider);
    expect(registered.scope).toBe('read');
    expect(codes.map((code) => [code.scope, code.codeChallengeMethod, code.usedAt instanceof Date])).toEqual([['read', 'S256', true]]);
    expect(grants.map((grant) => [grant.user.id, grant.scope])).toEqual([[s.member.user.id, 'read']]);
    const client = new Client({ name: 'notes-oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    clients.push(client);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(['search', 'list_notes', 'get_note', 'get_page', 'list_page_versions', 'compare_versions', 'list_issues', 'get_request', 'list_request_comments']);
    const refused = await client.callTool({ name: 'create_page', arguments: { team: s.team.name, note: s.notes.open.slug, title: 'No', content: '<p>no</p>' } }) as CallToolResult;
    expect(refused.isError).toBe(true);
    const listed = await client.callTool({ name: 'list_notes', arguments: {} }) as CallToolResult;
    expect(listed.isError, JSON.stringify(listed)).toBeFalsy();
  });
});
