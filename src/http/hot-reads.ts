// Hot reads served before routing: a GET whose whole answer is kept for its token and path (src/cache/memory.ts,
// kept by the operation that declares it, src/cache/caching.ts) is answered from memory.
//
// A change committed by another process is heard when PostgreSQL delivers its notification, normally well under a
// millisecond after the commit, but a request can arrive first (a client that wrote through process A and reads
// through B at once). So before anything kept is served to a GET, the feed is synced (ChangeFeed.sync: one round trip
// on the listening connection, shared by every request waiting, run beside the request's scope statement): whatever
// was committed before the request arrived is heard, and dropped, first. Changes made through this process, and
// every change on the embedded database, are heard before the request that made them is answered.
import type { RequestHandler } from 'express';
import { hotReadKey, type HotReads } from '../cache/memory.ts';
import { ifNoneMatchHits } from './etag.ts';
import { readsThePast } from './invoke.ts';

/** Serves a GET from the hot reads when one is kept for this token and path; otherwise the request goes on. */
export function serveHotReads(hot: HotReads): RequestHandler {
  return async (req, res, next) => {
    // kept answers are reads of now: a read of the past (`?at=`) goes on to its operation
    if (req.method !== 'GET' || !req.caller || !hot.live || readsThePast(req.query)) return next();
    const key = hotReadKey(req.caller.tokenId, req.path);
    if (!hot.get(key)) return next();
    // a change committed through another process before this request arrived is heard first (it drops the entry)
    await hot.sync();
    const entry = hot.get(key);
    if (!entry) return next();
    res.locals.operationId = 'getPage';
    if (ifNoneMatchHits(req.get('if-none-match'), entry.etag)) {
      res.status(304).set('ETag', entry.etag).end();
      return;
    }
    res.status(200).set({ 'Content-Type': 'application/json; charset=utf-8', ETag: entry.etag }).send(entry.body);
  };
}
