// The storage model @node-oauth/oauth2-server runs the protocol against. One model per request: it holds the
// request's entity manager and what the library does not hand to the model (the PKCE parameters as sent, the
// family of the refresh token being rotated).
//
// Tokens: access tokens are rows of `tokens` (hashed, like personal tokens, expiring after accessTokenSeconds), so
// the API authenticates them as it always did; refresh tokens and codes have tables of their own. All are hashed.
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { OAuthSettings } from '../../config.ts';
import { currentTime } from '../../db/timestamps.ts';
import { checkCredentials } from '../auth/passwords.ts';
import { Token } from '../auth/token.entity.ts';
import { hashToken } from '../auth/tokens.ts';
import type { User } from '../users/user.entity.ts';
import { findClient, secretMatches } from './clients.ts';
import { AuthorizationCode, OAuthGrant, RefreshToken, type OAuthClient } from './oauth.entity.ts';
import { markClientAuthorized, upsertGrant } from './oauth.repository.ts';
import { revokeFamily } from './revocation.ts';
import { grantedScope, scopeList, tokenScopeOf } from './scopes.ts';

const { InvalidRequestError } = OAuth2Server;

/** The client as the library sees it, with our row. */
export type LibraryClient = OAuth2Server.Client & { row: OAuthClient };

export type ModelContext = {
  em: EntityManager;
  settings: OAuthSettings;
  /** 'authorize' looks clients up by id alone; 'token' and 'revoke' authenticate confidential ones. */
  endpoint: 'authorize' | 'token' | 'revoke';
  codeChallenge?: string | undefined;
  codeChallengeMethod?: string | undefined;
};

const newFamily = () => randomBytes(16).toString('hex');
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export function toLibraryClient(row: OAuthClient, settings: OAuthSettings): LibraryClient {
  return {
    id: row.clientId,
    redirectUris: row.redirectUris,
    grants: ['authorization_code', 'refresh_token', ...(row.firstParty ? ['password'] : [])],
    accessTokenLifetime: settings.accessTokenSeconds,
    refreshTokenLifetime: settings.refreshTokenSeconds,
    row,
  };
}

/** Records (or widens) that the user authorized the app: listed, revocable, and it skips the next consent. */
export async function recordGrant(em: EntityManager, userId: number, clientRowId: number, scope: 'read' | 'write'): Promise<void> {
  await upsertGrant(em, userId, clientRowId, scope, currentTime());
}

export async function grantCovers(em: EntityManager, userId: number, clientRowId: number, scope: 'read' | 'write'): Promise<boolean> {
  const grant = await em.findOne(OAuthGrant, { user: userId, client: clientRowId });
  return grant !== null && (grant.scope === 'write' || scope === 'read');
}

export function oauthModel(context: ModelContext) {
  const { em, settings } = context;
  let rotatedFamily: string | undefined;

  return {
    async getClient(clientId: string, clientSecret: string | null | undefined) {
      const row = await findClient(em, clientId);
      if (!row) return false;
      if (context.endpoint !== 'authorize') {
        if (row.confidential && !(clientSecret && secretMatches(row, clientSecret))) return false;
        if (!row.confidential && clientSecret) return false;
      }
      return toLibraryClient(row, settings);
    },

    async validateScope(_user: User, client: LibraryClient, scope?: string[]) {
      const tokenScope = grantedScope(scope, client.row.scope ?? null);
      return tokenScope ? scopeList(tokenScope) : false;
    },

    async generateAccessToken() {
      return `nt_${randomBytes(32).toString('base64url')}`;
    },
    async generateRefreshToken() {
      return `nr_${randomBytes(32).toString('base64url')}`;
    },
    async generateAuthorizationCode() {
      return randomBytes(32).toString('base64url');
    },

    async saveAuthorizationCode(
      code: Pick<OAuth2Server.AuthorizationCode, 'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'>,
      client: LibraryClient,
      user: User,
    ) {
      if (context.codeChallenge !== undefined && context.codeChallengeMethod !== 'S256') {
        throw new InvalidRequestError('Invalid request: `code_challenge_method` must be S256');
      }
      if (!client.row.confidential && !code.codeChallenge) {
        throw new InvalidRequestError('Invalid request: a public client must use PKCE (`code_challenge` with `code_challenge_method=S256`)');
      }
      const scope = tokenScopeOf(code.scope)!;
      em.create(AuthorizationCode, {
        codeHash: sha256(code.authorizationCode),
        client: client.row,
        user,
        redirectUri: code.redirectUri,
        scope,
        codeChallenge: code.codeChallenge ?? null,
        codeChallengeMethod: code.codeChallengeMethod ?? null,
        family: null,
        expiresAt: code.expiresAt,
        usedAt: null,
      });
      await em.flush();
      await recordGrant(em, user.id, client.row.id, scope);
      // a dynamically registered app a user authorized is kept (registration.ts deletes the unused ones)
      if (client.row.registeredDynamically && !client.row.authorizedAt) await markClientAuthorized(em, client.row.id, currentTime());
      return { ...code, client, user };
    },

    async getAuthorizationCode(authorizationCode: string) {
      const row = await em.findOne(AuthorizationCode, { codeHash: sha256(authorizationCode) }, { populate: ['client', 'user'] });
      if (!row) return false;
      if (row.usedAt) {
        // used before: deny, and revoke what the first use got (RFC 6749 section 4.1.2)
        if (row.family) await revokeFamily(em, row.family);
        return false;
      }
      return {
        authorizationCode,
        expiresAt: row.expiresAt,
        redirectUri: row.redirectUri,
        scope: scopeList(row.scope),
        client: toLibraryClient(row.client, settings),
        user: row.user,
        codeChallenge: row.codeChallenge ?? undefined,
        codeChallengeMethod: row.codeChallengeMethod ?? undefined,
      };
    },

    async revokeAuthorizationCode(code: OAuth2Server.AuthorizationCode) {
      // one statement, so two exchanges of the same code at once cannot both succeed
      const changed = await em.nativeUpdate(AuthorizationCode, { codeHash: sha256(code.authorizationCode), usedAt: null }, { usedAt: currentTime() });
      return changed === 1;
    },

    async getRefreshToken(refreshToken: string) {
      const row = await em.findOne(RefreshToken, { tokenHash: sha256(refreshToken) }, { populate: ['client', 'user'] });
      if (!row) return false;
      if (row.usedAt) {
        // a rotated refresh token presented again: someone holds a copy; the whole family goes
        await revokeFamily(em, row.family);
        return false;
      }
      rotatedFamily = row.family;
      return {
        refreshToken,
        refreshTokenExpiresAt: row.expiresAt,
        scope: scopeList(row.scope),
        client: toLibraryClient(row.client, settings),
        user: row.user,
      };
    },

    async revokeToken(token: OAuth2Server.RefreshToken) {
      const changed = await em.nativeUpdate(RefreshToken, { tokenHash: sha256(token.refreshToken), usedAt: null }, { usedAt: currentTime() });
      return changed === 1;
    },

    async getUser(username: string, password: string) {
      return (await checkCredentials(em, username, password)) ?? false;
    },

    async saveToken(token: OAuth2Server.Token, client: LibraryClient, user: User) {
      const scope = tokenScopeOf(token.scope)!;
      const family = rotatedFamily ?? newFamily();
      em.create(Token, {
        user,
        tokenHash: hashToken(token.accessToken),
        prefix: token.accessToken.slice(0, 10),
        scope,
        label: client.row.name.slice(0, 255),
        expiresAt: token.accessTokenExpiresAt ?? null,
        lastUsedAt: null,
        clientId: client.row.id,
        family,
      });
      if (token.refreshToken) {
        em.create(RefreshToken, {
          tokenHash: sha256(token.refreshToken),
          client: client.row,
          user,
          scope,
          family,
          expiresAt: token.refreshTokenExpiresAt ?? new Date(Date.now() + settings.refreshTokenSeconds * 1000),
          usedAt: null,
        });
      }
      await em.flush();
      if (token.authorizationCode) {
        await em.nativeUpdate(AuthorizationCode, { codeHash: sha256(token.authorizationCode) }, { family });
      } else if (!rotatedFamily) {
        await recordGrant(em, user.id, client.row.id, scope);
      }
      return { ...token, scope: scopeList(scope), client, user };
    },

    // the API authenticates tokens itself (src/http/auth.ts); the library's authenticate() is never used
    async getAccessToken() {
      return false;
    },
  };
}
