// GET/POST /oauth/authorize and the sign-in page: the authorization-code flow for a browser. The checks that decide
// whether the app and its redirect URI are real happen here, before anything is sent to that URI (an error then is
// a page: no open redirects); everything after is @node-oauth/oauth2-server's `authorize`, whose errors go back to
// the app's redirect URI as RFC 6749 section 4.1.2.1 says.
import express from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { OAuthSettings } from '../../config.ts';
import { plainBodies, plainRouter, type Refusal } from '../../http/input-guard.ts';
import { checkCredentials } from '../auth/passwords.ts';
import type { Sessions, SignedIn } from '../sessions/sessions.ts';
import type { User } from '../users/user.entity.ts';
import { findClient } from './clients.ts';
import { grantCovers, oauthModel } from './model.ts';
import type { OAuthClient } from './oauth.entity.ts';
import { pageText, type LinkProblem } from './page-text.ts';
import { consentPage, errorPage, messagePage, refusalPage, sendPage, signInPage, stylesheet } from './pages.ts';
import { grantedScope, parseScopeParameter } from './scopes.ts';
import { sendRateLimitHeaders, type SignInLimits } from './sign-in-limits.ts';

export const AUTHORIZATION_CODE_SECONDS = 600;
const PARAMETERS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;
type Parameters = Partial<Record<(typeof PARAMETERS)[number], string>>;

/** An authorization request whose app and redirect URI are known to be registered. */
type Known = { client: OAuthClient; redirectUri: string; parameters: Parameters };

function collect(source: Record<string, unknown>): Parameters | LinkProblem {
  const parameters: Parameters = {};
  for (const name of PARAMETERS) {
    const value = source[name];
    if (value === undefined || value === '') continue;
    if (typeof value !== 'string') return { problem: 'repeatedParameter', parameter: name };
    if (value.length > 2000) return { problem: 'longParameter', parameter: name };
    parameters[name] = value;
  }
  return parameters;
}

/** The app and the redirect URI, or what is wrong (shown as a page: the URI to send an error to is not known). */
async function identify(em: EntityManager, source: Record<string, unknown>): Promise<Known | LinkProblem> {
  const parameters = collect(source);
  if ('problem' in parameters) return parameters;
  if (!parameters.client_id) return { problem: 'noApp' };
  const client = await findClient(em, parameters.client_id);
  if (!client) return { problem: 'unknownApp' };
  const registered = client.redirectUris;
  if (parameters.redirect_uri !== undefined && !registered.includes(parameters.redirect_uri)) return { problem: 'unregisteredRedirectUri' };
  if (parameters.redirect_uri === undefined && registered.length !== 1) return { problem: 'noRedirectUri' };
  const redirectUri = parameters.redirect_uri ?? registered[0]!;
  return { client, redirectUri, parameters: { ...parameters, redirect_uri: redirectUri } };
}

function errorRedirect(redirectUri: string, error: string, description: string, state: string | undefined): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state !== undefined) url.searchParams.set('state', state);
  return url.toString();
}

/** What is wrong with the request itself, as an RFC 6749 error to redirect with. */
function requestProblem({ client, parameters }: Known): [string, string] | undefined {
  if (!parameters.response_type) return ['invalid_request', 'Missing parameter: `response_type`'];
  if (parameters.response_type !== 'code') return ['unsupported_response_type', 'only response_type=code is supported'];
  if (!grantedScope(parseScopeParameter(parameters.scope), client.scope ?? null)) {
    return ['invalid_scope', client.scope === 'read' ? 'the app is registered for the scope `read` only' : 'the scopes are `read` and `write`'];
  }
  if (parameters.code_challenge !== undefined && parameters.code_challenge_method !== 'S256') return ['invalid_request', '`code_challenge_method` must be S256'];
  if (!client.confidential && parameters.code_challenge === undefined) return ['invalid_request', 'a public client must use PKCE (`code_challenge` with `code_challenge_method=S256`)'];
  return undefined;
}

const authorizePath = (parameters: Parameters) => `/oauth/authorize?${new URLSearchParams(parameters as Record<string, string>).toString()}`;
/** Where sign-in returns to: the authorization request, or a browser view of this site (a local path, never /api/). */
const safeReturnTo = (value: unknown) =>
  typeof value === 'string' && value.length < 8000 && (value.startsWith('/oauth/authorize?') || /^\/(?![/\\]|api\/|oauth\/)[^\s\\]*$/.test(value)) ? value : undefined;

export function authorizeRoutes(options: { settings: OAuthSettings; sessions: Sessions; limits: SignInLimits; bodyLimit: number }): express.Router {
  const { settings, sessions, limits, bodyLimit } = options;

  /** Issues the code (or, when `allowed` is false, the access_denied answer) through the library, and redirects. */
  async function finish(req: express.Request, res: express.Response, known: Known, user: User, allowed: boolean) {
    const { parameters, redirectUri } = known;
    const model = oauthModel({ em: req.em, settings, endpoint: 'authorize', codeChallenge: parameters.code_challenge, codeChallengeMethod: parameters.code_challenge_method });
    const server = new OAuth2Server({ model: model as never });
    const request = new OAuth2Server.Request({ method: req.method, headers: {}, query: parameters as Record<string, string>, body: allowed ? {} : { allowed: 'false' } });
    const response = new OAuth2Server.Response();
    const status = req.method === 'POST' ? 303 : 302;
    try {
      await server.authorize(request, response, { authenticateHandler: { handle: async () => user }, allowEmptyState: true, authorizationCodeLifetime: AUTHORIZATION_CODE_SECONDS });
      res.set('Cache-Control', 'no-store').redirect(status, response.get('location') as string);
    } catch (error) {
      if (!(error instanceof OAuth2Server.OAuthError)) throw error;
      if (error instanceof OAuth2Server.ServerError) req.log.error({ error: String((error as { inner?: unknown }).inner ?? error) }, 'authorization failed');
      res.set('Cache-Control', 'no-store').redirect(status, errorRedirect(redirectUri, error.name, error.message, parameters.state));
    }
  }

  async function showSignIn(req: express.Request, res: express.Response, status: number, returnTo: string, extra: { login?: string; message?: string } = {}) {
    const returning = returnTo.startsWith('/oauth/authorize?') ? await identify(req.em, Object.fromEntries(new URLSearchParams(returnTo.slice(returnTo.indexOf('?') + 1)))) : undefined;
    const known = returning && 'client' in returning ? returning : undefined;
    // whoever signs in is not known yet: the browser's language
    const text = pageText(req);
    const page = signInPage(text, { csrfToken: sessions.csrfToken(req, res, undefined), returnTo, appName: known?.client.name, ...extra });
    sendPage(res, status, text, text.signIn, page, known?.redirectUri);
  }

  /** The authorization request, from the query (GET) or the consent form (POST). */
  async function authorize(req: express.Request, res: express.Response, source: Record<string, unknown>, decision: 'ask' | 'allow' | 'deny') {
    const known = await identify(req.em, source);
    if ('problem' in known) {
      const text = pageText(req, (await sessions.read(req))?.user);
      return sendPage(res, 400, text, text.cannotAuthorize, errorPage(text, text.linkProblem(known)));
    }
    const problem = requestProblem(known);
    if (problem) return res.set('Cache-Control', 'no-store').redirect(req.method === 'POST' ? 303 : 302, errorRedirect(known.redirectUri, problem[0], problem[1], known.parameters.state));
    const session = await sessions.read(req);
    if (!session) return showSignIn(req, res, 200, authorizePath(known.parameters));
    if (decision !== 'ask') {
      if (!sessions.checkCsrf(req, ((req.body ?? {}) as Record<string, unknown>).csrf_token, session)) {
        const text = pageText(req, session.user);
        return sendPage(res, 403, text, text.cannotAuthorize, errorPage(text, text.formExpired));
      }
      return finish(req, res, known, session.user, decision === 'allow');
    }
    const scope = grantedScope(parseScopeParameter(known.parameters.scope), known.client.scope ?? null)!;
    if (known.client.firstParty || (await grantCovers(req.em, session.user.id, known.client.id, scope))) return finish(req, res, known, session.user, true);
    showConsent(req, res, session, known, scope);
  }

  function showConsent(req: express.Request, res: express.Response, session: SignedIn, known: Known, scope: 'read' | 'write') {
    const text = pageText(req, session.user);
    const page = consentPage(text, { csrfToken: session.csrfToken, appName: known.client.name, username: session.user.username, scope, writes: known.client.writes, parameters: known.parameters as Record<string, string> });
    sendPage(res, 200, text, text.authorizeApp(known.client.name), page, known.redirectUri);
  }

  async function signInForm(req: express.Request, res: express.Response) {
    const session = await sessions.read(req);
    const returnTo = safeReturnTo(req.query.return_to);
    if (session && returnTo) return res.redirect(303, returnTo);
    if (session) {
      const text = pageText(req, session.user);
      return sendPage(res, 200, text, text.signedIn, messagePage(text.signedIn, text.signedInAs(session.user.username)));
    }
    await showSignIn(req, res, 200, returnTo ?? '');
  }

  async function signIn(req: express.Request, res: express.Response) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const returnTo = safeReturnTo(body.return_to) ?? '';
    const login = typeof body.login === 'string' ? body.login.trim() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const text = pageText(req);
    // the sign-in form always carries the pre-sign-in token (showSignIn), also when a session exists already
    if (!sessions.checkCsrf(req, body.csrf_token, undefined)) {
      return showSignIn(req, res, 403, returnTo, { login, message: text.signInExpired });
    }
    const verdict = await limits.attempt(req.em, login, req.ip ?? 'unknown');
    sendRateLimitHeaders(res, verdict);
    if (verdict.exceeded) return showSignIn(req, res, 429, returnTo, { login, message: text.signInTooOften(verdict.resetSeconds) });
    const user = login && password ? await checkCredentials(req.em, login, password) : undefined;
    if (!user) return showSignIn(req, res, 403, returnTo, { login, message: text.signInWrong });
    await sessions.start(req, res, user);
    if (returnTo) return res.redirect(303, returnTo);
    const signedIn = pageText(req, user);
    sendPage(res, 200, signedIn, signedIn.signedIn, messagePage(signedIn.signedIn, signedIn.nowSignedIn));
  }

  async function signOut(req: express.Request, res: express.Response) {
    const session = await sessions.read(req);
    const text = pageText(req, session?.user);
    if (session && !sessions.checkCsrf(req, ((req.body ?? {}) as Record<string, unknown>).csrf_token, session)) {
      return sendPage(res, 403, text, text.signOut, errorPage(text, text.formExpired));
    }
    await sessions.end(req, res);
    sendPage(res, 200, text, text.signedOut, messagePage(text.signedOut));
  }

  const stylesheetFile: express.RequestHandler = (_req, res) => {
    res.set({ 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' }).type('text/css; charset=utf-8').send(stylesheet);
  };

  // the guard, the body limit and 405 (input-guard.ts); what they refuse is a page, like everything these routes answer
  return plainRouter({ refuse: refuseAsPage, bodies: plainBodies(bodyLimit) }, [
    { path: '/oauth/style.css', GET: stylesheetFile },
    {
      path: '/oauth/authorize',
      GET: (req, res) => authorize(req, res, req.query as Record<string, unknown>, 'ask'),
      POST: (req, res) => {
        const body = (req.body ?? {}) as Record<string, unknown>;
        return authorize(req, res, body, body.decision === 'allow' ? 'allow' : 'deny');
      },
    },
    { path: '/oauth/sign-in', GET: signInForm, POST: signIn },
    { path: '/oauth/sign-out', POST: signOut },
  ]);
}

// refused before the route reads a session: the browser's language
const refuseAsPage: Refusal = (error, req, res) => {
  const text = pageText(req);
  const { title, message } = text.refusal(error);
  res.set(error.headers);
  sendPage(res, error.status, text, title, refusalPage(text, title, message));
};
