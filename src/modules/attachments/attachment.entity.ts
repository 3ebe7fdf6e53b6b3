import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Note } from '../notes/note.entity.ts';
import { User } from '../users/user.entity.ts';

export const AttachmentSchema = defineEntity({
  name: 'Attachment',
  tableName: 'attachments',
  properties: {
    id: p.integer().primary(),
    note: () => p.manyToOne(Note),
    user: () => p.manyToOne(User),
    filename: p.string().length(255),
    extname: p.string().length(32).default(''),
    contentType: p.string().length(255),
    byteSize: p.integer(),
    checksum: p.string().length(64),
    managed: p.boolean().default(true),
    forkedFrom: () => p.manyToOne(Attachment).nullable(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
});
export class Attachment extends AttachmentSchema.class {}
AttachmentSchema.setClass(Attachment);

// The bytes live in their own table so listing and presenting attachments never reads them.
export const AttachmentBlobSchema = defineEntity({
  name: 'AttachmentBlob',
  tableName: 'attachment_blobs',
  properties: {
    attachment: () => p.oneToOne(Attachment).primary().owner(),
    data: p.blob(),
  },
});
export class AttachmentBlob extends AttachmentBlobSchema.class {}
AttachmentBlobSchema.setClass(AttachmentBlob);
