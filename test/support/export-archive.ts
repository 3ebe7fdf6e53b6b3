// Note export archives for the import tests, made from the documented format (docs/note-export.schema.json) with
// yazl: a note.json and the files it names. `sampleExport` is a small note with something of everything (versions by
// several authors, one of them unknown here, moves, a deleted page, issues with tags and comments, comments with
// mentions, requests, an attachment); tests change it to make bad archives.
import { createHash } from 'node:crypto';
import yazl from 'yazl';
import type { NoteExport } from '../../src/modules/imports/note-json.ts';

export type ArchiveFiles = Map<string, Buffer | string>;

// a 1x1 PNG
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** Zips note.json and the files (`extra`: more entries, e.g. ones to patch into bad names). */
export async function zipExport(json: unknown, files: ArchiveFiles, options: { compress?: boolean } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(typeof json === 'string' ? json : JSON.stringify(json, null, 2)), 'note.json');
  for (const [name, data] of files) zip.addBuffer(Buffer.from(data), name, { compress: options.compress ?? true });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const t = (minute: number) => new Date(Date.UTC(2024, 2, 4, 9, minute, 0)).toISOString();

/** A small note of everything; `users`: usernames that exist on the server (the others are unknown there). */
export function sampleExport(users: { manager: string; member: string }, attachment: Buffer = PNG, ghost = 'ghost-writer'): { json: NoteExport; files: ArchiveFiles } {
  const manager = { username: users.manager, name: 'The Manager' };
  const member = { username: users.member, name: 'A Member' };
  const unknown = { username: ghost, name: 'Ghost Writer' };
  const files: ArchiveFiles = new Map();
  const version = (page: number, index: number, title: string, author: typeof manager, minute: number, extra: { request?: number; merged_from_base?: number } = {}) => {
    const file = `pages/${page}/${index}.html`;
    files.set(file, `<p>${title}, version ${index}</p>`);
    return { version: index, title, content_file: file, author, created_at: t(minute), request: extra.request ?? null, merged_from_base: extra.merged_from_base ?? null, via_app: null };
  };
  const comment = (body: string, author: typeof manager, minute: number, mentions: string[] = []) =>
    ({ body, author, mentions, created_at: t(minute), updated_at: t(minute), via_app: null });
  files.set('requests/2/1.html', '<p>Home, as proposed</p>');
  files.set('requests/4/1.html', '<p>A new page, proposed</p>');
  files.set(`attachments/${sha256(attachment)}`, attachment);
  const json: NoteExport = {
    format: 'notes-service/note-export',
    format_version: 1,
    exported_at: t(59),
    note: {
      name: 'handbook', title: 'The handbook', description: '<p>How we work</p>', is_private: true, format: 'html', share: 'none',
      is_time_track: false, created_at: t(0), updated_at: t(30), author: manager, forked_from: null, cover_page: 101,
    },
    pages: [
      {
        id: 101, created_at: t(1), unversioned_content_file: null,
        versions: [version(101, 1, 'Home v1', manager, 1), version(101, 2, 'Home', unknown, 2), version(101, 3, 'Home', member, 20, { request: 2 })],
        places: [
          { since: t(1), parent: null, position: 0, title: 'Home v1', present: true },
          { since: t(2), parent: null, position: 0, title: 'Home', present: true },
        ],
        comments: [comment('<p>Nice, @someone</p>', manager, 5, [users.member, ghost])],
      },
      {
        id: 102, created_at: t(3), unversioned_content_file: null,
        versions: [version(102, 1, 'Child', member, 3)],
        places: [
          { since: t(3), parent: null, position: 1, title: 'Child', present: true },
          { since: t(4), parent: 101, position: 0, title: 'Child', present: true },
        ],
        comments: [],
      },
      {
        id: 103, created_at: t(6), unversioned_content_file: null,
        versions: [version(103, 1, 'Gone', unknown, 6), version(103, 2, 'Gone soon', manager, 7)],
        places: [
          { since: t(6), parent: 101, position: 1, title: 'Gone', present: true },
          { since: t(7), parent: 101, position: 1, title: 'Gone soon', present: true },
          { since: t(8), parent: 101, position: 1, title: 'Gone soon', present: false },
        ],
        comments: [comment('<p>on a page deleted since</p>', member, 7)],
      },
    ],
    tags: [{ name: 'bug', created_at: t(9) }, { name: 'docs', created_at: t(9) }],
    issues: [
      {
        index: 3, title: 'Write the intro', description: '<p>soon</p>', is_done: false, position: 0, rate: 1.5, author: unknown, assignee: member,
        tags: ['docs', 'bug'], created_at: t(10), updated_at: t(11), via_app: null, comments: [comment('<p>on it</p>', member, 11)],
      },
      {
        index: 5, title: 'Done thing', description: '', is_done: true, position: 1, rate: 0, author: manager, assignee: unknown,
        tags: [], created_at: t(12), updated_at: t(13), via_app: 'Some app', comments: [],
      },
    ],
    comments: [comment('<p>a note comment</p>', unknown, 14)],
    requests: [
      {
        index: 2, status: 'merged', is_wip: false, description: 'Better home', author: member, from: { team: 'elsewhere', note: 'handbook-fork' },
        created_at: t(15), updated_at: t(20), closed_at: null, merged_at: t(20), merged_by: manager, via_app: null,
        pages: [{ type: 'update', path: 'Home', page: 101, base_version: 2, title: 'Home', content_file: 'requests/2/1.html', diff: '<div class="diff"></div>', merged: true, created_at: t(15) }],
        attachments: [sha256(attachment)],
        comments: [comment('<p>why this home?</p>', manager, 17)],
      },
      // no `comments`: as an export made before requests had comments writes it (still imported)
      {
        index: 4, status: 'opened', is_wip: false, description: 'A new page', author: unknown, from: null,
        created_at: t(21), updated_at: t(21), closed_at: null, merged_at: null, merged_by: null, via_app: null,
        pages: [{ type: 'create', path: 'New', page: null, base_version: null, title: 'New', content_file: 'requests/4/1.html', diff: '<div class="diff"></div>', merged: false, created_at: t(21) }],
        attachments: [],
      },
    ],
    // a type that lies: an import sniffs the bytes, as an upload does
    attachments: [{ filename: 'pixel.png', content_type: 'text/html', byte_size: attachment.length, sha256: sha256(attachment), file: `attachments/${sha256(attachment)}`, author: unknown, created_at: t(16) }],
  };
  return { json, files };
}

