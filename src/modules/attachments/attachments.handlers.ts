// The attachment operations: list, upload, delete, download (the bytes) and the metadata (`.json`). Uploading takes
// `note.edit` (every member of the note's team); deleting `attachment.delete` (the uploader, or a manager); reading
// takes what reading the note takes (a private note's attachment is 404 to outsiders).
import { actorOf } from '../access/caller.ts';
import { PassThrough } from 'node:stream';
import { defineOperation, noContent, readerOf, type HandlerContext, type StreamAnswer } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { HttpError } from '../../http/errors.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { authorize } from '../access/scope.ts';
import type { Note } from '../notes/note.entity.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteView } from '../notes/notes.loader.ts';
import { Attachment } from './attachment.entity.ts';
import { presentAttachment, presentAttachmentListItem, presentUpload } from './attachment.presenter.ts';
import { createAttachment, deleteAttachment, findAttachmentOf, findReadableAttachment, newestFirst } from './attachments.service.ts';
import { contentDisposition, contentTypeHeader, isInline, parseRange, sniffType } from './content.ts';
import { storageFor } from './storage.ts';
import { receiveUpload } from './upload.ts';

async function presentedNote(context: HandlerContext, note: Note) {
  return presentNote(await loadNoteView(readerOf(context), note), context.urls, 'read');
}

/**
 * Nothing a download shows may act in the browser: no type sniffing, no script, no plugin, no form, no frame of
 * ours around it. `sandbox` gives the file an opaque origin; PDF goes without it (browsers refuse to run their PDF
 * viewer in a sandbox), still with nothing allowed to load or run on our origin.
 */
const NOTHING_RUNS = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'self'; form-action 'none'; base-uri 'none'";
function securityHeaders(contentType: string): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': contentType === 'application/pdf' ? NOTHING_RUNS : `${NOTHING_RUNS}; sandbox`,
    // private: the answer depends on the caller's credentials; no-cache: revalidated (cheaply, by ETag) each time
    'Cache-Control': 'private, no-cache',
  };
}

/** `If-None-Match` lists this ETag (or is `*`). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const value = tag.trim().replace(/^W\//, '');
    return value === '*' || value === etag;
  });
}

export const attachmentOperations = {
  listAttachments: defineOperation('listAttachments', { scope: 'note', action: 'note.read' }, async ({ query }, scope, context) => {
    const results = pagination(query);
    const [attachments, total] = await context.em.findAndCount(
      Attachment,
      { note: scope.note.id },
      { orderBy: newestFirst, limit: results.perPage, offset: results.offset },
    );
    const list = listPlace(results, total);
    if (attachments.length === 0) return answerWith([], { list });
    const note = await presentedNote(context, scope.note);
    return answerWith(attachments.map((attachment) => presentAttachmentListItem(attachment, note, context.urls)), { list });
  }),

  createAttachment: defineOperation('createAttachment', { scope: 'note', action: 'note.edit' }, async (_input, scope, context) => {
    const storage = storageFor(context.config);
    const file = await receiveUpload(context.request, { tempDir: storage.tempDir, limit: context.config.limits.attachmentBytes });
    const contentType = await sniffType(file.head);
    const attachment = await createAttachment(context.em, storage, actorOf(scope.caller), scope.note, { ...file, contentType });
    return presentUpload(attachment, context.urls);
  }),

  deleteAttachment: defineOperation('deleteAttachment', { scope: 'note', action: 'attachment.delete' }, async ({ path }, scope, context) => {
    const attachment = await findAttachmentOf(context.em, scope.note, path.id);
    authorize(scope, 'attachment.delete', { uploaderId: attachment.user.id });
    await deleteAttachment(context.em, storageFor(context.config), actorOf(scope.caller), scope.note, attachment);
    return noContent;
  }),

  getAttachment: defineOperation('getAttachment', { scope: 'caller', action: 'note.read' }, async ({ path }, scope, context) => {
    const { attachment, note } = await findReadableAttachment(context.em, scope.caller, path.id);
    return presentAttachment(attachment, await presentedNote(context, note), context.urls);
  }),

  /** The bytes, streamed from the storage, with their ETag (the checksum) and `Range` support. */
  downloadAttachment: defineOperation('downloadAttachment', { scope: 'caller', action: 'note.read' }, async ({ path, headers }, scope, context) => {
    const { attachment } = await findReadableAttachment(context.em, scope.caller, path.id);
    const etag = `"${attachment.checksum}"`;
    const size = attachment.byteSize;
    const common = { ETag: etag, 'Accept-Ranges': 'bytes', ...securityHeaders(attachment.contentType) };
    if (matches(headers['If-None-Match'], etag)) {
      return { kind: 'stream', status: 304, headers: common, body: new PassThrough().end() } satisfies StreamAnswer;
    }
    // If-Range: the range holds only for the same bytes, else the whole file
    const rangeHeader = headers['If-Range'] === undefined || headers['If-Range'] === etag ? headers.Range : undefined;
    const range = parseRange(rangeHeader, size);
    if (range.kind === 'unsatisfiable') {
      throw new HttpError(416, 'range_not_satisfiable', `the file has ${size} bytes`, { headers: { 'Content-Range': `bytes */${size}` } });
    }
    const described = {
      ...common,
      'Content-Type': contentTypeHeader(attachment.contentType),
      'Content-Disposition': contentDisposition(attachment.filename, isInline(attachment.contentType)),
    };
    const storage = storageFor(context.config);
    if (range.kind === 'partial') {
      return {
        kind: 'stream',
        status: 206,
        headers: { ...described, 'Content-Length': String(range.end - range.start + 1), 'Content-Range': `bytes ${range.start}-${range.end}/${size}` },
        body: await storage.read(attachment.checksum, range),
      } satisfies StreamAnswer;
    }
    const body = size === 0 ? new PassThrough().end() : await storage.read(attachment.checksum);
    return { kind: 'stream', status: 200, headers: { ...described, 'Content-Length': String(size) }, body } satisfies StreamAnswer;
  }),
};
