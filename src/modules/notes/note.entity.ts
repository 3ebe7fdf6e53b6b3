import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Team } from '../teams/team.entity.ts';
import { User } from '../users/user.entity.ts';

export const NoteSchema = defineEntity({
  name: 'Note',
  tableName: 'notes',
  properties: {
    id: p.integer().primary(),
    team: () => p.manyToOne(Team),
    user: () => p.manyToOne(User),
    slug: p.string().length(64).nullable(),
    title: p.string().length(255),
    description: p.text().default(''),
    isPrivate: p.boolean().default(false),
    isTimeTrack: p.boolean().default(false),
    forkedFrom: () => p.manyToOne(Note).nullable(),
    pulledAt: p.datetime().columnType('timestamptz(0)').nullable(),
    // The cover page (the first page created, unless another is made the cover; none after `is_cover=false`).
    coverPageId: p.integer().nullable(),
    // Per-note counters for issue and request indexes, bumped with `UPDATE ... RETURNING` so concurrent creates
    // never share an index.
    issueSequence: p.integer().default(0),
    requestSequence: p.integer().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Note extends NoteSchema.class {}
NoteSchema.setClass(Note);
