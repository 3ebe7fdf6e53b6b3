// What a file is and how it is answered: its type sniffed from its first bytes (never the client's word), whether a
// browser may show it inline, its Content-Disposition (RFC 6266, with the RFC 8187/5987 `filename*` for names
// that are not ASCII), and the `Range` header (RFC 9110 section 14).
import { fileTypeFromBuffer } from 'file-type';

/** Images a browser shows without running anything (SVG is not among them: it can carry script). */
const SAFE_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp']);

/** The type of a file from its first bytes: a known signature, else UTF-8 text, else opaque bytes. */
export async function sniffType(head: Buffer): Promise<string> {
  const found = await fileTypeFromBuffer(head);
  if (found) return found.mime;
  if (head.length > 0 && looksLikeText(head)) return 'text/plain';
  return 'application/octet-stream';
}

function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  // the head may end inside a character: up to 3 bytes of it may be cut off
  for (let cut = 0; cut <= 3 && cut < head.length; cut += 1) {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // try with one byte fewer
    }
  }
  return false;
}

export function isImage(contentType: string): boolean {
  return SAFE_IMAGES.has(contentType);
}

/** Shown in the browser: safe images and PDF; everything else is downloaded. */
export function isInline(contentType: string): boolean {
  return SAFE_IMAGES.has(contentType) || contentType === 'application/pdf';
}

/** The bytes a header's `Content-Type` says: text is always UTF-8 here (sniffing only calls UTF-8 text text). */
export function contentTypeHeader(contentType: string): string {
  return contentType === 'text/plain' ? 'text/plain; charset=utf-8' : contentType;
}

// RFC 8187 attr-char: ALPHA / DIGIT / "!" / "#" / "$" / "&" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~"
const encodeExtValue = (value: string) => encodeURIComponent(value).replace(/['()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);

/** `inline` or `attachment` with the file's name: an ASCII `filename` for old agents, `filename*` for the real one. */
export function contentDisposition(filename: string, inline: boolean): string {
  const kind = inline ? 'inline' : 'attachment';
  // printable ASCII but `"` and `\` (a quoted-string needs no escapes then); anything else becomes `_`
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  if (fallback === filename) return `${kind}; filename="${filename}"`;
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(filename)}`;
}

export type RangeAnswer = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One `bytes=` range of a file of `size` bytes. A header that does not parse, or asks for several ranges, is
 * ignored (the whole file, as RFC 9110 allows); a range wholly past the end is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return { kind: 'full' };
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'full' };
  const [, first, last] = match as unknown as [string, string, string];
  if (first === '') {
    // the last N bytes
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}
