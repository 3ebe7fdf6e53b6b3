import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Attachment } from '../attachments/attachment.entity.ts';
import { Note } from '../notes/note.entity.ts';
import { Page, PageVersion } from '../pages/page.entity.ts';
import { User } from '../users/user.entity.ts';

export type MergeRequestStatus = 'draft' | 'opened' | 'closed' | 'merged';

// A proposal to bring page versions of a fork (`fromNote`) into its original (`toNote`): a "request" in the API. Named
// MergeRequest in the code, so it is never confused with an HTTP request.
export const MergeRequestSchema = defineEntity({
  name: 'MergeRequest',
  tableName: 'requests',
  properties: {
    id: p.integer().primary(),
    toNote: () => p.manyToOne(Note),
    // null for a request of an imported note: the export does not carry its fork (migration 0023)
    fromNote: () => p.manyToOne(Note).nullable(),
    index: p.integer(),
    user: () => p.manyToOne(User),
    status: p.string().length(16).$type<MergeRequestStatus>().default('opened'),
    isWip: p.boolean().default(false),
    description: p.text().default(''),
    closedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    mergedAt: p.datetime().columnType('timestamptz(0)').nullable(),
    mergedBy: () => p.manyToOne(User).nullable(),
    pages: () => p.oneToMany(MergeRequestPage).mappedBy('request'),
    attachments: () =>
      p.manyToMany(Attachment).pivotTable('request_attachments').joinColumn('request_id').inverseJoinColumn('attachment_id'),
    // Made through an app: its public client id and its name then (migration 0021); null otherwise.
    viaClient: p.string().length(64).nullable(),
    viaApp: p.string().length(255).nullable(),
    // Of an imported note: its author when no user of that name was here, and its fork's name then (migration 0023).
    importedAuthor: p.json<{ username: string; name: string }>().nullable(),
    importedFrom: p.json<{ team: string; note: string }>().nullable(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class MergeRequest extends MergeRequestSchema.class {}
MergeRequestSchema.setClass(MergeRequest);

export const MergeRequestPageSchema = defineEntity({
  name: 'MergeRequestPage',
  tableName: 'request_pages',
  properties: {
    id: p.integer().primary(),
    request: () => p.manyToOne(MergeRequest),
    note: () => p.manyToOne(Note),
    // The proposed version and the fork page (null for a `delete`: the fork deleted the page).
    pageVersion: () => p.manyToOne(PageVersion).nullable(),
    fromPage: () => p.manyToOne(Page).nullable(),
    toPage: () => p.manyToOne(Page).nullable(),
    // The fork page's base when the request was made (null for a page new in the fork).
    baseVersion: () => p.manyToOne(PageVersion).nullable(),
    type: p.string().length(16).$type<'create' | 'update' | 'delete'>(),
    path: p.text(),
    diff: p.text().lazy(),
    merged: p.boolean().default(false),
    createdAt: createdAt(),
  },
});
export class MergeRequestPage extends MergeRequestPageSchema.class {}
MergeRequestPageSchema.setClass(MergeRequestPage);
