// Importing a note's export zip (issue 23): everything is checked before anything is written (the archive's bounds,
// note.json against its schema and its references, the attachments' checksums), then the note's rows are written in
// one transaction, many rows per statement (import.repository.ts), with the attachments' bytes stored inside it under
// their checksum locks (as uploads are, attachments.service.ts) and removed again when it fails. So a failed import
// leaves nothing behind. Authors are matched by username; one with no user here gives the row to the importing user
// and is kept as `imported_author`. The change log gets `note.created`: the activity log and the search projection
// (which indexes every page of a note just created) follow from it.
import { mkdir, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../events/domain-events.ts';
import { recordEvent } from '../events/events.ts';
import { Note } from '../notes/note.entity.ts';
import type { Team } from '../teams/team.entity.ts';
import { foldCase } from '../text/fold.ts';
import { lockChecksum } from '../attachments/attachments.repository.ts';
import { extensionOf } from '../attachments/attachments.service.ts';
import { sniffType } from '../attachments/content.ts';
import { SNIFF_BYTES } from '../attachments/upload.ts';
import { Attachment } from '../attachments/attachment.entity.ts';
import type { Storage } from '../attachments/storage.ts';
import { boundsFor, ExportArchive, ImportFailure } from './archive.ts';
import { checkReferences, lastPlace, parseNoteJson, type ExportUser, type ExportVersion, type NoteExport } from './note-json.ts';
import { continueCounters, dropTriggeredPlaces, insertRows, linkParents, setCover, slugTaken, takeIds, usersByUsername } from './import.repository.ts';
import { writeRequests } from './import-requests.ts';

/** A note name (slug): 1-64 of a-z 0-9 _ -, not all digits (a digits-only segment is a note id). */
export const isNoteName = (name: string) => /^[a-z0-9_-]{1,64}$/.test(name) && !/^[0-9]+$/.test(name);

export type ImportOptions = {
  actor: Actor;
  team: Team;
  /** The uploaded zip (a temporary file the caller removes). */
  file: string;
  /** The new note's name instead of the archive's: a name, or null for none; undefined keeps the archive's. */
  name: string | null | undefined;
  limits: { importBytes: number; importEntries: number; pageContentBytes: number; attachmentBytes: number };
  onProgress: (percent: number) => void;
};

/** Who made a row: the user of that name here, else the importing user with the name kept. */
export type Authors = (user: ExportUser) => { user_id: number; imported_author: ExportUser | null };

/** The attachments' bytes in temporary files, and their sniffed types, by checksum. */
type Extracted = { files: ReadonlyMap<string, string>; types: ReadonlyMap<string, string> };

/** Versions (with their content) written per batch: each batch reads its files, then writes them in a statement or few. */
const VERSION_BATCH = 500;
/**
 * ... and at most about this much content per batch (a page may hold LIMIT_PAGE_CONTENT_BYTES): a batch is held as
 * text, as the rows' JSON and as the statement's parameter at once, inside the server's heap of 104 MB beside
 * note.json's objects (16 MiB ran a 1,000 x 50 import out of memory in `make bench`).
 */
const BATCH_CONTENT_BYTES = 4 * 1024 * 1024;

/** Imports the archive as a new note of the team; resolves with its id, or fails with an ImportFailure. */
export async function importNote(em: EntityManager, storage: Storage, options: ImportOptions): Promise<number> {
  const bounds = boundsFor(options.limits);
  const archive = await ExportArchive.open(options.file, bounds);
  const extracted = new Map<string, string>();
  try {
    const data = parseNoteJson(await archive.text('note.json', Math.min(bounds.maxTotalBytes, 512 * 1024 * 1024)));
    checkReferences(data, (file) => archive.has(file));
    checkTags(data);
    const name = options.name === undefined ? data.note.name : options.name;
    if (name !== null && !isNoteName(name)) throw new ImportFailure('invalid_archive', `"${name}" is not a note name (1-64 of a-z 0-9 _ -, not all digits)`);
    options.onProgress(2);
    const types = await extractAttachments(archive, storage, data, extracted, options.limits.attachmentBytes);
    options.onProgress(10);
    const authors = await authorsOf(em, data, options.actor.id);
    return await writeNote(em, storage, archive, data, { ...options, name }, authors, { files: extracted, types });
  } finally {
    archive.close();
    for (const file of extracted.values()) await rm(file, { force: true });
  }
}

function checkTags(data: NoteExport): void {
  const keys = new Set<string>();
  for (const tag of data.tags) {
    const key = foldCase(tag.name);
    if (keys.has(key)) throw new ImportFailure('invalid_archive', `the tag "${tag.name}" appears twice`);
    keys.add(key);
  }
  for (const issue of data.issues) {
    for (const tag of issue.tags) if (!keys.has(foldCase(tag))) throw new ImportFailure('invalid_archive', `issue ${issue.index} has the tag "${tag}", which is not in the file's tags`);
  }
}

/**
 * The attachments' bytes into temporary files, each checked against its checksum and size; their types are sniffed
 * from the bytes, as an upload's are (the file's `content_type` is not believed): by checksum.
 */
async function extractAttachments(
  archive: ExportArchive,
  storage: Storage,
  data: NoteExport,
  extracted: Map<string, string>,
  maxBytes: number,
): Promise<Map<string, string>> {
  await mkdir(storage.tempDir, { recursive: true });
  const types = new Map<string, string>();
  for (const attachment of data.attachments) {
    if (extracted.has(attachment.sha256)) continue;
    const target = path.join(storage.tempDir, `import-${randomUUID()}`);
    extracted.set(attachment.sha256, target);
    const { checksum, size, head } = await archive.extract(attachment.file, target, maxBytes, SNIFF_BYTES);
    if (checksum !== attachment.sha256) throw new ImportFailure('invalid_archive', `${attachment.file} does not have the checksum ${attachment.sha256}`);
    if (size !== attachment.byte_size) throw new ImportFailure('invalid_archive', `${attachment.file} has ${size} bytes, not ${attachment.byte_size}`);
    types.set(checksum, await sniffType(head));
  }
  return types;
}

async function authorsOf(em: EntityManager, data: NoteExport, importerId: number): Promise<Authors> {
  const names = new Set<string>();
  const add = (user: ExportUser | null) => user && names.add(user.username);
  add(data.note.author);
  for (const page of data.pages) for (const version of page.versions) [version.author, ...(version.co_authors ?? [])].forEach(add);
  for (const issue of data.issues) [issue.author, issue.assignee].forEach(add);
  for (const request of data.requests) [request.author, request.merged_by].forEach(add);
  for (const attachment of data.attachments) add(attachment.author);
  for (const comment of allComments(data)) {
    add(comment.author);
    for (const mention of comment.mentions) names.add(mention);
  }
  const found = await usersByUsername(em, [...names]);
  return (user) => {
    const id = found.get(user.username.toLowerCase());
    return id === undefined ? { user_id: importerId, imported_author: { username: user.username, name: user.name } } : { user_id: id, imported_author: null };
  };
}

function allComments(data: NoteExport) {
  return [
    ...data.comments, ...data.pages.flatMap((page) => page.comments), ...data.issues.flatMap((issue) => issue.comments),
    ...data.requests.flatMap((request) => request.comments ?? []),
  ];
}

/** An existing user's id for a username, or undefined (mentions of users not here are left out). */
const existingUser = (authors: Authors, username: string) => {
  const found = authors({ username, name: '' });
  return found.imported_author === null ? found.user_id : undefined;
};

async function writeNote(
  em: EntityManager,
  storage: Storage,
  archive: ExportArchive,
  data: NoteExport,
  options: ImportOptions & { name: string | null },
  authors: Authors,
  extracted: Extracted,
): Promise<number> {
  const stored: string[] = [];
  try {
    return await em.transactional(async (tx) => {
      if (options.name !== null && (await slugTaken(tx, options.team.id, options.name))) {
        throw new ImportFailure('name_taken', `the team ${options.team.name} already has a note named "${options.name}"`);
      }
      const [noteId] = await takeIds(tx, 'notes', 1);
      const { note } = data;
      await insertRows(tx, 'notes', NOTE_COLUMNS, [{
        id: noteId, team_id: options.team.id, user_id: authors(note.author).user_id, slug: options.name, title: note.title,
        description: note.description, is_private: note.is_private, is_time_track: note.is_time_track, created_at: note.created_at, updated_at: note.updated_at,
      }]);
      const pageIds = new Map<number, number>();
      const allPageIds = await takeIds(tx, 'pages', data.pages.length);
      data.pages.forEach((page, at) => pageIds.set(page.id, allPageIds[at]!));
      const present = data.pages.filter((page) => lastPlace(page).present);
      const presentIds = new Set(present.map((page) => page.id));
      const requestIds = await writeRequests.rows(tx, data, noteId!, authors);
      await writePages(tx, archive, present, { noteId: noteId!, pageIds, maxBytes: options.limits.pageContentBytes });
      await linkParents(tx, present.flatMap((page) => {
        const parent = lastPlace(page).parent;
        return parent === null ? [] : [{ id: pageIds.get(page.id)!, parent_id: pageIds.get(parent)! }];
      }));
      const versionIds = await writeVersions(tx, archive, data, { noteId: noteId!, pageIds, presentIds, requestIds, authors, options });
      await dropTriggeredPlaces(tx, noteId!);
      await insertRows(tx, 'page_places', PLACE_COLUMNS, data.pages.flatMap((page) => page.places.map((place) => ({
        note_id: noteId, page_id: pageIds.get(page.id), parent_id: place.parent === null ? null : pageIds.get(place.parent),
        position: place.position, title: place.title, present: place.present, since: place.since,
      }))));
      options.onProgress(92);
      await writeIssuesAndComments(tx, data, { noteId: noteId!, pageIds, presentIds, authors, requestIds });
      const attachmentIds = await writeAttachments(tx, storage, data, noteId!, authors, extracted, stored);
      await writeRequests.pages(tx, archive, data, { noteId: noteId!, pageIds, presentIds, requestIds, versionIds, attachmentIds, maxBytes: options.limits.pageContentBytes });
      await continueCounters(tx, noteId!, Math.max(0, ...data.issues.map((issue) => issue.index)), Math.max(0, ...data.requests.map((request) => request.index)));
      if (note.cover_page !== null) await setCover(tx, noteId!, pageIds.get(note.cover_page)!);
      const created = await tx.findOneOrFail(Note, noteId!, { populate: ['team'] });
      await recordEvent(tx, { type: 'note.created', actor: options.actor, note: created });
      options.onProgress(99);
      return noteId!;
    });
  } catch (error) {
    // bytes this import stored go again (unless a row of another note came to need them meanwhile)
    for (const checksum of stored) {
      await em.transactional(async (tx) => {
        await lockChecksum(tx, checksum);
        if ((await tx.count(Attachment, { checksum })) === 0) await storage.delete(checksum);
      });
    }
    throw error;
  }
}

const NOTE_COLUMNS = {
  id: 'int', team_id: 'int', user_id: 'int', slug: 'text', title: 'text', description: 'text', is_private: 'boolean', is_time_track: 'boolean',
  created_at: 'timestamptz', updated_at: 'timestamptz',
};
type ExportPage = NoteExport['pages'][number];

const PAGE_COLUMNS = {
  id: 'int', note_id: 'int', position: 'int', title: 'text', content: 'text', version_sequence: 'int', created_at: 'timestamptz', updated_at: 'timestamptz',
};

/**
 * The present pages, with the title the tree history says they have now, and the content and number of their last
 * version (or, for a page without versions, a fork's copy not changed since, the content it was copied with), in
 * batches of BATCH_CONTENT_BYTES. Written whole at once: an update from the versions afterwards (`distinct on` over
 * 50,000 versions with their contents) took 28 s of a 55 s import on PGlite.
 */
async function writePages(
  tx: EntityManager,
  archive: ExportArchive,
  present: readonly ExportPage[],
  context: { noteId: number; pageIds: ReadonlyMap<number, number>; maxBytes: number },
): Promise<void> {
  let rows: Record<string, unknown>[] = [];
  let bytes = 0;
  for (const page of present) {
    const last = page.versions.reduce<ExportPage['versions'][number] | undefined>((found, version) => (found && found.version > version.version ? found : version), undefined);
    const file = last?.content_file ?? page.unversioned_content_file;
    bytes += file === null ? 0 : archive.sizeOf(file);
    rows.push({
      id: context.pageIds.get(page.id), note_id: context.noteId, position: lastPlace(page).position, title: lastPlace(page).title,
      content: file === null ? '' : await archive.text(file, context.maxBytes), version_sequence: last?.version ?? 0,
      created_at: page.created_at, updated_at: last?.created_at ?? page.created_at,
    });
    if (bytes >= BATCH_CONTENT_BYTES) {
      await insertRows(tx, 'pages', PAGE_COLUMNS, rows);
      rows = [];
      bytes = 0;
    }
  }
  await insertRows(tx, 'pages', PAGE_COLUMNS, rows);
}

const PLACE_COLUMNS = { note_id: 'int', page_id: 'int', parent_id: 'int', position: 'int', title: 'text', present: 'boolean', since: 'timestamptz' };
const VERSION_COLUMNS = {
  id: 'int', page_id: 'int', note_id: 'int', index: 'int', title: 'text', content: 'text', user_id: 'int', created_at: 'timestamptz',
  request_id: 'int', merged_from_base: 'int', via_app: 'text', imported_author: 'jsonb', co_author_ids: 'int[]',
};

/**
 * A version's co-authors who have a user here, each once, in the file's order, never the version's author (those
 * with no user here are left out, as an assignee or a mention is); none for an export made before co-authors.
 */
function coAuthorIds(authors: Authors, version: ExportVersion, author: ReturnType<Authors>): number[] {
  const ids = new Set<number>();
  for (const user of version.co_authors ?? []) {
    const id = existingUser(authors, user.username);
    // an author with no user here has the importer's id, whom the author is not: the importer may be a co-author
    if (id !== undefined && !(author.imported_author === null && id === author.user_id)) ids.add(id);
  }
  return [...ids];
}

type Context = {
  noteId: number;
  pageIds: ReadonlyMap<number, number>;
  presentIds: ReadonlySet<number>;
  requestIds: ReadonlyMap<number, number>;
  authors: Authors;
  options: ImportOptions;
};

/**
 * Every version, in batches: a present page's into page_versions, a deleted page's into deleted_page_versions (ids
 * from the same sequence, as the trigger that keeps them would have them). Returns the ids by page and version.
 */
async function writeVersions(tx: EntityManager, archive: ExportArchive, data: NoteExport, context: Context): Promise<Map<string, number>> {
  const all = data.pages.flatMap((page) => page.versions.map((version) => ({ page, version })));
  const ids = await takeIds(tx, 'page_versions', all.length);
  const versionIds = new Map<string, number>();
  for (let start = 0; start < all.length; ) {
    const live: Record<string, unknown>[] = [];
    const deleted: Record<string, unknown>[] = [];
    let bytes = 0;
    let at = start;
    for (; at < all.length && at - start < VERSION_BATCH && bytes < BATCH_CONTENT_BYTES; at += 1) {
      const { page, version } = all[at]!;
      bytes += archive.sizeOf(version.content_file);
      const author = context.authors(version.author);
      versionIds.set(`${page.id}:${version.version}`, ids[at]!);
      (context.presentIds.has(page.id) ? live : deleted).push({
        id: ids[at], page_id: context.pageIds.get(page.id), note_id: context.noteId, index: version.version, title: version.title,
        content: await archive.text(version.content_file, context.options.limits.pageContentBytes), user_id: author.user_id,
        created_at: version.created_at, request_id: version.request === null ? null : context.requestIds.get(version.request),
        merged_from_base: version.merged_from_base, via_app: version.via_app, imported_author: author.imported_author,
        co_author_ids: coAuthorIds(context.authors, version, author),
      });
    }
    await insertRows(tx, 'page_versions', VERSION_COLUMNS, live);
    await insertRows(tx, 'deleted_page_versions', VERSION_COLUMNS, deleted);
    start = at;
    context.options.onProgress(10 + Math.floor((80 * start) / Math.max(all.length, 1)));
  }
  return versionIds;
}

const TAG_COLUMNS = { id: 'int', note_id: 'int', name: 'text', name_key: 'text', created_at: 'timestamptz' };
const ISSUE_COLUMNS = {
  id: 'int', note_id: 'int', index: 'int', title: 'text', description: 'text', is_done: 'boolean', position: 'int', rate: 'float8',
  from_user_id: 'int', to_user_id: 'int', created_at: 'timestamptz', updated_at: 'timestamptz', via_app: 'text', imported_author: 'jsonb',
};
const COMMENT_COLUMNS = {
  id: 'int', type: 'text', note_id: 'int', page_id: 'int', issue_id: 'int', request_id: 'int', user_id: 'int', body: 'text', created_at: 'timestamptz',
  updated_at: 'timestamptz', via_app: 'text', imported_author: 'jsonb',
};

/** Tags, issues (with their tags in order), and the note's, pages', issues' and requests' comments with their mentions. */
async function writeIssuesAndComments(
  tx: EntityManager,
  data: NoteExport,
  context: Pick<Context, 'noteId' | 'pageIds' | 'presentIds' | 'authors' | 'requestIds'>,
): Promise<void> {
  const { noteId, authors } = context;
  const tagIds = await takeIds(tx, 'tags', data.tags.length);
  const tagByKey = new Map(data.tags.map((tag, at) => [foldCase(tag.name), tagIds[at]!]));
  await insertRows(tx, 'tags', TAG_COLUMNS, data.tags.map((tag, at) => ({ id: tagIds[at], note_id: noteId, name: tag.name, name_key: foldCase(tag.name), created_at: tag.created_at })));
  const issueIds = await takeIds(tx, 'issues', data.issues.length);
  await insertRows(tx, 'issues', ISSUE_COLUMNS, data.issues.map((issue, at) => {
    const author = authors(issue.author);
    return {
      id: issueIds[at], note_id: noteId, index: issue.index, title: issue.title, description: issue.description, is_done: issue.is_done,
      position: issue.position, rate: issue.rate, from_user_id: author.user_id, to_user_id: issue.assignee && existingUser(authors, issue.assignee.username),
      created_at: issue.created_at, updated_at: issue.updated_at, via_app: issue.via_app, imported_author: author.imported_author,
    };
  }));
  // added_order (a bigserial) keeps the order tags were added in: rows are inserted in that order
  await insertRows(tx, 'issue_tags', { issue_id: 'int', tag_id: 'int' }, data.issues.flatMap((issue, at) =>
    issue.tags.map((tag) => ({ issue_id: issueIds[at], tag_id: tagByKey.get(foldCase(tag)) }))));
  // comments on pages deleted since have no page to belong to (comments.page_id refers to a live page): left out
  const targets = [
    ...data.comments.map((comment) => ({ comment, type: 'note', page_id: null as number | null | undefined, issue_id: null as number | null, request_id: null as number | null })),
    ...data.pages.filter((page) => context.presentIds.has(page.id))
      .flatMap((page) => page.comments.map((comment) => ({ comment, type: 'page', page_id: context.pageIds.get(page.id), issue_id: null, request_id: null }))),
    ...data.issues.flatMap((issue, at) => issue.comments.map((comment) => ({ comment, type: 'issue', page_id: null, issue_id: issueIds[at]!, request_id: null }))),
    ...data.requests.flatMap((request) => (request.comments ?? []).map((comment) => ({ comment, type: 'request', page_id: null, issue_id: null, request_id: context.requestIds.get(request.index)! }))),
  ].sort((a, b) => Date.parse(a.comment.created_at) - Date.parse(b.comment.created_at));
  const commentIds = await takeIds(tx, 'comments', targets.length);
  await insertRows(tx, 'comments', COMMENT_COLUMNS, targets.map(({ comment, type, page_id, issue_id, request_id }, at) => {
    const author = authors(comment.author);
    return {
      id: commentIds[at], type, note_id: noteId, page_id, issue_id, request_id, user_id: author.user_id, body: comment.body, created_at: comment.created_at,
      updated_at: comment.updated_at, via_app: comment.via_app, imported_author: author.imported_author,
    };
  }));
  await insertRows(tx, 'comment_mentions', { comment_id: 'int', user_id: 'int' }, targets.flatMap(({ comment }, at) => {
    const users = new Set(comment.mentions.map((username) => existingUser(authors, username)).filter((id) => id !== undefined));
    return [...users].map((user_id) => ({ comment_id: commentIds[at], user_id }));
  }));
}

const ATTACHMENT_COLUMNS = {
  id: 'int', note_id: 'int', user_id: 'int', filename: 'text', extname: 'text', content_type: 'text', byte_size: 'int', checksum: 'text',
  managed: 'boolean', created_at: 'timestamptz', updated_at: 'timestamptz', imported_author: 'jsonb',
};

/** The attachments' rows, and their bytes into the storage under the checksum locks; returns their ids by checksum. */
async function writeAttachments(
  tx: EntityManager,
  storage: Storage,
  data: NoteExport,
  noteId: number,
  authors: Authors,
  extracted: Extracted,
  stored: string[],
): Promise<Map<string, number[]>> {
  const ids = await takeIds(tx, 'attachments', data.attachments.length);
  const byChecksum = new Map<string, number[]>();
  data.attachments.forEach((attachment, at) => byChecksum.set(attachment.sha256, [...(byChecksum.get(attachment.sha256) ?? []), ids[at]!]));
  for (const checksum of byChecksum.keys()) {
    await lockChecksum(tx, checksum);
    if (await storage.has(checksum)) continue;
    const attachment = data.attachments.find((candidate) => candidate.sha256 === checksum)!;
    await storage.put(checksum, extracted.files.get(checksum)!, attachment.byte_size);
    stored.push(checksum);
  }
  await insertRows(tx, 'attachments', ATTACHMENT_COLUMNS, data.attachments.map((attachment, at) => {
    const author = authors(attachment.author);
    return {
      id: ids[at], note_id: noteId, user_id: author.user_id, filename: attachment.filename, extname: extensionOf(attachment.filename),
      content_type: extracted.types.get(attachment.sha256)!, byte_size: attachment.byte_size, checksum: attachment.sha256, managed: true,
      created_at: attachment.created_at, updated_at: attachment.created_at, imported_author: author.imported_author,
    };
  }));
  return byChecksum;
}
