import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, updatedAt } from '../../db/timestamps.ts';
import { Note } from '../notes/note.entity.ts';
import { User } from '../users/user.entity.ts';

// The bytes are not here: they live in the attachment storage (storage.ts), named by `checksum` (SHA-256, hex).
// `contentType` is sniffed from the bytes at upload; `forkedFrom` is the attachment a fork's copy was made from.
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
