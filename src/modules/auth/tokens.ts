import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import type { User } from '../users/user.entity.ts';
import { appOfToken } from './auth.repository.ts';
import { Token, type TokenScope } from './token.entity.ts';
import type { AppWrites } from '../oauth/oauth.entity.ts';
import type { Via } from '../events/domain-events.ts';

const TOKEN_PREFIX = 'nt_';

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export type IssuedToken = { token: Token; secret: string };

/** Creates a personal token; the secret is returned once and only its hash is stored. */
export async function issueToken(
  em: EntityManager,
  user: User,
  options: { scope: TokenScope; expiresInDays?: number | undefined; label?: string | undefined },
): Promise<IssuedToken> {
  const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const expiresAt = options.expiresInDays === undefined ? null : new Date(currentTime().getTime() + options.expiresInDays * 86_400_000);
  const token = em.create(Token, {
    user,
    tokenHash: hashToken(secret),
    prefix: secret.slice(0, 10),
    scope: options.scope,
    label: options.label ?? null,
    expiresAt,
    lastUsedAt: null,
  });
  await em.flush();
  return { token, secret };
}

/** The token with this hash (of its secret), with its user, if it exists and has not expired. */
export async function findUsableToken(em: EntityManager, hash: string): Promise<{ token?: Token; expired: boolean }> {
  const token = await em.findOne(Token, { tokenHash: hash }, { populate: ['user'] });
  if (!token) return { expired: false };
  if (token.expiresAt && token.expiresAt.getTime() <= Date.now()) return { expired: true };
  return { token, expired: false };
}

/** The app with this id: how it writes, and what its writes are attributed to (null: deleted meanwhile, its tokens with it). */
export async function clientOfToken(em: EntityManager, clientId: number): Promise<{ writes: AppWrites; via: Via } | null> {
  const row = await appOfToken(em, clientId);
  return row ? { writes: row.writes as AppWrites, via: { clientId: row.client_id, name: row.name } } : null;
}

export function looksLikeToken(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX);
}
