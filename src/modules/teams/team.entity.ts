import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { User } from '../users/user.entity.ts';

export type TeamRole = 'manager' | 'member';
export type TeamPlan = 'free' | 'micro' | 'small';

export const TeamSchema = defineEntity({
  name: 'Team',
  tableName: 'teams',
  properties: {
    id: p.integer().primary(),
    name: p.string().length(39),
    isDefault: p.boolean().default(false),
    plan: p.string().length(16).$type<TeamPlan>().default('free'),
    fullname: p.string().length(255).nullable(),
    url: p.string().length(2048).nullable(),
    description: p.text().nullable(),
    memberships: () => p.oneToMany(Membership).mappedBy('team'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Team extends TeamSchema.class {}
TeamSchema.setClass(Team);

export const MembershipSchema = defineEntity({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    id: p.integer().primary(),
    team: () => p.manyToOne(Team),
    user: () => p.manyToOne(User),
    role: p.string().length(16).$type<TeamRole>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Membership extends MembershipSchema.class {}
MembershipSchema.setClass(Membership);
