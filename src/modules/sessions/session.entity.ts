import { defineEntity, p } from '@mikro-orm/core';
import { createdAt } from '../../db/timestamps.ts';
import { User } from '../users/user.entity.ts';

// A signed-in browser. The cookie holds a random secret; only its SHA-256 is stored. `csrfToken` is what the
// session's forms must send back.
export const BrowserSessionSchema = defineEntity({
  name: 'BrowserSession',
  tableName: 'browser_sessions',
  properties: {
    id: p.integer().primary(),
    secretHash: p.string().length(64),
    user: () => p.manyToOne(User),
    csrfToken: p.string().length(64),
    expiresAt: p.datetime().columnType('timestamptz(0)'),
    createdAt: createdAt(),
  },
});
export class BrowserSession extends BrowserSessionSchema.class {}
BrowserSessionSchema.setClass(BrowserSession);
