import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Issue } from '../issues/issue.entity.ts';
import { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { MergeRequest } from '../requests/merge-request.entity.ts';
import { User } from '../users/user.entity.ts';

export type CommentType = 'note' | 'page' | 'issue' | 'request';

/**
 * What a comment is on, inside its note: the note itself, or one of its pages (issue comments add
 * `{ type: 'issue'; issue: Issue }` here, and a branch wherever a `switch` over the type fails `tsc` without it).
 */
export type CommentedObject = { type: 'note' } | { type: 'page'; page: Page } | { type: 'issue'; issue: Issue } | { type: 'request'; request: MergeRequest };

// One table for the four kinds of comment; `note` is always set (the note the commented object is in), `page`,
// `issue` or `request` according to `type` (a check constraint keeps them consistent).
export const CommentSchema = defineEntity({
  name: 'Comment',
  tableName: 'comments',
  properties: {
    id: p.integer().primary(),
    type: p.string().length(8).$type<CommentType>(),
    note: () => p.manyToOne(Note),
    page: () => p.manyToOne(Page).nullable(),
    issue: () => p.manyToOne(Issue).nullable(),
    // a comment on a request to the note (migration 0024)
    request: () => p.manyToOne(MergeRequest).nullable(),
    user: () => p.manyToOne(User),
    body: p.text(),
    mentions: () =>
      p.manyToMany(User).pivotTable('comment_mentions').joinColumn('comment_id').inverseJoinColumn('user_id'),
    // Made through an app: its public client id and its name then (migration 0021); null otherwise.
    viaClient: p.string().length(64).nullable(),
    viaApp: p.string().length(255).nullable(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Comment extends CommentSchema.class {}
CommentSchema.setClass(Comment);
