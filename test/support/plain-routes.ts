// The routes outside /api/v1 (OAuth and its pages, the browser views, the system routes, avatars, /metrics), for
// the tests that go through all of them: the routes the app really serves, listed from its express routers (so a
// route added later cannot be left out), a small world to point requests at, and for each route a request it
// answers normally and the format it refuses in. Used by test/api/fuzz-outside-api.test.ts.
import { buildApp } from '../../src/app.ts';
import { createLogger } from '../../src/http/logger.ts';
import type { TestApp } from './app.ts';
import { makeIssue, makeNote, makePage, makeTeam, makeUser, type Actor } from './factories.ts';
import { givePassword, makeClient } from './oauth.ts';

/**
 * How a route refuses: `html` an HTML page (the OAuth pages), `oauth` RFC 6749 JSON (`/oauth/token`,
 * `/oauth/revoke`, and RFC 7591's errors of `/oauth/register`, which have the same shape), `problem` problem details, `view` an HTML page to a browser (Accept: text/html) and problem
 * details to anyone else (the browser views), `jsonrpc` a JSON-RPC error object (the MCP endpoint).
 */
export type RefusalFormat = 'html' | 'oauth' | 'problem' | 'view' | 'jsonrpc';

export type PlainRequest = {
  path: string;
  query?: Record<string, string>;
  form?: Record<string, string>;
  /** a JSON body, for a route that takes JSON only (`/oauth/register`): sent instead of a form */
  json?: Record<string, unknown>;
  headers?: Record<string, string>;
};

export type PlainWorld = {
  alice: Actor;
  password: string;
  pageId: number;
  firstParty: { clientId: string; secret: string };
  publicClient: { clientId: string };
  metricsToken: string;
  /** alice signed in on the sign-in page: the session cookie the OAuth pages read */
  session: string;
};

export type PlainRouteSpec = {
  format: RefusalFormat;
  /** the body may be JSON too */
  json?: boolean;
  /** HTTP Basic credentials are read */
  basic?: boolean;
  /** a request of each method the route takes, which it answers normally (GET also stands for HEAD) */
  GET?: (world: PlainWorld) => PlainRequest;
  POST?: (world: PlainWorld) => PlainRequest;
};

/** A pre-sign-in CSRF token (sessions.ts: 43 characters of base64url), sent as the cookie and the form field. */
const CSRF = 'c'.repeat(43);
const bearer = (world: PlainWorld) => ({ Authorization: `Bearer ${world.alice.token}` });
const signedIn = (world: PlainWorld) => ({ Cookie: `notes_session=${world.session}` });
const view = (path: (world: PlainWorld) => string, query?: Record<string, string>): PlainRouteSpec => ({
  format: 'view',
  GET: (world) => ({ path: path(world), headers: bearer(world), ...(query ? { query } : {}) }),
});
/** A writing form's view (page-forms.ts): for a member signed in through the browser. */
const formView = (path: (world: PlainWorld) => string, query?: Record<string, string>): PlainRouteSpec => ({
  format: 'view',
  GET: (world) => ({ path: path(world), headers: signedIn(world), ...(query ? { query } : {}) }),
});

/** A form of the views (forms.ts): a signed-in browser's POST, here with a CSRF token that is not the session's (403). */
const form = (path: (world: PlainWorld) => string, fields: Record<string, string> = {}): PlainRouteSpec => ({
  format: 'view',
  GET: undefined,
  POST: (world) => ({ path: path(world), form: { csrf_token: 'not-the-token', ...fields }, headers: signedIn(world) }),
});

/** Every route outside /api/v1, by its express path. */
export const PLAIN_ROUTES: Record<string, PlainRouteSpec> = {
  '/metrics': { format: 'problem', GET: (world) => ({ path: '/metrics', headers: { Authorization: `Bearer ${world.metricsToken}` } }) },
  '/healthz': { format: 'problem', GET: () => ({ path: '/healthz' }) },
  '/readyz': { format: 'problem', GET: () => ({ path: '/readyz' }) },
  '/openapi.json': { format: 'problem', GET: () => ({ path: '/openapi.json' }) },
  '/docs': { format: 'problem', GET: () => ({ path: '/docs' }) },
  '/docs/': { format: 'problem', GET: () => ({ path: '/docs/' }) },
  '/docs/index.html': { format: 'problem', GET: () => ({ path: '/docs/index.html' }) },
  '/docs/redoc.standalone.js': { format: 'problem', GET: () => ({ path: '/docs/redoc.standalone.js?v=1' }) },
  '/avatars/:kind/:file': { format: 'problem', GET: () => ({ path: '/avatars/notes/7.svg' }) },
  '/oauth/style.css': { format: 'html', GET: () => ({ path: '/oauth/style.css' }) },
  '/oauth/authorize': {
    format: 'html',
    // signed in: the consent page, and its form (whose CSRF token is not the session's)
    GET: (world) => ({ path: '/oauth/authorize', query: authorizeQuery(world), headers: signedIn(world) }),
    POST: (world) => ({ path: '/oauth/authorize', form: { ...authorizeQuery(world), decision: 'allow', csrf_token: 'not-the-token' }, headers: signedIn(world) }),
  },
  '/oauth/sign-in': {
    format: 'html',
    GET: (world) => ({ path: '/oauth/sign-in', query: { return_to: '/acme/handbook' }, headers: signedIn(world) }),
    // with the pre-sign-in CSRF token (the cookie and the field agree): past the check, to the attempt counted
    POST: () => ({
      path: '/oauth/sign-in', headers: { Cookie: `notes_csrf=${CSRF}` },
      form: { csrf_token: CSRF, return_to: '/acme/handbook', login: 'alice', password: 'a wrong password' },
    }),
  },
  // signed in, with a CSRF token that is not the session's: refused, so the session stays for the next request
  '/oauth/sign-out': { format: 'html', POST: (world) => ({ path: '/oauth/sign-out', form: { csrf_token: 'not-the-token' }, headers: signedIn(world) }) },
  '/oauth/token': {
    format: 'oauth', json: true, basic: true,
    POST: (world) => ({
      path: '/oauth/token',
      form: { grant_type: 'password', username: 'alice', password: world.password, scope: 'read', client_id: world.firstParty.clientId, client_secret: world.firstParty.secret },
    }),
  },
  '/oauth/revoke': {
    format: 'oauth', json: true, basic: true,
    POST: (world) => ({ path: '/oauth/revoke', form: { token: 'nt_unknown', token_type_hint: 'access_token', client_id: world.firstParty.clientId, client_secret: world.firstParty.secret } }),
  },
  '/oauth/register': {
    format: 'oauth', json: true,
    POST: () => ({
      path: '/oauth/register',
      json: {
        client_name: 'Fuzzed MCP client', redirect_uris: ['http://127.0.0.1:9/callback'], grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'read',
      },
    }),
  },
  '/.well-known/oauth-authorization-server': { format: 'problem', GET: () => ({ path: '/.well-known/oauth-authorization-server' }) },
  '/.well-known/oauth-protected-resource': { format: 'problem', GET: () => ({ path: '/.well-known/oauth-protected-resource' }) },
  '/.well-known/oauth-protected-resource/mcp': { format: 'problem', GET: () => ({ path: '/.well-known/oauth-protected-resource/mcp' }) },
  '/mcp': {
    format: 'jsonrpc',
    POST: (world) => ({ path: '/mcp', form: { jsonrpc: '2.0', method: 'tools/list' }, headers: { ...bearer(world), Accept: 'application/json, text/event-stream' } }),
  },
  '/web/style.css': { format: 'view', GET: () => ({ path: '/web/style.css' }) },
  '/web/editor.js': { format: 'view', GET: () => ({ path: '/web/editor.js' }) },
  '/': view(() => '/'),
  '/activity': view(() => '/activity', { page: '1' }),
  '/notifications': view(() => '/notifications', { page: '1' }),
  '/users/:username': view(() => '/users/alice', { page: '1' }),
  '/teams/:team': view(() => '/teams/acme', { page: '1' }),
  '/teams/:team/notes/new': formView(() => '/teams/acme/notes/new'),
  '/teams/:team/notes': form(() => '/teams/acme/notes', { title: 'A note', slug: 'a-note', is_private: 'true' }),
  '/:team/:note': view(() => '/acme/handbook', { pages: '1' }),
  '/:team/:note/pages/new': formView(() => '/acme/handbook/pages/new', { parent: '1' }),
  '/:team/:note/pages': form(() => '/acme/handbook/pages', { title: 'A page', content: '<p>text</p>', parent: '' }),
  '/:team/:note/issues': view(() => '/acme/handbook/issues', { state: 'closed', page: '1' }),
  '/:team/:note/requests': view(() => '/acme/handbook/requests', { state: 'all', page: '1' }),
  '/:team/:note/issues/:index': view(() => '/acme/handbook/issues/1'),
  '/:team/:note/issues/:index/comments': form(() => '/acme/handbook/issues/1/comments', { comment: 'a comment @alice' }),
  '/:team/:note/requests/:index': view(() => '/acme/handbook/requests/1'),
  '/:team/:note/requests/:index/comments': form(() => '/acme/handbook/requests/1/comments', { comment: 'a comment @alice' }),
  '/:team/:note/requests/:index/merge': form(() => '/acme/handbook/requests/1/merge', { seen: 'x', 'r[1][0]': 'theirs' }),
  '/:team/:note/requests/:index/close': form(() => '/acme/handbook/requests/1/close', { seen: 'x' }),
  '/:team/:note/requests/:index/open': form(() => '/acme/handbook/requests/1/open', { seen: 'x' }),
  '/:team/:note/:page': view((world) => `/acme/handbook/${world.pageId}`),
  '/:team/:note/:page/comments': form((world) => `/acme/handbook/${world.pageId}/comments`, { comment: 'a comment' }),
  '/:team/:note/:page/edit': {
    ...formView((world) => `/acme/handbook/${world.pageId}/edit`),
    POST: form((world) => `/acme/handbook/${world.pageId}/edit`, { base_version: '1', title: 'Edited', content: '<p>edited</p>' }).POST,
  },
  '/:team/:note/:page/move': form((world) => `/acme/handbook/${world.pageId}/move`, { parent: '' }),
  '/:team/:note/:page/delete': form((world) => `/acme/handbook/${world.pageId}/delete`, { confirm: 'yes' }),
  '/:team/:note/:page/histories/:index/restore': form((world) => `/acme/handbook/${world.pageId}/histories/1/restore`),
  '/:team/:note/:page/histories': view((world) => `/acme/handbook/${world.pageId}/histories`, { page: '1' }),
  '/:team/:note/:page/histories/diff': view((world) => `/acme/handbook/${world.pageId}/histories/diff`, { a: '1', b: '2' }),
  '/:team/:note/:page/histories/:index': view((world) => `/acme/handbook/${world.pageId}/histories/1`),
};

function authorizeQuery(world: PlainWorld): Record<string, string> {
  return { response_type: 'code', client_id: world.publicClient.clientId, scope: 'read', state: 'xyz', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
}

export type ServedRoute = { path: string; methods: string[] };

type Listed = { path: string | RegExp; methods?: string[]; router?: { listRoutes(): Listed[] } };

/**
 * The routes an app built like `app` serves outside the API router (which routes by the document, not by express
 * routes), with the methods each takes (HEAD, which follows GET, left out).
 */
export function servedRoutesOutsideApi(app: TestApp): ServedRoute[] {
  const built = buildApp({ config: app.config, orm: app.database.orm, logger: createLogger('silent', {}) }) as unknown as { router: { listRoutes(): Listed[] } };
  const found: ServedRoute[] = [];
  const walk = (routes: Listed[]) => {
    for (const route of routes) {
      if (route.router) walk(route.router.listRoutes());
      else if (route.methods) found.push({ path: String(route.path), methods: route.methods.filter((method) => method !== '*' && method !== 'HEAD') });
    }
  };
  walk(built.router.listRoutes());
  return found;
}

/**
 * alice (a password, a write token, signed in on the sign-in page) manages the team acme, whose note handbook has a
 * page with two versions and an issue; a first-party confidential app and a public one.
 */
export async function seedPlainWorld(app: TestApp): Promise<PlainWorld> {
  const alice = await makeUser(app, 'alice');
  const password = await givePassword(app, alice.user, 'correct horse battery');
  await makeTeam(app, 'acme', [{ user: alice.user, role: 'manager' }]);
  const note = await makeNote(app, 'acme', alice.user, { slug: 'handbook', title: 'Handbook' });
  const page = await makePage(app, note, alice, { title: 'Welcome' });
  const changed = await alice.client.put(`/api/v1/acme/handbook/${page.id}`, { json: { page: { content: '<p>Changed</p>' } } });
  if (changed.status !== 200) throw new Error(`updatePage answered ${changed.status}: ${changed.text}`);
  await makeIssue(app, note, alice, { title: 'First issue' });
  const firstParty = await makeClient(app, { name: 'First party', confidential: true, firstParty: true, redirectUris: ['notesapp://callback'] });
  const publicClient = await makeClient(app, { name: 'Public', confidential: false, redirectUris: ['http://127.0.0.1:9/callback'] });
  if (!app.config.metricsToken) throw new Error('start the app with METRICS_TOKEN: /metrics is a route outside the API then');
  const signIn = await fetch(`${app.baseUrl}/oauth/sign-in`, {
    method: 'POST', redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `notes_csrf=${CSRF}` },
    body: new URLSearchParams({ csrf_token: CSRF, login: 'alice', password }).toString(),
  });
  const session = /^notes_session=([^;]+)/.exec(signIn.headers.getSetCookie().find((cookie) => cookie.startsWith('notes_session=')) ?? '')?.[1];
  if (!session) throw new Error(`signing in answered ${signIn.status} without a session cookie`);
  return {
    alice, password, pageId: page.id, firstParty: { clientId: firstParty.clientId, secret: firstParty.secret! }, publicClient,
    metricsToken: app.config.metricsToken, session,
  };
}
