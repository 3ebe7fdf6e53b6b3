import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Note } from '../notes/note.entity.ts';
import { User } from '../users/user.entity.ts';

export const TagSchema = defineEntity({
  name: 'Tag',
  tableName: 'tags',
  properties: {
    id: p.integer().primary(),
    note: () => p.manyToOne(Note),
    name: p.string().length(64),
    /** foldCase(name): one tag per key in a note (unique with note_id); written by addIssueTags, which computes it. */
    nameKey: p.text(),
    createdAt: createdAt(),
  },
});
export class Tag extends TagSchema.class {}
TagSchema.setClass(Tag);

export const IssueSchema = defineEntity({
  name: 'Issue',
  tableName: 'issues',
  properties: {
    id: p.integer().primary(),
    note: () => p.manyToOne(Note),
    index: p.integer(),
    title: p.string().length(255),
    description: p.text().default(''),
    isDone: p.boolean().default(false),
    position: p.integer().default(0),
    rate: p.double().default(0),
    fromUser: () => p.manyToOne(User),
    toUser: () => p.manyToOne(User).nullable(),
    tags: () => p.manyToMany(Tag).pivotTable('issue_tags').joinColumn('issue_id').inverseJoinColumn('tag_id'),
    // Made through an app: its public client id and its name then (migration 0021); null otherwise.
    viaClient: p.string().length(64).nullable(),
    viaApp: p.string().length(255).nullable(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Issue extends IssueSchema.class {}
IssueSchema.setClass(Issue);
