// SQL of the tokens that the Token entity does not express.
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';

/** Records that a token was used now (the caller writes it at most once a minute per token). */
export async function markTokenUsed(em: EntityManager, tokenId: number): Promise<void> {
  await em.execute('update tokens set last_used_at = ? where id = ?', [currentTime(), tokenId]);
}
