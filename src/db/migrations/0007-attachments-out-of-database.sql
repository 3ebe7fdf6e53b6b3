-- Attachment bytes leave the database (issue 9): they live in the attachment storage (a directory under DATA_DIR,
-- or an S3-compatible store), named by their SHA-256. SQL cannot write files, so the bytes stored so far wait in
-- `attachment_blobs_to_move` until the step that runs right after the migrations, at the server's start-up and in
-- `npm run migrate`, has moved them into the storage; it then drops that table (src/modules/attachments/
-- blob-move.ts). Nothing reads or writes bytes in the database any more.
alter table attachment_blobs rename to attachment_blobs_to_move;
-- the bytes go when no attachment refers to them any more: references are counted by checksum
create index attachments_checksum_index on attachments (checksum);
-- deleting an attachment sets its forks' copies' forked_from_id to null
create index attachments_forked_from_id_index on attachments (forked_from_id) where forked_from_id is not null;
