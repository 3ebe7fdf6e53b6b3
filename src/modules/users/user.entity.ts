import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';

export type UserOptions = { advanced_menu?: boolean };

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.integer().primary(),
    username: p.string().length(39),
    name: p.string().length(255).default(''),
    lang: p.string().length(8).default('en'),
    receiveEmail: p.boolean().default(true),
    keyboardShortcuts: p.boolean().default(true),
    options: p.json<UserOptions>().nullable(),
    passwordHash: p.string().length(255).nullable().lazy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class User extends UserSchema.class {}
UserSchema.setClass(User);
