// Hot reads: a GET whose whole answer is kept for its token and path (src/cache/memory.ts, kept by the operation that
// declares it, src/cache/caching.ts) is answered from memory, when everything else the API would do for it can be
// done from memory too: its token is cached with nothing to record (auth.ts, callerFromMemory). Its budget is spent
// as rateLimit spends it (a lease taken when this process's is used up), once: a request that goes on carries its
// verdict. Otherwise (a token to look up, a query string, a `.json` suffix, nothing kept) the request goes on through
// the router and its operation, which answers the same bytes and keeps them.
//
// They are answered in one of two places, by the same code (`answerHot`):
//   - `hotReadListener`, the server's request listener, ahead of express: a request that needs nothing express gives
//     it (CORS off, no answer compression could touch) is answered on node's own request and
//     response, with the same id, log line, measure and headers the app would give it (a share of a hot read's time
//     is express's dispatch: the prototypes, the router's layers);
//   - `serveHotReads`, the app's layer after CORS and compression, for the others.
// A request the listener found no answer for (its entry dropped while it waited) goes to the app as it came: the id,
// log line and measure are the app's, and only the verdict of its budget travels with it (`res.locals`).
//
// A change committed by another process is heard when PostgreSQL delivers its notification, normally well under a
// millisecond after the commit, but a request can arrive first (a client that wrote through process A and reads
// through B at once). So before anything kept is served to a GET, the feed is synced (ChangeFeed.sync: one round trip
// on the listening connection, shared by every request waiting, run beside the request's scope statement): whatever
// was committed before the request arrived is heard, and dropped, first. Changes made through this process, and
// every change on the embedded database, are heard before the request that made them is answered.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { hotReadKey, type HotRead, type HotReads } from '../cache/memory.ts';
import type { Caller } from '../modules/access/caller.ts';
import { callerFromMemory } from './auth.ts';
import { ifNoneMatchHits } from './etag.ts';
import { setRateLimitHeaders, spendOnce, type SharedBudget } from './rate-limit.ts';

/** What answering a hot read takes: the kept answers, the budget rateLimit spends, and an entity manager for a lease. */
export type HotReadDeps = { hot: HotReads; budget: SharedBudget; em: () => EntityManager };

/** compression's threshold (its default, 1 KiB): a shorter answer is sent as it is, with `Vary: Accept-Encoding`. */
const COMPRESSION_THRESHOLD = 1024;

type Found = { caller: Caller; key: string; entry: HotRead };
type Raw = IncomingMessage & { caller?: Caller };
type RawResponse = ServerResponse & { locals?: Record<string, unknown> };

/** The kept answer a GET may get, found without a statement, or undefined: it goes the whole way. */
function findHot(req: IncomingMessage, hot: HotReads): Found | undefined {
  // kept answers are reads of now, of the path as the router sees it: a query string (`?at=`, `?access_token=`)
  // or a `.json` suffix goes the whole way
  const url = req.url ?? '';
  if (req.method !== 'GET' || !hot.live || !url.startsWith('/api/') || url.includes('?') || url.endsWith('.json')) return undefined;
  const caller = callerFromMemory(req.headers.authorization, Date.now());
  if (!caller) return undefined;
  const key = hotReadKey(caller.tokenId, url);
  const entry = hot.get(key);
  return entry ? { caller, key, entry } : undefined;
}

/**
 * Spends the request's budget and hears what was committed before it arrived, then answers it from memory if its
 * entry is still kept and the budget not spent; false: nothing was written, the request goes on (rateLimit takes
 * the verdict from `res.locals`). `before` runs just before the answer is written (told whether it is a 304).
 */
async function answerHot(req: Raw, res: RawResponse, found: Found, deps: HotReadDeps, before: (notModified: boolean) => void, fits = (_entry: HotRead) => true): Promise<boolean> {
  // rateLimit's spendOnce takes the request's entity manager, made only when a lease is to be taken
  const spendable = { get em() { return deps.em(); } } as unknown as Request;
  const [verdict] = await Promise.all([spendOnce(deps.budget, spendable, res as Response, found.caller.tokenId), deps.hot.sync()]);
  const entry = verdict.exceeded ? undefined : deps.hot.get(found.key);
  if (!entry || !fits(entry)) return false;
  const notModified = ifNoneMatchHits(req.headers['if-none-match'], entry.etag);
  before(notModified);
  req.caller = found.caller;
  res.locals!.operationId = 'getPage';
  setRateLimitHeaders(res as Response, verdict);
  if (notModified) {
    res.statusCode = 304;
    res.setHeader('ETag', entry.etag);
    res.end();
    return true;
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('ETag', entry.etag);
  res.setHeader('Content-Length', entry.body.length);
  res.end(entry.body);
  return true;
}

/** The app's layer of the hot reads (after CORS and compression, which handle the writes below as any answer's). */
export function serveHotReads(deps: Omit<HotReadDeps, 'em'>): RequestHandler {
  return async (req, res, next) => {
    const found = findHot(req, deps.hot);
    if (!found || !(await answerHot(req, res, found, { ...deps, em: () => req.em }, () => undefined))) next();
  };
}

/** What the app does first to every request, which the listener does to a hot read it answers. */
export type FirstSteps = {
  /** The request's id (X-Request-Id) and its log line (request-id.ts). */
  tag(req: IncomingMessage, res: ServerResponse): void;
  /** Its measure, from `started` (metrics.ts), when /metrics is on. */
  measure?: ((req: IncomingMessage, res: ServerResponse, started: bigint) => void) | undefined;
  /** CORS is on: every request goes to the app, whose cors middleware adds its headers to every answer (Vary: Origin). */
  cors: boolean;
};

/**
 * The server's request listener: a hot read that needs nothing of express is answered here, everything else is the
 * app's. Compression would leave the answer as it is only when the client accepts no encoding, or when the answer is
 * under its threshold (then it only adds `Vary: Accept-Encoding`, as here); any other goes to the app.
 */
export function hotReadListener(app: RequestListener, deps: HotReadDeps, first: FirstSteps): RequestListener {
  return (req: Raw, res: RawResponse) => {
    const found = first.cors ? undefined : findHot(req, deps.hot);
    const encodes = req.headers['accept-encoding'] !== undefined;
    const fits = (entry: HotRead) => !encodes || entry.body.length < COMPRESSION_THRESHOLD;
    if (!found || !fits(found.entry)) return app(req, res);
    const started = process.hrtime.bigint();
    // express keeps a response's locals: the verdict of the budget goes on with a request answered there
    res.locals = Object.create(null) as Record<string, unknown>;
    answerHot(req, res, found, deps, (notModified) => {
      first.tag(req, res);
      first.measure?.(req, res, started);
      // as compression marks an answer it leaves as it is (a 304 has no content type: nothing)
      if (encodes && !notModified) res.setHeader('Vary', 'Accept-Encoding');
    }, fits).then((answered) => {
      if (!answered) app(req, res);
    }, () => {
      // the lease could not be taken: the app takes it again, and answers its failure as any other
      delete res.locals!.rateVerdict;
      app(req, res);
    });
  };
}
