// A write made elsewhere, merged into an open live document: the document's unsaved typing is kept, what the write
// changed elsewhere comes in, and where both changed the same words the typing wins in the document (the write
// stays in the page's history as its own version, and the next save is a version over it).
import * as Y from 'yjs';
import { MergeBoundExceeded, mergeText, resolveChunks } from '../text/merge3.ts';
import { htmlOfYDoc, replaceContent } from './content.ts';

/** Origin of the server's own changes to a document: they are the stored page, not a change to save. */
export const STORED_ORIGIN = { source: 'local', skipStoreHooks: true } as const;

/**
 * `base`: the editor's HTML of the version the document stands on; `stored`: of the version now stored. Returns
 * whether the document changed.
 */
export function mergeLive(document: Y.Doc, base: string, stored: string): boolean {
  if (stored === base) return false;
  const current = htmlOfYDoc(document);
  let merged: string;
  try {
    merged = current === base ? stored : resolveChunks(mergeText(base, current, stored), 'ours');
  } catch (error) {
    if (error instanceof MergeBoundExceeded) return false;
    throw error;
  }
  if (merged === current) return false;
  replaceContent(document, merged, STORED_ORIGIN);
  return true;
}

/** Applies a kept state to a new document; false (the document untouched) when it cannot be read. */
export function tryApply(document: Y.Doc, update: Uint8Array): boolean {
  try {
    const probe = new Y.Doc();
    Y.applyUpdate(probe, update);
    probe.destroy();
  } catch {
    return false;
  }
  Y.applyUpdate(document, update, STORED_ORIGIN);
  return true;
}
