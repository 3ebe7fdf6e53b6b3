// The OAuth module's SQL: access tokens deleted with their ids returned (revocation.ts forgets each one in this
// process's token cache), the sweep of expired codes and refresh tokens, the grant's upsert (model.ts), and the
// expiry of unused dynamic registrations (registration.ts).
import type { EntityManager } from '@mikro-orm/postgresql';

async function deleteTokensWhere(em: EntityManager, where: string, parameters: unknown[]): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(`delete from tokens where ${where} returning id`, parameters);
  return rows.map((row) => row.id);
}

/** Deletes the access tokens of one grant's family (a code exchange or password grant and its refreshes); their ids. */
export const deleteFamilyTokens = (em: EntityManager, family: string): Promise<number[]> => deleteTokensWhere(em, 'family = ?', [family]);

/** Deletes every access token the app holds for the user (its access revoked); their ids. */
export const deleteAppTokensOfUser = (em: EntityManager, userId: number, clientRowId: number): Promise<number[]> =>
  deleteTokensWhere(em, 'user_id = ? and client_id = ?', [userId, clientRowId]);

/** Deletes every access token of the app (the app deleted); their ids. */
export const deleteClientTokens = (em: EntityManager, clientRowId: number): Promise<number[]> => deleteTokensWhere(em, 'client_id = ?', [clientRowId]);

/** Deletes one access token of the user, as the user asked; its id, or none when it is not theirs. */
export const deleteUserToken = (em: EntityManager, userId: number, tokenId: number): Promise<number[]> =>
  deleteTokensWhere(em, 'id = ? and user_id = ?', [tokenId, userId]);

/** Deletes one access token presented back by its app (RFC 7009); its id. */
export const deleteTokenById = (em: EntityManager, tokenId: number): Promise<number[]> => deleteTokensWhere(em, 'id = ?', [tokenId]);

/** Drops the codes expired before `codesBefore` and the refresh tokens expired before `refreshBefore`: they can no longer be used. */
export async function deleteExpiredCodesAndRefreshTokens(em: EntityManager, codesBefore: Date, refreshBefore: Date): Promise<void> {
  await em.execute('delete from oauth_codes where expires_at < ?', [codesBefore]);
  await em.execute('delete from oauth_refresh_tokens where expires_at < ?', [refreshBefore]);
}

/** Records the user's grant to the app in one statement, widening it (never narrowing a `write` to a `read`). */
export async function upsertGrant(em: EntityManager, userId: number, clientRowId: number, scope: 'read' | 'write', now: Date): Promise<void> {
  await em.execute(
    `insert into oauth_grants (user_id, client_id, scope, created_at, updated_at) values (?, ?, ?, ?, ?)
     on conflict (user_id, client_id) do update set scope = case when oauth_grants.scope = 'write' then 'write' else excluded.scope end, updated_at = excluded.updated_at`,
    [userId, clientRowId, scope, now, now],
  );
}

/**
 * Deletes the apps registered through RFC 7591 before `before` that no user ever authorized (registration.ts). Such an
 * app has no code, token or grant: nothing to forget in the token cache.
 */
export async function deleteUnusedRegistrations(em: EntityManager, before: Date): Promise<void> {
  await em.execute('delete from oauth_clients where registered_dynamically and authorized_at is null and created_at < ?', [before]);
}

/** Records that a user authorized the app for the first time: a registration so used is never deleted as unused. */
export async function markClientAuthorized(em: EntityManager, clientRowId: number, now: Date): Promise<void> {
  await em.execute('update oauth_clients set authorized_at = ? where id = ? and authorized_at is null', [now, clientRowId]);
}
