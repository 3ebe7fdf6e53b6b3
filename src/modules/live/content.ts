// A page's HTML and the live document, both ways: the page's (sanitized) HTML parsed into the editor's ProseMirror
// schema and written into a Yjs document, and the document serialized back to HTML. One DOM (happy-dom, scripts
// off) serves every conversion of the process.
//
// The schema drops what it does not know, so a page opens live only when its HTML survives the round trip unchanged
// in meaning (`meaningOf` of both sides equal); any other page opens in the HTML text area with the reason.
import { getSchema } from '@tiptap/core';
import { DOMParser, DOMSerializer, type Node as PmNode, type Schema } from '@tiptap/pm/model';
import { createHash } from 'node:crypto';
import { prosemirrorToYXmlFragment, updateYFragment, yXmlFragmentToProseMirrorRootNode } from '@tiptap/y-tiptap';
import { Window } from 'happy-dom';
import * as Y from 'yjs';
import { sanitizeHtml } from '../notes/description.ts';
import { meaningOf } from './meaning.ts';
import { editorExtensions, LIVE_FIELD } from './schema.ts';

let shared: { window: Window; schema: Schema; parser: DOMParser; serializer: DOMSerializer } | undefined;

function tools() {
  if (!shared) {
    const window = new Window({
      settings: {
        disableJavaScriptEvaluation: true,
        disableJavaScriptFileLoading: true,
        disableCSSFileLoading: true,
        disableIframePageLoading: true,
        disableComputedStyleRendering: true,
      },
    });
    const schema = getSchema(editorExtensions());
    shared = { window, schema, parser: DOMParser.fromSchema(schema), serializer: DOMSerializer.fromSchema(schema) };
  }
  return shared;
}

/** The parsed body of `html` (a detached element of the shared DOM). */
export function bodyOf(html: string): HTMLElement {
  const { window } = tools();
  const body = window.document.createElement('div');
  body.innerHTML = html;
  // a browser's parser drops the line break right after <pre> (it never shows); happy-dom keeps it, and the editor
  // took it for text, which its own <pre><code> then showed as a blank first line
  for (const pre of Array.from(body.querySelectorAll('pre'))) {
    const first = pre.firstChild;
    if (first?.nodeType === 3 && /^\r?\n/.test(first.textContent ?? '')) first.textContent = first.textContent!.replace(/^\r?\n/, '');
  }
  return body as unknown as HTMLElement;
}

/** The editor's document of `html` (as the page view shows it: sanitized first). */
export function nodeOf(html: string): PmNode {
  const { parser } = tools();
  return parser.parse(bodyOf(sanitizeHtml(html)) as never);
}

/** A ProseMirror document as HTML. */
export function htmlOfNode(node: PmNode): string {
  const { window, serializer } = tools();
  const wrap = window.document.createElement('div');
  serializer.serializeFragment(node.content, { document: window.document as never }, wrap as never);
  return wrap.innerHTML;
}

export type LiveForm = { editable: true; html: string } | { editable: false; reason: string };

/**
 * The largest page the live editor opens: trying a page in the editor's schema takes the server's thread for a time
 * that grows with the page (about half a second at this size on a loaded 2-core machine), at every first edit view
 * and connection of a version. A larger page opens in the HTML text area.
 */
export const LIVE_MAX_CONTENT_BYTES = 128 * 1024;

/** What the last contents tried came to, by their hash: a page's views and connections try it once a version. */
const tried = new Map<string, { editable: boolean; reason: string }>();
const TRIED_KEPT = 500;

/** Whether `content` opens in the live editor, and if not why (liveFormOf, remembered for the last few hundred). */
export function editabilityOf(content: string): { editable: boolean; reason: string } {
  if (Buffer.byteLength(content, 'utf8') > LIVE_MAX_CONTENT_BYTES) {
    return { editable: false, reason: `the page is larger than the live editor opens (${LIVE_MAX_CONTENT_BYTES / 1024} KiB)` };
  }
  const key = createHash('sha256').update(content).digest('base64');
  const known = tried.get(key);
  if (known) {
    tried.delete(key);
    tried.set(key, known);
    return known;
  }
  const form = liveFormOf(content);
  const answer = form.editable ? { editable: true, reason: '' } : { editable: false, reason: form.reason };
  tried.set(key, answer);
  if (tried.size > TRIED_KEPT) tried.delete(tried.keys().next().value!);
  return answer;
}

/**
 * Whether `content` may open in the live editor: `html` is what the editor makes of it (what a save writes when
 * nobody changed anything), else the reason it opens in the text area. Tried through a Yjs document, as the live
 * document holds it: Yjs keeps the marks of text only, so a link around an image, which the editor's schema has,
 * would be lost there.
 */
export function liveFormOf(content: string): LiveForm {
  const html = editorHtml(content);
  const before = meaningOf(bodyOf(sanitizeHtml(content)));
  const after = meaningOf(bodyOf(html));
  if (before === after) return { editable: true, html };
  return { editable: false, reason: `the editor cannot keep all of this page's HTML (${firstDifference(before, after)})` };
}

function firstDifference(before: string, after: string): string {
  let at = 0;
  while (at < before.length && before[at] === after[at]) at += 1;
  const start = Math.max(0, before.lastIndexOf('<', at));
  const shown = before.slice(start, start + 60);
  return shown === '' ? 'content would be added' : `it would change ${JSON.stringify(shown)}`;
}

/**
 * A new Yjs document holding `html`, written as one Yjs client whose id is derived from `seed` and the HTML: the
 * same page built twice from the same HTML (by two processes, or again after a crash before its state was kept)
 * is the same Yjs items, which merge as one instead of holding the text twice.
 */
export function yDocOf(html: string, seed = ''): Y.Doc {
  const { schema } = tools();
  const doc = new Y.Doc();
  // a Yjs client id is a 32-bit unsigned number; a browser draws its own at random
  doc.clientID = createHash('sha256').update(seed).update('\n').update(html).digest().readUInt32BE(0);
  prosemirrorToYXmlFragment(nodeOf(html), doc.getXmlFragment(LIVE_FIELD));
  return doc;
}

/** The live document's content as the editor's HTML. */
export function htmlOfYDoc(doc: Y.Doc): string {
  const { schema } = tools();
  return htmlOfNode(yXmlFragmentToProseMirrorRootNode(doc.getXmlFragment(LIVE_FIELD), schema));
}

/** A page's content as the editor's HTML (what a document built from it holds, read back from that document). */
export function editorHtml(content: string): string {
  const doc = yDocOf(content);
  try {
    return htmlOfYDoc(doc);
  } finally {
    doc.destroy();
  }
}

/**
 * Makes the live document hold `html` by the least change (what is equal stays the same Yjs items, so the cursors
 * and typing of whoever is editing elsewhere in it are kept), as one transaction with `origin`.
 */
export function replaceContent(doc: Y.Doc, html: string, origin: unknown): void {
  const node = nodeOf(html);
  doc.transact(() => {
    updateYFragment(doc as never, doc.getXmlFragment(LIVE_FIELD), node, { mapping: new Map(), isOMark: new Map() });
  }, origin);
}
