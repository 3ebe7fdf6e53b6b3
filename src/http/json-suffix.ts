import type { RequestHandler } from 'express';

// The metadata of an attachment is the one path whose `.json` suffix changes its meaning (bytes vs metadata).
const attachmentMetadata = /^\/api\/v1\/attachments\/[^/]+\.json$/;

/** Rails-style `.json` suffixes: `/api/v1/notes.json` is `/api/v1/notes`. */
export const stripJsonSuffix: RequestHandler = (req, _res, next) => {
  const queryAt = req.url.indexOf('?');
  const path = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
  if (path.endsWith('.json') && !attachmentMetadata.test(path)) {
    req.url = path.slice(0, -'.json'.length) + (queryAt === -1 ? '' : req.url.slice(queryAt));
  }
  next();
};
