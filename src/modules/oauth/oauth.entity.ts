import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import type { TokenScope } from '../auth/token.entity.ts';
import { User } from '../users/user.entity.ts';

/** How an app's tokens write: like their user (`direct`), or as proposals people review (`proposals`). */
export type AppWrites = 'direct' | 'proposals';

// An app that may ask users for tokens. `clientId` is its public identifier; a confidential app also has a secret,
// of which only the SHA-256 is kept. A first-party app (registered by an administrator) skips the consent page and
// may use the password grant; apps registered through the API by a user (`owner`) never are first-party. An app
// registered by anyone through RFC 7591 (`registeredDynamically`: public, no owner) may be held to a narrower
// `scope`, and is deleted if no user authorized it (`authorizedAt`) soon after (registration.ts). An app registered
// with `writes: proposals` never changes a note directly (src/modules/requests/proposals.ts).
export const OAuthClientSchema = defineEntity({
  name: 'OAuthClient',
  tableName: 'oauth_clients',
  properties: {
    id: p.integer().primary(),
    clientId: p.string().length(64),
    secretHash: p.string().length(64).nullable(),
    name: p.string().length(255),
    redirectUris: p.json<string[]>(),
    confidential: p.boolean(),
    firstParty: p.boolean().default(false),
    owner: () => p.manyToOne(User).nullable(),
    registeredDynamically: p.boolean().default(false),
    authorizedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    scope: p.string().length(8).$type<TokenScope>().nullable(),
    /** `proposals`: the app's page writes land in a fork and a request (src/modules/requests/proposals.ts). */
    writes: p.string().length(10).$type<AppWrites>().default('direct'),
    createdAt: createdAt(),
  },
});
export class OAuthClient extends OAuthClientSchema.class {}
OAuthClientSchema.setClass(OAuthClient);

// A code handed to the app's redirect URI: single use, short-lived, bound to the app, the redirect URI and (PKCE)
// the challenge. `family` names the tokens issued for it, so a second use revokes them (RFC 6749 section 4.1.2).
export const AuthorizationCodeSchema = defineEntity({
  name: 'AuthorizationCode',
  tableName: 'oauth_codes',
  properties: {
    id: p.integer().primary(),
    codeHash: p.string().length(64),
    client: () => p.manyToOne(OAuthClient),
    user: () => p.manyToOne(User),
    redirectUri: p.text(),
    scope: p.string().length(8).$type<TokenScope>(),
    codeChallenge: p.string().length(128).nullable(),
    codeChallengeMethod: p.string().length(8).nullable(),
    family: p.string().length(32).nullable(),
    expiresAt: p.datetime().columnType('timestamptz(0)'),
    usedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    createdAt: createdAt(),
  },
});
export class AuthorizationCode extends AuthorizationCodeSchema.class {}
AuthorizationCodeSchema.setClass(AuthorizationCode);

// A refresh token. Using it marks it used (rotation); a used one presented again revokes its whole family.
export const RefreshTokenSchema = defineEntity({
  name: 'RefreshToken',
  tableName: 'oauth_refresh_tokens',
  properties: {
    id: p.integer().primary(),
    tokenHash: p.string().length(64),
    client: () => p.manyToOne(OAuthClient),
    user: () => p.manyToOne(User),
    scope: p.string().length(8).$type<TokenScope>(),
    family: p.string().length(32),
    expiresAt: p.datetime().columnType('timestamptz(0)'),
    usedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    createdAt: createdAt(),
  },
});
export class RefreshToken extends RefreshTokenSchema.class {}
RefreshTokenSchema.setClass(RefreshToken);

// That a user authorized an app, and with which scope: listed and revoked by the user; a later authorization of
// the same or a narrower scope skips the consent page.
export const OAuthGrantSchema = defineEntity({
  name: 'OAuthGrant',
  tableName: 'oauth_grants',
  properties: {
    id: p.integer().primary(),
    user: () => p.manyToOne(User),
    client: () => p.manyToOne(OAuthClient),
    scope: p.string().length(8).$type<TokenScope>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class OAuthGrant extends OAuthGrantSchema.class {}
OAuthGrantSchema.setClass(OAuthGrant);
