// POST /oauth/token (RFC 6749 through @node-oauth/oauth2-server), POST /oauth/revoke (RFC 7009) and the RFC 8414
// metadata (POST /oauth/register, RFC 7591, is registration.routes.ts). Errors are RFC 6749 JSON, `{error, error_description}` as `application/json`, never problem details:
// the clients' OAuth libraries read nothing else.
//
// Two habits of the old clients are met before the library sees the request: the password grant's user name may
// arrive as `login` (the iOS app), and omniauth-oauth2 sends as `redirect_uri` the callback URL with the
// `?code=...&state=...` it received appended; the code is bound to its registered URI, so what follows that URI's
// query is dropped.
import { createHash } from 'node:crypto';
import express from 'express';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { OAuthSettings } from '../../config.ts';
import { asProblem, plainBodies, plainRouter, type Refusal } from '../../http/input-guard.ts';
import type { Urls } from '../../http/urls.ts';
import { AuthorizationCode } from './oauth.entity.ts';
import { oauthModel, type LibraryClient } from './model.ts';
import { revokePresentedToken, sweepExpired } from './revocation.ts';
import { SCOPES } from './scopes.ts';
import { sendRateLimitHeaders, type SignInLimits } from './sign-in-limits.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export function oauthError(res: express.Response, status: number, error: string, description: string, headers: Record<string, string> = {}) {
  res.status(status).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache', ...headers }).json({ error, error_description: description });
}

/** The form (or JSON) body as single strings; a repeated parameter is an error (RFC 6749 section 3.2). */
function singleValues(body: unknown): Record<string, string> | string {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string') values[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') values[name] = String(value);
    else return `the parameter ${name} was given more than once or is not text`;
  }
  return values;
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = header && /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  if (at === -1) return undefined;
  const unescape = (text: string) => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      return text;
    }
  };
  return { id: unescape(decoded.slice(0, at)), secret: unescape(decoded.slice(at + 1)) };
}

export function tokenRoutes(options: { settings: OAuthSettings; limits: SignInLimits; urls: Urls; bodyLimit: number }): express.Router {
  const { settings, limits, urls, bodyLimit } = options;

  async function token(req: express.Request, res: express.Response) {
    const body = singleValues(req.body);
    if (typeof body === 'string') return oauthError(res, 400, 'invalid_request', body);
    if (body.grant_type === 'password') {
      if (body.username === undefined && body.login !== undefined) body.username = body.login;
      const verdict = await limits.attempt(req.em, body.username ?? '', req.ip ?? 'unknown');
      sendRateLimitHeaders(res, verdict);
      if (verdict.exceeded) {
        return oauthError(res, 429, 'temporarily_unavailable', `too many sign-in attempts; try again in ${verdict.resetSeconds} seconds`, { 'Retry-After': String(verdict.resetSeconds) });
      }
    }
    if (body.grant_type === 'authorization_code' && body.code && body.redirect_uri) {
      const code = await req.em.findOne(AuthorizationCode, { codeHash: sha256(body.code) });
      const registered = code?.redirectUri;
      if (registered && body.redirect_uri !== registered && body.redirect_uri.startsWith(registered + (registered.includes('?') ? '&' : '?'))) {
        body.redirect_uri = registered;
      }
    }
    // JSON bodies are taken too (some mobile clients send them); the library itself reads only forms
    const headers = { ...(req.headers as Record<string, string>) };
    if (req.is('application/json')) headers['content-type'] = 'application/x-www-form-urlencoded';
    const request = new OAuth2Server.Request({ method: req.method, headers, query: {}, body });
    const response = new OAuth2Server.Response();
    const server = new OAuth2Server({ model: oauthModel({ em: req.em, settings, endpoint: 'token' }) as never });
    try {
      await server.token(request, response, {
        accessTokenLifetime: settings.accessTokenSeconds,
        refreshTokenLifetime: settings.refreshTokenSeconds,
        // the model decides: a confidential app must authenticate, a public one (PKCE) sends its client_id alone
        requireClientAuthentication: { authorization_code: false, refresh_token: false, password: false },
        alwaysIssueNewRefreshToken: true,
      });
      res.status(200).set(response.headers as Record<string, string>).json(response.body);
      if (Math.random() < 0.01) await sweepExpired(req.em);
    } catch (error) {
      if (!(error instanceof OAuth2Server.OAuthError)) throw error;
      if (error instanceof OAuth2Server.ServerError) req.log.error({ error: String((error as { inner?: unknown }).inner ?? error) }, 'token request failed');
      const status = error.code === 503 ? 500 : error.code;
      const extra = (response.headers ?? {}) as Record<string, string>;
      oauthError(res, status, error.name, error.message, extra['www-authenticate'] ? { 'WWW-Authenticate': extra['www-authenticate'] } : {});
    }
  }

  async function revoke(req: express.Request, res: express.Response) {
    const body = singleValues(req.body);
    if (typeof body === 'string') return oauthError(res, 400, 'invalid_request', body);
    const basic = basicCredentials(req.get('authorization'));
    const clientId = basic?.id ?? body.client_id;
    if (!clientId) return oauthError(res, 401, 'invalid_client', 'the client must identify itself (HTTP Basic, or client_id in the body)');
    const model = oauthModel({ em: req.em, settings, endpoint: 'revoke' });
    const client = (await model.getClient(clientId, basic?.secret ?? body.client_secret)) as LibraryClient | false;
    if (!client) return oauthError(res, 401, 'invalid_client', 'the client is unknown or its credentials are wrong', basic ? { 'WWW-Authenticate': 'Basic realm="notes"' } : {});
    if (!body.token) return oauthError(res, 400, 'invalid_request', 'Missing parameter: `token`');
    await revokePresentedToken(req.em, client.row.id, sha256(body.token));
    res.status(200).set('Cache-Control', 'no-store').end();
  }

  function metadata(_req: express.Request, res: express.Response) {
    res.set('Cache-Control', 'public, max-age=3600').json({
      issuer: urls.base,
      authorization_endpoint: `${urls.base}/oauth/authorize`,
      token_endpoint: `${urls.base}/oauth/token`,
      revocation_endpoint: `${urls.base}/oauth/revoke`,
      registration_endpoint: `${urls.base}/oauth/register`,
      scopes_supported: SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'password'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      service_documentation: `${urls.base}/docs`,
    });
  }

  // The guard, the body limit (LIMIT_REQUEST_BODY_BYTES, as the API's) and 405 (input-guard.ts). The endpoints take
  // POST only (RFC 6749 section 3.2); the credentials of HTTP Basic are input too, as they are decoded here.
  const inputs = (req: express.Request) => {
    const basic = basicCredentials(req.get('authorization'));
    return basic && { 'Authorization (client id)': basic.id, 'Authorization (client secret)': basic.secret };
  };
  const router = express.Router();
  router.use(plainRouter({ refuse: refuseAsOAuthError, bodies: plainBodies(bodyLimit, { json: true }) }, [
    { path: '/oauth/token', POST: token, inputs },
    { path: '/oauth/revoke', POST: revoke, inputs },
  ]));
  router.use(plainRouter({ refuse: asProblem }, [{ path: '/.well-known/oauth-authorization-server', GET: metadata }]));
  return router;
}

/**
 * What the guard, the body parsers or the method check refuse is an RFC 6749 error too: `invalid_request`, 400
 * (405 with Allow for a method, 413 for a body past the limit); an unexpected failure is `server_error`, 500.
 */
const refuseAsOAuthError: Refusal = (error, _req, res) => {
  const status = error.status === 405 || error.status === 413 ? error.status : error.status >= 500 ? 500 : 400;
  oauthError(res, status, status === 500 ? 'server_error' : 'invalid_request', error.message, error.headers);
};
