import type { EntityManager } from '@mikro-orm/postgresql';
import { issueToken } from '../auth/tokens.ts';
import { User } from './user.entity.ts';
import { createUser } from './users.service.ts';

/** On a database with no users: creates the first one and returns a write token for it; otherwise undefined. */
export async function ensureFirstUser(em: EntityManager, username: string): Promise<string | undefined> {
  if ((await em.count(User, {})) > 0) return undefined;
  const user = await createUser(em, { username, name: username });
  const { secret } = await issueToken(em, user, { scope: 'write', label: 'first start' });
  return secret;
}
