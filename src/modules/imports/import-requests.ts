// An import's requests (import.service.ts): an export carries the note, not the forks its requests came from, so an
// imported request has no fork (`from_note_id` null, the fork's name kept in `imported_from`) and each of its pages
// keeps what it proposed on itself (`imported_title`, `imported_content`) instead of naming a fork's version. Such a
// request is read, opened and closed as any other; merging it answers 422 `fork_missing` (merge.service.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ExportArchive } from './archive.ts';
import type { Authors } from './import.service.ts';
import { insertRows, takeIds } from './import.repository.ts';
import type { NoteExport } from './note-json.ts';

const REQUEST_COLUMNS = {
  id: 'int', to_note_id: 'int', index: 'int', user_id: 'int', status: 'text', is_wip: 'boolean', description: 'text',
  closed_at: 'timestamptz', merged_at: 'timestamptz', merged_by_id: 'int', created_at: 'timestamptz', updated_at: 'timestamptz',
  via_app: 'text', imported_author: 'jsonb', imported_from: 'jsonb',
};

const REQUEST_PAGE_COLUMNS = {
  request_id: 'int', note_id: 'int', to_page_id: 'int', base_version_id: 'int', type: 'text', path: 'text', diff: 'text', merged: 'boolean',
  created_at: 'timestamptz', imported_title: 'text', imported_content: 'text',
};

/** The requests' rows (before the versions, which name the request that merged them); their ids by index. */
async function rows(tx: EntityManager, data: NoteExport, noteId: number, authors: Authors): Promise<Map<number, number>> {
  const ids = await takeIds(tx, 'requests', data.requests.length);
  await insertRows(tx, 'requests', REQUEST_COLUMNS, data.requests.map((request, at) => {
    const author = authors(request.author);
    const mergedBy = request.merged_by && authors(request.merged_by);
    return {
      id: ids[at], to_note_id: noteId, index: request.index, user_id: author.user_id, status: request.status, is_wip: request.is_wip,
      description: request.description, closed_at: request.closed_at, merged_at: request.merged_at,
      merged_by_id: mergedBy && mergedBy.imported_author === null ? mergedBy.user_id : null, created_at: request.created_at,
      updated_at: request.updated_at, via_app: request.via_app, imported_author: author.imported_author, imported_from: request.from,
    };
  }));
  return new Map(data.requests.map((request, at) => [request.index, ids[at]!]));
}

type PagesContext = {
  noteId: number;
  pageIds: ReadonlyMap<number, number>;
  presentIds: ReadonlySet<number>;
  requestIds: ReadonlyMap<number, number>;
  /** Version ids by `<page id in the file>:<version>`. */
  versionIds: ReadonlyMap<string, number>;
  attachmentIds: ReadonlyMap<string, number[]>;
  maxBytes: number;
};

/** The requests' pages with what they proposed, and the attachments they carried. */
async function pages(tx: EntityManager, archive: ExportArchive, data: NoteExport, context: PagesContext): Promise<void> {
  const entries: Record<string, unknown>[] = [];
  const live = (page: number | null) => page !== null && context.presentIds.has(page);
  for (const request of data.requests) {
    for (const entry of request.pages) {
      entries.push({
        request_id: context.requestIds.get(request.index), note_id: context.noteId,
        to_page_id: live(entry.page) ? context.pageIds.get(entry.page!) : null,
        base_version_id: live(entry.page) && entry.base_version !== null ? context.versionIds.get(`${entry.page}:${entry.base_version}`) : null,
        type: entry.type, path: entry.path, diff: entry.diff, merged: entry.merged, created_at: entry.created_at,
        imported_title: entry.title, imported_content: await archive.text(entry.content_file, context.maxBytes),
      });
    }
  }
  await insertRows(tx, 'request_pages', REQUEST_PAGE_COLUMNS, entries);
  const carried = new Set<string>();
  const links: { request_id: number; attachment_id: number }[] = [];
  for (const request of data.requests) {
    for (const checksum of request.attachments) {
      const attachmentId = context.attachmentIds.get(checksum)?.[0];
      const key = `${request.index}:${checksum}`;
      if (attachmentId === undefined || carried.has(key)) continue;
      carried.add(key);
      links.push({ request_id: context.requestIds.get(request.index)!, attachment_id: attachmentId });
    }
  }
  await insertRows(tx, 'request_attachments', { request_id: 'int', attachment_id: 'int' }, links);
}

export const writeRequests = { rows, pages };
