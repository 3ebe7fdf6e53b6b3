// Conditional GETs for every JSON answer of the API: each carries an ETag, and a request whose If-None-Match names
// it is answered 304 with no body. Operations that know their version set a strong ETag themselves (a page:
// `pageEtag`, which the hot reads keep; an attachment: the SHA-256 of its bytes); any other answer gets a weak ETag,
// a hash of the very bytes sent (`W/"<sha1, base64url>"`), so it changes whenever the answer does.
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

/** RFC 9110 section 13.1.2: `*`, or a list of entity tags compared weakly (W/"x" matches "x"). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.replace(/^W\//, '');
  for (const raw of header.split(',')) {
    const value = raw.trim();
    if (value === '*' || value.replace(/^W\//, '') === opaque) return true;
  }
  return false;
}

export function weakEtagOf(parts: readonly Buffer[]): string {
  const hash = createHash('sha1');
  for (const part of parts) hash.update(part);
  return `W/"${hash.digest('base64url')}"`;
}

/**
 * For a GET (and a HEAD, routed as GET): sets the answer's ETag (the one already set, or a weak one of `parts`)
 * and answers 304 when If-None-Match names it. True when the answer is done.
 */
export function answeredNotModified(req: Request, res: Response, parts: readonly Buffer[]): boolean {
  if (req.method !== 'GET') return false;
  let etag = res.getHeader('ETag');
  if (typeof etag !== 'string') {
    etag = weakEtagOf(parts);
    res.setHeader('ETag', etag);
  }
  if (!ifNoneMatchHits(req.get('if-none-match'), etag)) return false;
  res.status(304).end();
  return true;
}
