// The Markdown form of an export (`?format=markdown`, docs/note-export.md): the note's pages as they are now, one
// Markdown file each, in folders of the tree: a page with children is a folder of its name holding its own file (of
// the same name) and its children. Front matter (YAML) gives the title, the author of the current version and when
// the page was last updated. HTML becomes Markdown with turndown and its GFM plugin (tables, strikethrough, task
// lists); what Markdown cannot say stays as HTML in the file. No history, no attachments: for people who leave.
import type { EntityManager } from '@mikro-orm/postgresql';
import TurndownService from 'turndown';
import gfmPlugins from 'turndown-plugin-gfm';
import { BATCH_TEXT_BYTES, markdownPages, pageSizes, pageTree, type MarkdownPageRow, type TreeRow } from './export.repository.ts';
import type { ZipWriter } from './zip.ts';

let converter: TurndownService | undefined;
function turndown(): TurndownService {
  if (!converter) {
    converter = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', hr: '---' });
    converter.use(gfmPlugins.gfm);
  }
  return converter;
}

export function htmlToMarkdown(html: string): string {
  return turndown().turndown(html);
}

// ---- safe, unique names

/** Names Windows refuses whatever their extension. */
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;
const MAX_NAME_BYTES = 100;

/** A page title as a file or folder name any system accepts: no separators, controls or reserved characters. */
export function safeName(title: string): string {
  let name = title.normalize('NFC').replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, '_').replace(/\s+/g, ' ').trim();
  name = name.replace(/^[.\s]+|[.\s]+$/g, '');
  while (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) name = [...name].slice(0, -1).join('');
  name = name.trim();
  if (name === '') name = 'untitled';
  if (RESERVED.test(name)) name = `${name}_`;
  return name;
}

/** Names unique within one folder, compared without case (case-insensitive file systems): "Setup", "Setup (2)". */
class Folder {
  private readonly taken = new Set<string>();

  constructor(reserved: readonly string[] = []) {
    for (const name of reserved) this.taken.add(name.toLowerCase());
  }

  /** A name for `base` (its `.md` file, or its folder and the file inside it) not yet used here. */
  claim(base: string): string {
    for (let n = 1; ; n += 1) {
      const name = n === 1 ? base : `${base} (${n})`;
      if (!this.taken.has(name.toLowerCase()) && !this.taken.has(`${name}.md`.toLowerCase())) {
        this.taken.add(name.toLowerCase());
        this.taken.add(`${name}.md`.toLowerCase());
        return name;
      }
    }
  }
}

/** Each live page's file in the zip, in tree order (a page before its children, siblings by position). */
export function markdownPaths(tree: readonly TreeRow[]): { id: number; path: string; title: string }[] {
  const children = new Map<number | null, TreeRow[]>();
  const ids = new Set(tree.map((row) => row.id));
  for (const row of tree) {
    const parent = row.parent_id !== null && ids.has(row.parent_id) ? row.parent_id : null;
    const siblings = children.get(parent) ?? [];
    siblings.push(row);
    children.set(parent, siblings);
  }
  for (const siblings of children.values()) siblings.sort((a, b) => a.position - b.position || a.id - b.id);
  const paths: { id: number; path: string; title: string }[] = [];
  const walk = (parent: number | null, folder: string, names: Folder) => {
    for (const row of children.get(parent) ?? []) {
      const name = names.claim(safeName(row.title));
      const kids = children.get(row.id);
      if (kids && kids.length > 0) {
        // the folder holds the page's own file, named as the folder: its children may not take that name
        paths.push({ id: row.id, path: `${folder}${name}/${name}.md`, title: row.title });
        walk(row.id, `${folder}${name}/`, new Folder([name]));
      } else {
        paths.push({ id: row.id, path: `${folder}${name}.md`, title: row.title });
      }
    }
  };
  walk(null, '', new Folder());
  return paths;
}

/** YAML front matter: strings double-quoted as JSON writes them, which YAML reads as the same strings. */
export function frontMatter(fields: { title: string; author: string | null; updated: string }): string {
  const lines = ['---', `title: ${JSON.stringify(fields.title)}`];
  if (fields.author !== null) lines.push(`author: ${JSON.stringify(fields.author)}`);
  lines.push(`updated: ${JSON.stringify(fields.updated)}`, '---', '');
  return lines.join('\n');
}

/** Writes the markdown form into `zip`: the pages' contents read in batches of bounded text, in tree order. */
export async function markdownExport(em: EntityManager, noteId: number, zip: ZipWriter): Promise<void> {
  const [tree, sizes] = await Promise.all([pageTree(em, noteId), pageSizes(em, noteId)]);
  const paths = markdownPaths(tree);
  for (let start = 0; start < paths.length;) {
    let end = start;
    let bytes = 0;
    do {
      bytes += sizes.get(paths[end]!.id) ?? 0;
      end += 1;
    } while (end < paths.length && bytes + (sizes.get(paths[end]!.id) ?? 0) <= BATCH_TEXT_BYTES);
    const batch = paths.slice(start, end);
    const rows = new Map<number, MarkdownPageRow>((await markdownPages(em, noteId, batch.map((entry) => entry.id))).map((row) => [row.id, row]));
    for (const entry of batch) {
      const row = rows.get(entry.id);
      if (!row) continue; // deleted since the tree was read
      const body = htmlToMarkdown(row.content);
      await zip.add(entry.path, `${frontMatter({ title: entry.title, author: row.author, updated: row.updated_at })}\n${body}\n`);
    }
    start = end;
  }
}
