// POST /oauth/register: RFC 7591 dynamic client registration (registration.ts says what is registered). No token is
// needed, so it is rate limited per client address (OAUTH_REGISTRATIONS_PER_HOUR) in a budget shared by every server
// process, like the sign-in limits; only a registration that passed every check spends it, so a refused request
// writes nothing at all. Errors are RFC 7591 section 3.2.2 JSON, `{error, error_description}` as application/json.
import express from 'express';
import type { OAuthSettings } from '../../config.ts';
import { plainBodies, plainRouter, type Refusal } from '../../http/input-guard.ts';
import { SharedBudget } from '../../http/rate-limit.ts';
import { presentRegistration } from './oauth.presenter.ts';
import { readClientMetadata, registerClient } from './registration.ts';
import { sendRateLimitHeaders } from './sign-in-limits.ts';
import { oauthError } from './token.routes.ts';

export function registrationRoutes(options: { settings: OAuthSettings; bodyLimit: number }): express.Router {
  const { settings, bodyLimit } = options;
  // every registration is counted in the database (no lease): few requests, and each one matters
  const addresses = new SharedBudget(settings.registrationsPerAddress, 3600, { maxLease: 1 });

  async function register(req: express.Request, res: express.Response) {
    if (!req.is('application/json')) return oauthError(res, 400, 'invalid_client_metadata', 'the client metadata must be a JSON object sent as application/json');
    const metadata = readClientMetadata(req.body);
    if ('error' in metadata) return oauthError(res, 400, metadata.error, metadata.description);
    const verdict = await addresses.spend(req.em, `registration:${req.ip ?? 'unknown'}`);
    sendRateLimitHeaders(res, verdict);
    if (verdict.exceeded) {
      return oauthError(res, 429, 'temporarily_unavailable', `too many registrations from this address; try again in ${verdict.resetSeconds} seconds`, { 'Retry-After': String(verdict.resetSeconds) });
    }
    const client = await registerClient(req.em, metadata, settings);
    res.status(201).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(presentRegistration(client));
  }

  // the guard (NUL, lone surrogates), the body limit (LIMIT_REQUEST_BODY_BYTES) and 405 (input-guard.ts); a form is
  // parsed too, only so that its size and field count are held to the limits before it is refused as not JSON
  return plainRouter({ refuse: refuseAsRegistrationError, bodies: plainBodies(bodyLimit, { json: true }) }, [{ path: '/oauth/register', POST: register }]);
}

/**
 * What the guard, the body parsers or the method check refuse, as RFC 7591 says: `invalid_client_metadata`, 400 (413
 * for a body past the limit); a wrong method is `invalid_request` with 405 and Allow; a failure `server_error`, 500.
 */
const refuseAsRegistrationError: Refusal = (error, _req, res) => {
  const status = error.status === 405 || error.status === 413 ? error.status : error.status >= 500 ? 500 : 400;
  const code = status === 500 ? 'server_error' : status === 405 ? 'invalid_request' : 'invalid_client_metadata';
  oauthError(res, status, code, error.message, error.headers);
};
