// Revoking what OAuth issued. Every access token goes from the database and from this process's token cache at
// once (other processes hear it through the change feed: the tokens table announces deletions).
import type { EntityManager } from '@mikro-orm/postgresql';
import { forgetToken } from '../../http/auth.ts';
import { currentTime } from '../../db/timestamps.ts';
import { Token } from '../auth/token.entity.ts';
import { OAuthClient, OAuthGrant, RefreshToken } from './oauth.entity.ts';
import {
  deleteAppTokensOfUser,
  deleteClientTokens,
  deleteExpiredCodesAndRefreshTokens,
  deleteFamilyTokens,
  deleteTokenById,
  deleteUserToken,
} from './oauth.repository.ts';

/** Forgets the deleted tokens in this process's token cache; how many there were. */
function forgetTokens(ids: readonly number[]): number {
  for (const id of ids) forgetToken(id);
  return ids.length;
}

/** Every access and refresh token of one grant (a code exchange or password grant and the refreshes after it). */
export async function revokeFamily(em: EntityManager, family: string): Promise<void> {
  forgetTokens(await deleteFamilyTokens(em, family));
  await em.nativeDelete(RefreshToken, { family });
}

/** An app's access to a user: the grant, and every token the app holds for the user. */
export async function revokeAppForUser(em: EntityManager, userId: number, clientId: number): Promise<void> {
  forgetTokens(await deleteAppTokensOfUser(em, userId, clientId));
  await em.nativeDelete(RefreshToken, { user: userId, client: clientId });
  await em.nativeDelete(OAuthGrant, { user: userId, client: clientId });
}

/** An app, with every code, token and authorization it had (the rows cascade; the tokens are forgotten here). */
export async function revokeClient(em: EntityManager, clientRowId: number): Promise<void> {
  forgetTokens(await deleteClientTokens(em, clientRowId));
  await em.nativeDelete(OAuthClient, { id: clientRowId });
}

/** One access token by id (its family's refresh tokens stay: revoke the family to end the grant). */
export async function revokeTokenById(em: EntityManager, userId: number, tokenId: number): Promise<boolean> {
  return forgetTokens(await deleteUserToken(em, userId, tokenId)) > 0;
}

/** RFC 7009: an access or refresh token presented by the app it was issued to. Unknown tokens are no error. */
export async function revokePresentedToken(em: EntityManager, clientRowId: number, tokenHash: string): Promise<void> {
  const refresh = await em.findOne(RefreshToken, { tokenHash, client: clientRowId });
  if (refresh) {
    await revokeFamily(em, refresh.family);
    return;
  }
  const access = await em.findOne(Token, { tokenHash, clientId: clientRowId });
  if (access) forgetTokens(await deleteTokenById(em, access.id));
}

/** Drops codes and refresh tokens that can no longer be used (run now and then, cheap). */
export async function sweepExpired(em: EntityManager): Promise<void> {
  const now = currentTime();
  await deleteExpiredCodesAndRefreshTokens(em, new Date(now.getTime() - 86_400_000), now);
}
