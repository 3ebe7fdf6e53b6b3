// The live socket's words: the close codes and refusals a client is told, a document's name, and the check that a
// message's Yjs update is one Yjs can read (live.server.ts).
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';

/** Close codes a client sees, with a reason in words. */
export const CLOSE = { malformed: 4400, forbidden: 4403, tooLarge: 4413, gone: 4404, tooMany: 4429 } as const;

/**
 * A refusal the client is told in words: Hocuspocus sends an error's `reason` with its permission-denied answer, and
 * closes a connection whose message hook throws with the error's `code` and `reason`.
 */
export function refuse(reason: string, code?: number): Error {
  return Object.assign(new Error(reason), code === undefined ? { reason } : { reason, code });
}

/** Hocuspocus's message types that carry a Yjs sync message (Sync, SyncReply), and the sync steps with an update. */
const SYNC_TYPES = new Set([0, 4]);
const UPDATE_STEPS = new Set([1, 2]);

/** Whether a message's Yjs update (if it carries one) is one Yjs can read. */
export function readable(message: Uint8Array): boolean {
  try {
    const decoder = decoding.createDecoder(message);
    decoding.readVarString(decoder);
    if (!SYNC_TYPES.has(decoding.readVarUint(decoder))) return true;
    if (!UPDATE_STEPS.has(decoding.readVarUint(decoder))) return true;
    Y.decodeUpdate(decoding.readVarUint8Array(decoder));
    return true;
  } catch {
    return false;
  }
}

/** `<team>/<note>/<page id>`, or a refusal. */
export function nameParts(documentName: string): { team: string; note: string; pageId: number } {
  const parts = documentName.split('/');
  const pageId = Number(parts[2]);
  if (parts.length !== 3 || parts[0] === '' || parts[1] === '' || !Number.isSafeInteger(pageId) || pageId < 1) {
    throw refuse(`"${documentName.slice(0, 100)}" does not name a page: a live document is named <team>/<note>/<page id>`);
  }
  return { team: parts[0]!, note: parts[1]!, pageId };
}
