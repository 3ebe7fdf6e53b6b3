import type { RequestHandler } from 'express';
import { HttpError } from './errors.ts';

// The metadata of an attachment is the one path whose `.json` suffix changes its meaning (bytes vs metadata).
const attachmentMetadata = /^\/api\/v1\/attachments\/[^/]+\.json$/;
// A segment that is nothing but `.json` (`/api/v1/acme/handbook/.json`) is not a suffix: stripping it would route
// the request to the parent path (a DELETE there deletes the whole note), so it names nothing.
const bareJsonSegment = /(^|\/)\.json(\/|$)/i;

/** Rails-style `.json` suffixes: `/api/v1/notes.json` is `/api/v1/notes`. */
export const stripJsonSuffix: RequestHandler = (req, _res, next) => {
  const queryAt = req.url.indexOf('?');
  const path = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
  if (bareJsonSegment.test(path)) {
    next(new HttpError(404, 'not_found', `nothing at ${path}`));
    return;
  }
  if (path.endsWith('.json') && !attachmentMetadata.test(path)) {
    req.url = path.slice(0, -'.json'.length) + (queryAt === -1 ? '' : req.url.slice(queryAt));
  }
  next();
};
