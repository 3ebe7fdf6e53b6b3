// A note's export (docs/note-export.md): the zip of note.json, every version of every page (deleted pages too), the
// proposed content of every request page and the bytes of every attachment, made as it is read. The same writer
// serves the API (export.handlers.ts) and the admin command line (`export <team>/<note>`).
//
// Order of the entries: note.json, then pages/<page id>/<version>.html by page id and version (then the copies of
// pages that have no version of their own), requests/<index>/<n>.html by request and entry, attachments/<sha256> by
// checksum. Each file's text is read in keyset batches of bounded size (export.repository.ts).
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Storage } from '../attachments/storage.ts';
import {
  attachmentChecksums, exportBounds, KeysetCursor, requestContentsQuery, unversionedContentsQuery, versionContentsQuery,
  type ExportBounds, type RequestContentRow, type UnversionedContentRow, type VersionContentRow,
} from './export.repository.ts';
import { files, noteJson } from './note-json.ts';
import { markdownExport } from './markdown.ts';
import { zipOf, type ZipWriter } from './zip.ts';

export type ExportFormat = 'full' | 'markdown';

/** What an export reports as it goes (the admin command line shows it on a terminal). */
export type ExportProgress = (done: { files: number; bytes: number }) => void;

export type ExportOptions = {
  em: EntityManager;
  noteId: number;
  storage: Storage;
  format: ExportFormat;
  /** Called when the export fails after it began (the zip is cut short). */
  onError: (error: Error) => void;
  progress?: ExportProgress | undefined;
  /** When the export was made (note.json's `exported_at`); now by default. */
  now?: Date | undefined;
};

/** The export's zip, made as it is read. */
export function exportNote(options: ExportOptions): Readable {
  return zipOf((zip) => (options.format === 'markdown' ? markdownExport(options.em, options.noteId, counted(zip, options.progress)) : writeFull(zip, options)), options.onError);
}

/** The writer, counting the files and bytes added for `progress`. */
function counted(zip: ZipWriter, progress: ExportProgress | undefined): ZipWriter {
  if (!progress) return zip;
  const done = { files: 0, bytes: 0 };
  const add = zip.add.bind(zip);
  zip.add = async (path, content) => {
    await add(path, content);
    done.files += 1;
    done.bytes += typeof content === 'string' ? Buffer.byteLength(content) : Buffer.isBuffer(content) ? content.length : 0;
    progress(done);
  };
  return zip;
}

async function writeFull(zip: ZipWriter, options: ExportOptions): Promise<void> {
  const { em, noteId } = options;
  const writer = counted(zip, options.progress);
  const bounds = await exportBounds(em, noteId);
  await writer.add('note.json', Readable.from(noteJson(em, noteId, bounds, options.now ?? new Date())));
  await writeContents(em, writer, noteId, bounds);
  await writeAttachments(em, writer, options.storage, noteId, bounds);
}

async function writeContents(em: EntityManager, zip: ZipWriter, noteId: number, bounds: ExportBounds): Promise<void> {
  const versions = new KeysetCursor<VersionContentRow>(em, versionContentsQuery(noteId, bounds), (row) => [row.page_id, row.version]);
  for await (const row of versions.rows()) await zip.add(files.version(row.page_id, row.version), row.content);
  const copies = new KeysetCursor<UnversionedContentRow>(em, unversionedContentsQuery(noteId), (row) => [row.page_id]);
  for await (const row of copies.rows()) await zip.add(files.unversioned(row.page_id), row.content);
  const proposed = new KeysetCursor<RequestContentRow>(em, requestContentsQuery(noteId, bounds), (row) => [row.request, row.entry_id]);
  for await (const row of proposed.rows()) await zip.add(files.requestPage(row.request, Number(row.entry)), row.content);
}

async function writeAttachments(em: EntityManager, zip: ZipWriter, storage: Storage, noteId: number, bounds: ExportBounds): Promise<void> {
  let after: string | undefined;
  for (;;) {
    const checksums = await attachmentChecksums(em, noteId, bounds, after);
    if (checksums.length === 0) return;
    for (const checksum of checksums) await zip.add(files.attachment(checksum), await storage.read(checksum));
    after = checksums[checksums.length - 1];
  }
}
