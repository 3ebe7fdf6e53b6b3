// Serialising answers. A presented object that a response embeds many times (the team of every note in a list, the
// note of every page, the page of every version) is marked `shared` by its presenter: it is serialised once per
// response and its JSON copied in wherever it appears, instead of walking it again each time (a list of 100 notes
// of a 200-member team embeds 20,000 users).
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';

const sharedObjects = new WeakSet<object>();
// A presented object is never changed once presented, so a shared object's JSON is the same every time it is
// serialised: kept with the object (and gone with it), an object kept across requests (a team's presented members)
// is serialised once in its life.
const sharedTexts = new WeakMap<object, string>();
const sharedBuffers = new WeakMap<object, Buffer>();

/** A shared object's JSON; kept with it unless `keep` is false (then made anew where it was not kept before). */
function sharedText(item: object, keep = true): string {
  let text = sharedTexts.get(item);
  if (text === undefined) {
    text = toJson(item, keep);
    if (keep) sharedTexts.set(item, text);
  }
  return text;
}

function sharedBytes(item: object): Buffer {
  let bytes = sharedBuffers.get(item);
  if (bytes === undefined) {
    bytes = ownMemory(Buffer.from(sharedText(item), 'utf8'));
    sharedBuffers.set(item, bytes);
  }
  return bytes;
}

/**
 * The bytes in memory of their own, for bytes that are kept: a small Buffer is a slice of a shared 8 KiB pool, and
 * one kept slice keeps its whole pool alive.
 */
function ownMemory(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}

/** Marks a presented object as embedded in several places of one response. */
export function shared<T extends object>(value: T): T {
  sharedObjects.add(value);
  return value;
}

const bytesBefore = new WeakMap<object, Buffer>();

/**
 * Serialises a presented object now and keeps its bytes with it, for answers served again (cached views). Only those
 * bytes are kept: the JSON of the shared objects it embeds is reused where it was kept before, but made for this
 * answer alone otherwise (a page's note and team are presented per request, and an answer kept in a cache would
 * otherwise hold their JSON two or three times over beside its own bytes).
 */
export function serialiseOnce(value: object): Buffer {
  let bytes = bytesBefore.get(value);
  if (bytes === undefined) {
    const parts = toJsonParts(value, false);
    bytes = ownMemory(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    bytesBefore.set(value, bytes);
  }
  return bytes;
}

/**
 * The UTF-8 bytes of JSON.stringify(value), built so that a shared object's bytes are encoded once and copied into
 * every place it appears (a list of 100 notes that all embed one large team is 100 copies of one buffer, not 100
 * walks and encodings of the team), and an object serialised before is not serialised again.
 */
export function toJsonBytes(value: unknown): Buffer {
  const parts = toJsonParts(value);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/**
 * The same bytes as pieces, in order: a shared object's buffer is one piece wherever it appears (the same Buffer
 * object each time), so an answer can be written without ever being joined, and many such answers in flight at once
 * hold one copy of the team, not one each.
 */
export function toJsonParts(value: unknown, keepShared = true): Buffer[] {
  if (value !== null && typeof value === 'object') {
    const before = bytesBefore.get(value);
    if (before !== undefined) return [before];
  }
  const { text, shared, marker } = skeleton(value);
  if (shared.length === 0) return [Buffer.from(text, 'utf8')];
  const pieces = shared.map(keepShared ? sharedBytes : (item) => sharedBuffers.get(item) ?? Buffer.from(sharedTexts.get(item) ?? toJson(item, false), 'utf8'));
  const parts: Buffer[] = [];
  const pattern = placeholderPattern(marker);
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    parts.push(Buffer.from(text.slice(at, match.index), 'utf8'), pieces[Number(match[1])]!);
    at = match.index + match[0].length;
  }
  parts.push(Buffer.from(text.slice(at), 'utf8'));
  return parts;
}

function placeholderPattern(marker: string): RegExp {
  // placeholders are strings, so they come out quoted and with their NUL escaped; a client's own text can never hold
  // the random marker
  return new RegExp(`"${JSON.stringify(marker).slice(1, -1).replace(/\\/g, '\\\\')}(\\d+)"`, 'g');
}

/** The value's JSON with a placeholder for each shared object at its first level, and those objects' JSON. */
function skeleton(value: unknown): { text: string; shared: object[]; marker: string } {
  const marker = `\u0000${randomBytes(8).toString('hex')}:`;
  const shared: object[] = [];
  const indexes = new Map<object, number>();
  const replacer = function (this: unknown, key: string, item: unknown): unknown {
    if (key === '' || item === null || typeof item !== 'object' || !sharedObjects.has(item)) return item;
    let index = indexes.get(item);
    if (index === undefined) {
      index = shared.length;
      shared.push(item);
      indexes.set(item, index);
    }
    return `${marker}${index}`;
  };
  return { text: JSON.stringify(value, replacer), shared, marker };
}

/** JSON.stringify, with each shared object serialised once (and its JSON kept with it, unless `keep` is false). */
export function toJson(value: unknown, keep = true): string {
  const { text, shared, marker } = skeleton(value);
  return shared.length === 0 ? text : text.replace(placeholderPattern(marker), (_, index: string) => sharedText(shared[Number(index)]!, keep));
}

/** Pieces smaller than this are joined before they are written to a compressor. */
const COMPRESSED_WRITE_BYTES = 1024 * 1024;

/**
 * Writes an answer's pieces (toJsonParts) and ends it, never joining the whole answer into one buffer: a piece
 * shared by every item (the note embedded in each of 100 comments) stays one buffer however often it is written.
 * Uncompressed, the pieces go out in one writev. Into a compressor (app.ts), where every write is its own trip
 * through the thread pool, small pieces are joined up to 1 MiB per write, and the next write waits until the
 * compressor has taken the last one (its `drain`), so a large answer to a slow client is not queued whole a second
 * time. A client that goes away ends the writing.
 */
export async function writeParts(res: Writable, parts: readonly Buffer[], compressed: boolean): Promise<void> {
  if (!compressed) {
    res.cork();
    for (const part of parts) res.write(part);
    res.end();
    res.uncork();
    return;
  }
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const write = async (bytes: Buffer) => {
    if (res.write(bytes) || res.destroyed) return;
    await Promise.race([once(res, 'drain'), once(res, 'close')]);
  };
  const flush = async () => {
    if (pending.length === 0) return;
    const bytes = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await write(bytes);
  };
  for (const part of parts) {
    if (res.destroyed) return;
    if (part.length >= COMPRESSED_WRITE_BYTES) {
      await flush();
      await write(part);
      continue;
    }
    pending.push(part);
    pendingBytes += part.length;
    if (pendingBytes >= COMPRESSED_WRITE_BYTES) await flush();
  }
  await flush();
  if (!res.destroyed) res.end();
}
