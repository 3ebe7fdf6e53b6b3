// RFC 7591 dynamic client registration (POST /oauth/register, registration.routes.ts): how MCP clients, which cannot
// be registered by hand on every server they meet, get a client_id. Anyone may register, so what is registered is
// held small: a public app only (no secret to keep: PKCE protects its codes), no owner, redirect URIs by the stricter
// rule (`registeredRedirectUriProblem`), and one that no user authorized within OAUTH_REGISTRATION_UNUSED_HOURS is
// deleted by a later registration. Where RFC 7591 lets the server choose, it registers what it will really do:
// `grant_types` is always both grants the app may use, and an omitted `token_endpoint_auth_method` (RFC 7591's
// default is `client_secret_basic`) becomes `none`; metadata it does not use (`client_uri`, `logo_uri`, `contacts`,
// ...) is ignored, as section 2 says.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OAuthSettings } from '../../config.ts';
import { currentTime } from '../../db/timestamps.ts';
import type { TokenScope } from '../auth/token.entity.ts';
import { createClient, registeredRedirectUriProblem } from './clients.ts';
import type { OAuthClient } from './oauth.entity.ts';
import { deleteUnusedRegistrations } from './oauth.repository.ts';
import { parseScopeParameter, tokenScopeOf } from './scopes.ts';

export const DEFAULT_CLIENT_NAME = 'MCP client';
export const REGISTERED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export const REDIRECT_URIS_MAX = 10;
const NAME_MAX = 255;
const SECRET_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'tls_client_auth', 'self_signed_tls_client_auth'];

export type ClientMetadata = { name: string; redirectUris: string[]; scope: TokenScope | null };
/** RFC 7591 section 3.2.2. */
export type RegistrationError = { error: 'invalid_redirect_uri' | 'invalid_client_metadata'; description: string };

const metadataError = (description: string): RegistrationError => ({ error: 'invalid_client_metadata', description });
const redirectError = (description: string): RegistrationError => ({ error: 'invalid_redirect_uri', description });

/** A list of strings, each one of `allowed`, or what is wrong with it. */
function listProblem(name: string, value: unknown, allowed: readonly string[]): string | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > 10 || !value.every((item) => typeof item === 'string')) return `${name} must be a list of 1 to 10 strings`;
  const unknown = value.find((item) => !allowed.includes(item as string));
  return unknown === undefined ? undefined : `${name}: "${String(unknown).slice(0, 100)}" is not supported here (only ${allowed.join(', ')})`;
}

/** The metadata of a registration request (a parsed JSON body), or the RFC 7591 error it gets. Pure. */
export function readClientMetadata(body: unknown): ClientMetadata | RegistrationError {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return metadataError('the client metadata must be a JSON object');
  const input = body as Record<string, unknown>;

  const uris = input.redirect_uris;
  if (uris === undefined || uris === null) return redirectError('redirect_uris is required: the authorization code flow sends the user back to one of them');
  if (!Array.isArray(uris) || uris.length === 0) return redirectError('redirect_uris must be a list of at least one URI');
  if (uris.length > REDIRECT_URIS_MAX) return redirectError(`redirect_uris may hold at most ${REDIRECT_URIS_MAX} URIs`);
  for (const uri of uris) {
    if (typeof uri !== 'string') return redirectError('every redirect URI must be a string');
    const problem = registeredRedirectUriProblem(uri);
    if (problem) return redirectError(problem.length > 300 ? `${problem.slice(0, 300)}...` : problem);
  }

  const method = input.token_endpoint_auth_method;
  if (method !== undefined && method !== null && method !== 'none') {
    if (typeof method === 'string' && SECRET_METHODS.includes(method)) {
      return metadataError(`token_endpoint_auth_method ${method} is not supported: this server registers public clients only (none, with PKCE)`);
    }
    return metadataError('token_endpoint_auth_method must be none');
  }
  if (input.grant_types !== undefined && input.grant_types !== null) {
    const problem = listProblem('grant_types', input.grant_types, REGISTERED_GRANT_TYPES);
    if (problem) return metadataError(problem);
    if (!(input.grant_types as string[]).includes('authorization_code')) return metadataError('grant_types must include authorization_code (response_types is code)');
  }
  if (input.response_types !== undefined && input.response_types !== null) {
    const problem = listProblem('response_types', input.response_types, ['code']);
    if (problem) return metadataError(problem);
  }

  let name = DEFAULT_CLIENT_NAME;
  if (input.client_name !== undefined && input.client_name !== null) {
    if (typeof input.client_name !== 'string') return metadataError('client_name must be a string');
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(input.client_name)) return metadataError('client_name must be one line of text, without control characters');
    const trimmed = input.client_name.trim();
    if (trimmed.length > NAME_MAX) return metadataError(`client_name has at most ${NAME_MAX} characters`);
    if (trimmed !== '') name = trimmed;
  }

  let scope: TokenScope | null = null;
  if (input.scope !== undefined && input.scope !== null) {
    if (typeof input.scope !== 'string' || input.scope.length > 100) return metadataError('scope must be a string of scopes separated by spaces (read, write)');
    const requested = parseScopeParameter(input.scope);
    if (requested) {
      const tokenScope = tokenScopeOf(requested);
      if (!tokenScope) return metadataError('the scopes are read and write');
      scope = tokenScope;
    }
  }
  return { name, redirectUris: [...new Set(uris as string[])], scope };
}

/**
 * Registers the app, and in the same transaction deletes the registrations no user authorized within
 * `registrationUnusedHours`: so they cannot pile up, without a timer (the partial index of migration 0019 finds them).
 */
export async function registerClient(em: EntityManager, metadata: ClientMetadata, settings: OAuthSettings): Promise<OAuthClient> {
  return em.transactional(async (tx) => {
    await deleteUnusedRegistrations(tx, new Date(currentTime().getTime() - settings.registrationUnusedHours * 3_600_000));
    const { client } = await createClient(tx, { name: metadata.name, redirectUris: metadata.redirectUris, confidential: false, registeredDynamically: true, scope: metadata.scope });
    return client;
  });
}
