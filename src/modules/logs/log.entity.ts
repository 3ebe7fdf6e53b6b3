import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Attachment } from '../attachments/attachment.entity.ts';
import { Comment } from '../comments/comment.entity.ts';
import { Issue } from '../issues/issue.entity.ts';
import { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { MergeRequest } from '../requests/merge-request.entity.ts';
import { Team } from '../teams/team.entity.ts';
import { User } from '../users/user.entity.ts';

export type LogType = 'note' | 'page' | 'issue' | 'comment' | 'request' | 'attachment' | 'team';

// One row per change a user makes. `team` and `note` say where it happened (for scoping the feed to what the reader
// may see); the object named by `type` may be gone later, so `summary` keeps what is needed to describe it.
export const LogSchema = defineEntity({
  name: 'Log',
  tableName: 'logs',
  properties: {
    id: p.integer().primary(),
    user: () => p.manyToOne(User),
    action: p.string().length(16),
    type: p.string().length(16).$type<LogType>(),
    team: () => p.manyToOne(Team).nullable(),
    note: () => p.manyToOne(Note).nullable(),
    page: () => p.manyToOne(Page).nullable(),
    issue: () => p.manyToOne(Issue).nullable(),
    comment: () => p.manyToOne(Comment).nullable(),
    request: () => p.manyToOne(MergeRequest).nullable(),
    attachment: () => p.manyToOne(Attachment).nullable(),
    summary: p.json<Record<string, unknown>>().nullable(),
    // Made through an app: its public client id and its name then (migration 0021); null otherwise.
    viaClient: p.string().length(64).nullable(),
    viaApp: p.string().length(255).nullable(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Log extends LogSchema.class {}
LogSchema.setClass(Log);
