// Apps, authorizations and tokens as the document describes them (App, Authorization, AccessToken, and the RFC 7591
// ClientRegistration). Pure.
import type { AccessToken, App, Authorization, ClientRegistration, Via } from '../../../generated/client/types.gen.ts';
import type { Token } from '../auth/token.entity.ts';
import type { OAuthClient, OAuthGrant } from './oauth.entity.ts';
import { REGISTERED_GRANT_TYPES } from './registration.ts';
import { scopeList } from './scopes.ts';

/** The app something was made through (`Via`), from its recorded client id and name; null for none. */
export function presentVia(made: { viaClient?: string | null; viaApp?: string | null }): Via {
  return made.viaClient ? { client_id: made.viaClient, name: made.viaApp ?? '' } : null;
}

export function presentApp(client: OAuthClient, secret?: string | null): App {
  return {
    model: 'app',
    client_id: client.clientId,
    name: client.name,
    redirect_uris: client.redirectUris,
    confidential: client.confidential,
    first_party: client.firstParty,
    writes: client.writes,
    ...(secret !== undefined ? { client_secret: secret } : {}),
    created_at: client.createdAt.toISOString(),
  };
}

export function presentAuthorization(grant: OAuthGrant & { client: OAuthClient }): Authorization {
  return {
    model: 'authorization',
    app: presentApp(grant.client),
    scopes: scopeList(grant.scope),
    created_at: grant.createdAt.toISOString(),
    updated_at: grant.updatedAt.toISOString(),
  };
}

export function presentToken(token: Token, apps: ReadonlyMap<number, OAuthClient>, currentTokenId: number): AccessToken {
  const app = token.clientId === null || token.clientId === undefined ? undefined : apps.get(token.clientId);
  return {
    model: 'token',
    id: token.id,
    prefix: token.prefix,
    scopes: scopeList(token.scope),
    label: token.label ?? null,
    app: app ? presentApp(app) : null,
    current: token.id === currentTokenId,
    created_at: token.createdAt.toISOString(),
    last_used_at: token.lastUsedAt ? token.lastUsedAt.toISOString() : null,
    expires_at: token.expiresAt ? token.expiresAt.toISOString() : null,
  };
}

/** RFC 7591 section 3.2.1: what a dynamically registered app was registered with (registration.ts). */
export function presentRegistration(client: OAuthClient): ClientRegistration {
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: [...REGISTERED_GRANT_TYPES],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(client.scope ? { scope: scopeList(client.scope).join(' ') } : {}),
  };
}
