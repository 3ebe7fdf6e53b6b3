import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Attachment } from '../attachments/attachment.entity.ts';
import { Note } from '../notes/note.entity.ts';
import { Page, PageVersion } from '../pages/page.entity.ts';
import { User } from '../users/user.entity.ts';

export type RequestStatus = 'draft' | 'opened' | 'closed' | 'merged';

// A proposal to bring page versions of a fork (`fromNote`) into its original (`toNote`).
export const RequestSchema = defineEntity({
  name: 'Request',
  tableName: 'requests',
  properties: {
    id: p.integer().primary(),
    toNote: () => p.manyToOne(Note),
    fromNote: () => p.manyToOne(Note),
    index: p.integer(),
    user: () => p.manyToOne(User),
    status: p.string().length(16).$type<RequestStatus>().default('opened'),
    isWip: p.boolean().default(false),
    description: p.text().default(''),
    closedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    mergedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    mergedBy: () => p.manyToOne(User).nullable(),
    pages: () => p.oneToMany(RequestPage).mappedBy('request'),
    attachments: () =>
      p.manyToMany(Attachment).pivotTable('request_attachments').joinColumn('request_id').inverseJoinColumn('attachment_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Request extends RequestSchema.class {}
RequestSchema.setClass(Request);

export const RequestPageSchema = defineEntity({
  name: 'RequestPage',
  tableName: 'request_pages',
  properties: {
    id: p.integer().primary(),
    request: () => p.manyToOne(Request),
    note: () => p.manyToOne(Note),
    pageVersion: () => p.manyToOne(PageVersion),
    fromPage: () => p.manyToOne(Page),
    toPage: () => p.manyToOne(Page).nullable(),
    type: p.string().length(16).$type<'create' | 'update'>(),
    path: p.text(),
    diff: p.text().lazy(),
    merged: p.boolean().default(false),
    createdAt: createdAt(),
  },
});
export class RequestPage extends RequestPageSchema.class {}
RequestPageSchema.setClass(RequestPage);
