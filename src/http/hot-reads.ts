// Hot reads, served before the API's router: a GET whose whole answer is kept for its token and path
// (src/cache/memory.ts, kept by the operation that declares it, src/cache/caching.ts) is answered from memory, when
// everything else the API would do for it can be done from memory too: its token is cached with nothing to record
// (auth.ts, callerFromMemory). Its budget is spent as rateLimit spends it (a lease taken when this process's is used
// up), once: a request that goes on carries its verdict. Otherwise (a token to look up, a query string, a `.json`
// suffix, nothing kept) the request goes on through the router and its operation, which answers the same bytes and
// keeps them.
//
// A change committed by another process is heard when PostgreSQL delivers its notification, normally well under a
// millisecond after the commit, but a request can arrive first (a client that wrote through process A and reads
// through B at once). So before anything kept is served to a GET, the feed is synced (ChangeFeed.sync: one round trip
// on the listening connection, shared by every request waiting, run beside the request's scope statement): whatever
// was committed before the request arrived is heard, and dropped, first. Changes made through this process, and
// every change on the embedded database, are heard before the request that made them is answered.
import type { RequestHandler } from 'express';
import { hotReadKey, type HotReads } from '../cache/memory.ts';
import { callerFromMemory } from './auth.ts';
import { ifNoneMatchHits } from './etag.ts';
import { setRateLimitHeaders, spendOnce, type SharedBudget } from './rate-limit.ts';

/** Serves a GET from the hot reads when one is kept for its token and path and nothing needs a statement. */
export function serveHotReads(hot: HotReads, budget: SharedBudget): RequestHandler {
  return async (req, res, next) => {
    // kept answers are reads of now, of the path as the router sees it: a query string (`?at=`, `?access_token=`)
    // or a `.json` suffix goes the whole way
    const url = req.url;
    if (req.method !== 'GET' || !hot.live || !url.startsWith('/api/') || url.includes('?') || url.endsWith('.json')) return next();
    const caller = callerFromMemory(req.headers.authorization, Date.now());
    if (!caller) return next();
    const key = hotReadKey(caller.tokenId, url);
    if (!hot.get(key)) return next();
    // the request is spent from the token's budget once, here (rateLimit takes this verdict if the request goes on);
    // a change committed through another process before this request arrived is heard first (it drops the entry)
    const [verdict] = await Promise.all([spendOnce(budget, req, res, caller.tokenId), hot.sync()]);
    const entry = verdict.exceeded ? undefined : hot.get(key);
    if (!entry) return next();
    req.caller = caller;
    setRateLimitHeaders(res, verdict);
    res.locals.operationId = 'getPage';
    if (ifNoneMatchHits(req.headers['if-none-match'], entry.etag)) {
      res.status(304).setHeader('ETag', entry.etag);
      res.end();
      return;
    }
    res.status(200).set({ 'Content-Type': 'application/json; charset=utf-8', ETag: entry.etag }).send(entry.body);
  };
}
