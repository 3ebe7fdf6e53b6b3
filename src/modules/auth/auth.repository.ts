// SQL of the tokens that the Token entity does not express, and the app a token was issued to.
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';

/** Records that a token was used now (the caller writes it at most once a minute per token). */
export async function markTokenUsed(em: EntityManager, tokenId: number): Promise<void> {
  await em.execute('update tokens set last_used_at = ? where id = ?', [currentTime(), tokenId]);
}

/** The app (OAuth client) with this row id: how it writes, and its public id and name (undefined: deleted). */
export async function appOfToken(em: EntityManager, clientId: number): Promise<{ writes: string; client_id: string; name: string } | undefined> {
  const [row] = await em.execute<{ writes: string; client_id: string; name: string }[]>('select writes, client_id, name from oauth_clients where id = ?', [clientId]);
  return row;
}
