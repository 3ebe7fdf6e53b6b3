// Presenting attachments, pure: the metadata (`getAttachment`, embedded in log entries), the list item
// (`listAttachments`: with `file` and `forked_id`, without `model`) and the upload result (`createAttachment`).
// `html_url` and `fileurl` are the download URL (`downloadAttachment`): it takes the same credentials as the rest of
// the API (the bearer header, or `?access_token=` where a header cannot be sent, e.g. an `<img>` in a page).
import type { Attachment as AttachmentBody, AttachmentListItem, Note as NoteBody, UploadResult } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import type { Attachment } from './attachment.entity.ts';
import { isImage } from './content.ts';

function fields(attachment: Attachment, note: NoteBody, urls: Urls) {
  return {
    id: attachment.id,
    note_id: attachment.note.id,
    user_id: attachment.user.id,
    created_at: attachment.createdAt.toISOString(),
    updated_at: attachment.updatedAt.toISOString(),
    managed: attachment.managed,
    html_url: urls.attachment(attachment.id),
    filename: attachment.filename,
    note,
    extname: attachment.extname,
  };
}

export function presentAttachment(attachment: Attachment, note: NoteBody, urls: Urls): AttachmentBody {
  return { ...fields(attachment, note, urls), model: 'attachment' };
}

export function presentAttachmentListItem(attachment: Attachment, note: NoteBody, urls: Urls): AttachmentListItem {
  const { id, note_id, user_id, ...rest } = fields(attachment, note, urls);
  return { id, note_id, user_id, file: null, forked_id: attachment.forkedFrom?.id ?? null, ...rest };
}

export function presentUpload(attachment: Attachment, urls: Urls): UploadResult {
  return {
    fileurl: urls.attachment(attachment.id),
    filelink: urls.attachmentPath(attachment.id),
    filename: attachment.filename,
    is_image: isImage(attachment.contentType),
  };
}
