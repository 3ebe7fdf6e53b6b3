// note.json of an export (docs/note-export.md, docs/note-export.schema.json), written as it is read: a text in
// pieces, each page, issue, request and comment serialised on its own as its rows arrive from keyset batches, so
// the note is never whole in memory. Every object is built with its keys in the schema's order and every array in
// a fixed order (pages by id, versions by number, places as written, comments by id, issues and requests by index,
// attachments by id), so two exports of an unchanged note differ only in `exported_at`.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  attachmentsQuery, commentsQuery, issuesQuery, KeysetCursor, noteRow, pagesQuery, placesQuery, requestPagesQuery, requestsQuery,
  tagsQuery, versionsQuery,
  type AttachmentRow, type CommentRow, type ExportBounds, type KeysetQuery, type IssueRow, type PageRow, type PlaceRow, type RequestPageRow,
  type RequestRow, type TagRow, type VersionRow,
} from './export.repository.ts';

export const FORMAT = 'notes-service/note-export';
export const FORMAT_VERSION = 1;

/** Where each file of the zip sits (note.json names them so). */
export const files = {
  version: (pageId: number, version: number) => `pages/${pageId}/${version}.html`,
  unversioned: (pageId: number) => `pages/${pageId}/copy.html`,
  requestPage: (request: number, entry: number) => `requests/${request}/${entry}.html`,
  attachment: (sha256: string) => `attachments/${sha256}`,
};

const json = (value: unknown) => JSON.stringify(value);

/** `"name":[` items separated by commas `]`, the items being pieces of text themselves. */
async function* array<T>(items: AsyncIterable<T>, write: (item: T) => AsyncIterable<string> | string): AsyncGenerator<string> {
  yield '[';
  let first = true;
  for await (const item of items) {
    yield first ? '\n' : ',\n';
    first = false;
    const written = write(item);
    if (typeof written === 'string') yield written;
    else yield* written;
  }
  yield ']';
}

async function skip(rows: AsyncIterable<unknown>): Promise<void> {
  for await (const _row of rows) {
    // passed over
  }
}

function comment(row: CommentRow) {
  return json({ body: row.body, author: row.author, mentions: row.mentions, created_at: row.created_at, updated_at: row.updated_at, via_app: row.via_app });
}

function version(row: VersionRow) {
  return json({
    version: row.version,
    title: row.title,
    content_file: files.version(row.page_id, row.version),
    author: row.author,
    co_authors: row.co_authors,
    created_at: row.created_at,
    request: row.request,
    merged_from_base: row.merged_from_base,
    via_app: row.via_app,
  });
}

function place(row: PlaceRow) {
  return json({ since: row.since, parent: row.parent, position: row.position, title: row.title, present: row.present });
}

async function* page(row: PageRow, versions: KeysetCursor<VersionRow>, places: KeysetCursor<PlaceRow>, comments: KeysetCursor<CommentRow>): AsyncGenerator<string> {
  const id = row.page_id;
  yield `{"id":${id},"created_at":${json(row.created_at)},"versions":`;
  // rows of a page missing from the list (none are expected: every page has places) are passed over
  await skip(versions.rowsWhile((v) => v.page_id < id));
  await skip(places.rowsWhile((p) => p.page_id < id));
  await skip(comments.rowsWhile((c) => c.owner < id));
  yield* array(versions.rowsWhile((v) => v.page_id === id), version);
  yield `,"unversioned_content_file":${json(row.unversioned ? files.unversioned(id) : null)},"places":`;
  yield* array(places.rowsWhile((p) => p.page_id === id), place);
  yield ',"comments":';
  yield* array(comments.rowsWhile((c) => c.owner === id), comment);
  yield '}';
}

function issueHead(row: IssueRow): string {
  const text = json({
    index: row.index, title: row.title, description: row.description, is_done: row.is_done, position: row.position, rate: row.rate,
    author: row.author, assignee: row.assignee, tags: row.tags, created_at: row.created_at, updated_at: row.updated_at, via_app: row.via_app,
  });
  return text.slice(0, -1); // the object stays open for its comments
}

function requestPage(row: RequestPageRow, entry: number) {
  return json({
    type: row.type,
    path: row.path,
    page: row.page,
    base_version: row.base_version,
    title: row.title,
    content_file: row.has_content ? files.requestPage(row.request, entry) : null,
    diff: row.diff,
    merged: row.merged,
    created_at: row.created_at,
  });
}

async function* request(row: RequestRow, pages: KeysetCursor<RequestPageRow>, comments: KeysetCursor<CommentRow>): AsyncGenerator<string> {
  const head = json({
    index: row.index, status: row.status, is_wip: row.is_wip, description: row.description, author: row.author, from: row.from,
    created_at: row.created_at, updated_at: row.updated_at, closed_at: row.closed_at, merged_at: row.merged_at, merged_by: row.merged_by,
    via_app: row.via_app,
  });
  yield `${head.slice(0, -1)},"pages":`;
  let entry = 0;
  yield* array(pages.rowsWhile((p) => p.request === row.index), (p) => requestPage(p, (entry += 1)));
  yield `,"attachments":${json(row.attachments)},"comments":`;
  yield* array(comments.rowsWhile((c) => c.owner === row.index), comment);
  yield '}';
}

function attachment(row: AttachmentRow) {
  return json({
    filename: row.filename, content_type: row.content_type, byte_size: row.byte_size, sha256: row.sha256,
    file: files.attachment(row.sha256), author: row.author, created_at: row.created_at,
  });
}

/** note.json as pieces of text, read from the database as they are asked for. */
export async function* noteJson(em: EntityManager, noteId: number, bounds: ExportBounds, exportedAt: Date): AsyncGenerator<string> {
  const note = await noteRow(em, noteId);
  const cursor = <Row>(query: KeysetQuery, keyOf: (row: Row) => readonly number[]) =>
    new KeysetCursor<Row>(em, query, keyOf);
  yield `{"format":${json(FORMAT)},"format_version":${FORMAT_VERSION},"exported_at":${json(exportedAt.toISOString())},"note":`;
  yield json({
    name: note.name, title: note.title, description: note.description, is_private: note.is_private, format: 'html', share: 'none',
    is_time_track: note.is_time_track, created_at: note.created_at, updated_at: note.updated_at, author: note.author,
    forked_from: note.forked_from, cover_page: note.cover_page,
  });

  yield ',\n"pages":';
  const versions = cursor<VersionRow>(versionsQuery(noteId, bounds), (row) => [row.page_id, row.version]);
  const places = cursor<PlaceRow>(placesQuery(noteId, bounds), (row) => [row.page_id, Number(row.place_id)]);
  const pageComments = cursor<CommentRow>(commentsQuery(noteId, 'page'), (row) => [row.owner, row.comment_id]);
  const pages = cursor<PageRow>(pagesQuery(noteId, bounds), (row) => [row.page_id]);
  yield* array(pages.rows(), (row) => page(row, versions, places, pageComments));

  yield ',\n"tags":';
  yield* array(cursor<TagRow>(tagsQuery(noteId), (row) => [row.tag_id]).rows(), (row) => json({ name: row.name, created_at: row.created_at }));

  yield ',\n"issues":';
  const issueComments = cursor<CommentRow>(commentsQuery(noteId, 'issue'), (row) => [row.owner, row.comment_id]);
  yield* array(cursor<IssueRow>(issuesQuery(noteId), (row) => [row.index]).rows(), async function* (row) {
    yield `${issueHead(row)},"comments":`;
    yield* array(issueComments.rowsWhile((c) => c.owner === row.index), comment);
    yield '}';
  });

  yield ',\n"comments":';
  yield* array(cursor<CommentRow>(commentsQuery(noteId, 'note'), (row) => [row.owner, row.comment_id]).rows(), comment);

  yield ',\n"requests":';
  const requestPages = cursor<RequestPageRow>(requestPagesQuery(noteId, bounds), (row) => [row.request, row.entry_id]);
  const requestComments = cursor<CommentRow>(commentsQuery(noteId, 'request'), (row) => [row.owner, row.comment_id]);
  yield* array(cursor<RequestRow>(requestsQuery(noteId), (row) => [row.index]).rows(), (row) => request(row, requestPages, requestComments));

  yield ',\n"attachments":';
  yield* array(cursor<AttachmentRow>(attachmentsQuery(noteId, bounds), (row) => [row.attachment_id]).rows(), attachment);
  yield '}\n';
}
