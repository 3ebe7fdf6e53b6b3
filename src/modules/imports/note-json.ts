// note.json of a note's export (docs/note-export.schema.json, format version 1): its types, and the checks an import
// makes before it writes anything: the schema (ajv, against the documented file itself), then what a schema cannot
// say (ids and indexes unique, every reference resolves, every named file is in the archive, the tree has no cycle).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ImportFailure } from './archive.ts';

export type ExportUser = { username: string; name: string };
export type ExportComment = { body: string; author: ExportUser; mentions: string[]; created_at: string; updated_at: string; via_app: string | null };
export type ExportVersion = {
  version: number; title: string; content_file: string; author: ExportUser;
  /** Absent in exports made before co-authors (migration 0027). */
  co_authors?: ExportUser[];
  created_at: string; request: number | null; merged_from_base: number | null; via_app: string | null;
};
export type ExportPlace = { since: string; parent: number | null; position: number; title: string; present: boolean };
export type ExportPage = {
  id: number; created_at: string; versions: ExportVersion[];
  /** The content of a live page without versions of its own (a fork's copy not changed since); null otherwise. */
  unversioned_content_file: string | null;
  places: ExportPlace[]; comments: ExportComment[];
};
export type ExportIssue = {
  index: number; title: string; description: string; is_done: boolean; position: number; rate: number; author: ExportUser;
  assignee: ExportUser | null; tags: string[]; created_at: string; updated_at: string; via_app: string | null; comments: ExportComment[];
};
export type ExportRequestPage = {
  type: 'create' | 'update'; path: string; page: number | null; base_version: number | null; title: string; content_file: string;
  diff: string; merged: boolean; created_at: string;
};
export type ExportRequest = {
  index: number; status: 'draft' | 'opened' | 'closed' | 'merged'; is_wip: boolean; description: string; author: ExportUser;
  from: { team: string; note: string } | null; created_at: string; updated_at: string; closed_at: string | null; merged_at: string | null;
  merged_by: ExportUser | null; via_app: string | null; pages: ExportRequestPage[]; attachments: string[];
  /** Absent in exports made before request comments. */
  comments?: ExportComment[];
};
export type ExportAttachment = { filename: string; content_type: string; byte_size: number; sha256: string; file: string; author: ExportUser; created_at: string };
export type NoteExport = {
  format: 'notes-service/note-export';
  format_version: 1;
  exported_at: string;
  note: {
    name: string | null; title: string; description: string; is_private: boolean; format: string; share: string; is_time_track: boolean;
    created_at: string; updated_at: string; author: ExportUser; forked_from: { team: string; note: string } | null; cover_page: number | null;
  };
  pages: ExportPage[];
  tags: { name: string; created_at: string }[];
  issues: ExportIssue[];
  comments: ExportComment[];
  requests: ExportRequest[];
  attachments: ExportAttachment[];
};

export const FORMAT_VERSION = 1;

const schemaFile = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/note-export.schema.json');
let validator: ReturnType<Ajv2020['compile']> | undefined;
function validate(data: unknown): string | undefined {
  if (!validator) {
    const ajv = new Ajv2020({ allErrors: false, strict: false });
    addFormats.default(ajv);
    validator = ajv.compile(JSON.parse(readFileSync(schemaFile, 'utf8')) as object);
  }
  if (validator(data)) return undefined;
  const error = validator.errors?.[0];
  return error ? `${error.instancePath || '/'} ${error.message ?? 'is not valid'}` : 'is not valid';
}

/** Parses and checks note.json; fails with `invalid_note_json`, `unsupported_format_version` or `invalid_archive`. */
export function parseNoteJson(text: string): NoteExport {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ImportFailure('invalid_note_json', `note.json is not JSON: ${(error as Error).message}`);
  }
  const version = (data as { format_version?: unknown } | null)?.format_version;
  if (data !== null && typeof data === 'object' && version !== undefined && version !== FORMAT_VERSION) {
    throw new ImportFailure('unsupported_format_version', `note.json is format version ${JSON.stringify(version)}; this server reads version ${FORMAT_VERSION}`);
  }
  const problem = validate(data);
  if (problem !== undefined) throw new ImportFailure('invalid_note_json', `note.json does not follow docs/note-export.schema.json: ${problem}`);
  return data as NoteExport;
}

const invalid = (detail: string) => new ImportFailure('invalid_archive', detail);

function unique<T>(items: readonly T[], key: (item: T) => string | number, what: string): void {
  const seen = new Set<string | number>();
  for (const item of items) {
    const value = key(item);
    if (seen.has(value)) throw invalid(`${what} ${value} appears twice`);
    seen.add(value);
  }
}

/** The place a page has now: its last one. */
export const lastPlace = (page: ExportPage): ExportPlace => page.places[page.places.length - 1]!;

/** What the schema cannot check. `has`: whether the archive holds a file (every file note.json names must be there). */
export function checkReferences(data: NoteExport, has: (file: string) => boolean): void {
  unique(data.pages, (page) => page.id, 'page id');
  unique(data.issues, (issue) => issue.index, 'issue index');
  unique(data.requests, (request) => request.index, 'request index');
  unique(data.tags, (tag) => tag.name.toLowerCase(), 'tag');
  const pages = new Map(data.pages.map((page) => [page.id, page]));
  const requests = new Set(data.requests.map((request) => request.index));
  const files: string[] = [];
  for (const page of data.pages) {
    unique(page.versions, (version) => version.version, `page ${page.id}: version`);
    for (let at = 1; at < page.versions.length; at += 1) {
      if (page.versions[at]!.version <= page.versions[at - 1]!.version) throw invalid(`page ${page.id}: versions are not in order`);
    }
    if (page.unversioned_content_file !== null) files.push(page.unversioned_content_file);
    if (page.versions.length === 0 && lastPlace(page).present && page.unversioned_content_file === null) {
      throw invalid(`page ${page.id} has no version and no unversioned_content_file`);
    }
    for (const version of page.versions) {
      files.push(version.content_file);
      if (version.request !== null && !requests.has(version.request)) throw invalid(`page ${page.id} version ${version.version} names request ${version.request}, which is not in the file`);
    }
    for (const place of page.places) {
      if (place.parent !== null && !pages.has(place.parent)) throw invalid(`page ${page.id} sits under page ${place.parent}, which is not in the file`);
      if (place.parent === page.id) throw invalid(`page ${page.id} sits under itself`);
    }
  }
  // the tree now: present pages under present parents, no cycle
  for (const page of data.pages) {
    if (!lastPlace(page).present) continue;
    const seen = new Set<number>([page.id]);
    for (let parent = lastPlace(page).parent; parent !== null; parent = lastPlace(pages.get(parent)!).parent) {
      if (!lastPlace(pages.get(parent)!).present) throw invalid(`page ${page.id} sits under page ${parent}, which is deleted`);
      if (seen.has(parent)) throw invalid(`the pages around page ${page.id} form a cycle`);
      seen.add(parent);
    }
  }
  const cover = data.note.cover_page;
  if (cover !== null && !(pages.has(cover) && lastPlace(pages.get(cover)!).present)) throw invalid(`the cover page ${cover} is not a page of the note`);
  for (const request of data.requests) {
    for (const entry of request.pages) {
      files.push(entry.content_file);
      if (entry.page !== null && !pages.has(entry.page)) throw invalid(`request ${request.index} names page ${entry.page}, which is not in the file`);
      if (entry.base_version !== null && (entry.page === null || !pages.get(entry.page)!.versions.some((version) => version.version === entry.base_version))) {
        throw invalid(`request ${request.index} names version ${entry.base_version} of page ${entry.page}, which is not in the file`);
      }
    }
    for (const checksum of request.attachments) {
      if (!data.attachments.some((attachment) => attachment.sha256 === checksum)) throw invalid(`request ${request.index} names attachment ${checksum}, which is not in the file`);
    }
  }
  for (const attachment of data.attachments) files.push(attachment.file);
  for (const file of files) {
    if (file.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')) throw new ImportFailure('unsafe_path', `note.json names ${file}, which escapes the archive`);
    if (!has(file)) throw new ImportFailure('missing_file', `note.json names ${file}, which is not in the archive`);
  }
}
