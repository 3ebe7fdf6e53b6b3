import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Comment } from '../comments/comment.entity.ts';
import { Issue } from '../issues/issue.entity.ts';
import { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { MergeRequest } from '../requests/merge-request.entity.ts';
import { User } from '../users/user.entity.ts';

export type NotificationEvent = 'new_note' | 'mention' | 'assign' | 'comment' | 'request' | 'merge' | 'close';
export type NotificationType = 'note' | 'page' | 'issue' | 'request' | 'comment';

export const NotificationSchema = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  properties: {
    id: p.integer().primary(),
    user: () => p.manyToOne(User),
    fromUser: () => p.manyToOne(User),
    event: p.string().length(16).$type<NotificationEvent>(),
    type: p.string().length(16).$type<NotificationType>(),
    note: () => p.manyToOne(Note),
    page: () => p.manyToOne(Page).nullable(),
    issue: () => p.manyToOne(Issue).nullable(),
    request: () => p.manyToOne(MergeRequest).nullable(),
    comment: () => p.manyToOne(Comment).nullable(),
    title: p.string().length(512),
    isRead: p.boolean().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Notification extends NotificationSchema.class {}
NotificationSchema.setClass(Notification);
