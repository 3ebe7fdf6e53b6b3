// The live editor's schema, shared by the browser's editor (src/modules/web/editor) and the server that turns a live
// document into the page's HTML and back: TipTap's starter kit with the extensions the sanitizer's HTML needs
// (images, tables). Undo history is left to the collaboration extension in the browser.
import type { Extensions } from '@tiptap/core';
import StarterKit from '@tiptap/starter-kit';
import Image from '@tiptap/extension-image';
import { TableKit } from '@tiptap/extension-table';

/** The field of the Yjs document that holds the page's content (the collaboration extension's default). */
export const LIVE_FIELD = 'default';

export function editorExtensions(): Extensions {
  return [
    StarterKit.configure({
      undoRedo: false,
      link: { openOnClick: false, autolink: false, HTMLAttributes: { rel: 'nofollow noopener', target: null }, protocols: [] },
    }),
    Image.configure({ inline: true }),
    TableKit.configure({ table: { resizable: false } }),
  ];
}
