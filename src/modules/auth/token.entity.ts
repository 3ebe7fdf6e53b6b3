import { defineEntity, p } from '@mikro-orm/core';
import { createdAt } from '../../db/timestamps.ts';
import { User } from '../users/user.entity.ts';

export type TokenScope = 'read' | 'write';

// A personal access token. Only the SHA-256 of the secret is stored; `prefix` is its first characters, kept so a
// person can tell their tokens apart without the secret.
export const TokenSchema = defineEntity({
  name: 'Token',
  tableName: 'tokens',
  properties: {
    id: p.integer().primary(),
    user: () => p.manyToOne(User),
    tokenHash: p.string().length(64),
    prefix: p.string().length(12),
    scope: p.string().length(8).$type<TokenScope>(),
    label: p.string().length(255).nullable(),
    expiresAt: p.datetime().columnType('timestamptz(0)').nullable(),
    lastUsedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    /** The app (oauth_clients.id) an OAuth token was issued to; null for a personal token. */
    clientId: p.integer().nullable(),
    /** The grant an OAuth token came from: revoked together (oauth/revocation.ts). */
    family: p.string().length(32).nullable(),
    createdAt: createdAt(),
  },
});
export class Token extends TokenSchema.class {}
TokenSchema.setClass(Token);
