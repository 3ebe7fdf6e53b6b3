// buildApp(deps) -> the express app, without listen(). The request flow for the API is:
// request id + log -> `.json` suffix -> body parsers -> entity manager -> auth -> rate limit -> OpenAPI validator
// (form coercion, request validation, response validation) -> handlers[operationId] -> one error handler.
import { AnswerGate } from './http/answer-gate.ts';
import { MemoryPressure } from './http/memory-pressure.ts';
import { mcpRoutes } from './modules/mcp/mcp.routes.ts';
import compression from 'compression';
import cors from 'cors';
import express from 'express';
import type { RequestListener } from 'node:http';
import zlib from 'node:zlib';
import type { Config } from './config.ts';
import type { Orm } from './db/database.ts';
import { authenticate, forgetToken } from './http/auth.ts';
import { silentFeed, type ChangeFeed } from './db/change-feed.ts';
import { hotReadListener, serveHotReads } from './http/hot-reads.ts';
import { createMemory } from './cache/memory.ts';
import { tokenOf } from './cache/tags.ts';
import { HttpError } from './http/errors.ts';
import type { AppServices } from './http/handler.ts';
import { stripJsonSuffix } from './http/json-suffix.ts';
import type { Logger } from './http/logger.ts';
import { createMetrics } from './http/metrics.ts';
import { loadOpenApiDocument, openApiMiddleware } from './http/openapi.ts';
import { problemDetails } from './http/problem-details.ts';
import { rateLimit, tokenBudget } from './http/rate-limit.ts';
import { requestIdAndLog } from './http/request-id.ts';
import './http/request-state.ts';
import { createUrls } from './http/urls.ts';
import { operations } from './http/operations.ts';
import { subscribeAll } from './modules/subscribers.ts';
import type { ProjectionWorker } from './modules/events/projections.ts';
import { EventHub } from './modules/events/event-hub.ts';
import { liveHost, type LiveHost } from './modules/live/attach.ts';
import { avatarRoutes } from './modules/avatars/avatar.routes.ts';
import { webRoutes } from './modules/web/web.routes.ts';
import { oauthRoutes } from './modules/oauth/oauth.routes.ts';
import { systemRoutes } from './modules/system/system.routes.ts';

export type AppDependencies = {
  config: Config;
  orm: Orm;
  logger: Logger;
  /** The database's change announcements; without a live feed nothing is answered from memory alone. */
  changes?: ChangeFeed;
  /** This process's projections of the change log, woken after every write it answers (none: left to the timer of others). */
  projections?: ProjectionWorker | undefined;
  /** The database is the embedded one this process opened (Database.kind `embedded`): the change stream reads less. */
  embedded?: boolean;
  /** The heap's watch, which refuses work that can be refused while memory is tight (default: V8's own readings). */
  pressure?: MemoryPressure;
};

export function buildApp({ config, orm, logger, changes = silentFeed(), projections, embedded = false, pressure = new MemoryPressure().start() }: AppDependencies): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', config.trustProxy);
  const urls = createUrls(config.publicUrl);
  subscribeAll(urls);
  const memory = createMemory(changes, config.cacheBytes);
  // text being built into answers at once: LIMIT_LARGE_ANSWERS full pages of results of a list of long texts
  const answers = new AnswerGate(config.limits.largeAnswers * config.limits.listTextBytes, pressure);
  app.locals.pressure = pressure;
  // the change stream of this process (GET /api/v1/events); server.ts and the tests end it with `eventHubOf(app)`
  const events = new EventHub(orm.em.fork(), changes, urls, logger, { ...config.events, embedded });
  app.locals.events = events;
  const services: AppServices = { config, urls, memory, answers, events, pressure };
  // the live editor's WebSocket path (src/modules/live); server.ts and the tests attach it with `liveHostOf(app)`
  app.locals.live = liveHost({ services, orm, logger, changes });
  // a token changed or deleted anywhere is looked up again at its next use
  changes.subscribe((change) => {
    if (!('tags' in change)) return;
    for (const tag of change.tags) {
      const token = tokenOf(tag);
      if (token !== undefined) forgetToken(token);
    }
  });

  // What every request gets first, in this order, as two layers (`inOrder`: express's router would match and dispatch
  // each of them, a share of a hot read's time) with /metrics between them: its id and log line, the hook of a
  // write, its measure; then CORS, compression, its entity manager and the hot reads.
  const tag = requestIdAndLog(logger, app.request);
  const first: express.RequestHandler[] = [(req, res, next) => {
    tag(req, res);
    next();
  }];
  // a write answered: what it changed is committed, and its projections and the change stream can run at once
  first.push((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS') {
      res.on('finish', () => {
        projections?.poke();
        if (events.open > 0) events.poke();
      });
    }
    next();
  });
  // METRICS_TOKEN set: every request is measured and /metrics answers its bearer (metrics.ts); unset, neither
  const metrics = config.metricsToken ? createMetrics(config.metricsToken, orm, changes, pressure) : undefined;
  if (metrics) first.push(metrics.measure);
  app.use(inOrder(first));
  // GET /metrics: a router of its own (the plain routes' guard and 405), before CORS and compression as always
  if (metrics) app.use(metrics.routes);
  const then: express.RequestHandler[] = [];
  // CORS_ORIGINS set: those origins may call the service from a browser (preflight answered here, before routing)
  const corsOn = config.corsOrigins === '*' || config.corsOrigins.length > 0;
  if (corsOn) {
    then.push(cors({
      origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      exposedHeaders: ['ETag', 'Link', 'Location', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'WWW-Authenticate'],
      maxAge: 600,
    }));
  }
  // JSON answers, the document and the API reference over 1 KiB go out compressed (br or gzip, as the client
  // accepts; Vary: Accept-Encoding). Not the bytes of a StreamAnswer (attachments: Range requests count bytes as stored).
  // The fastest settings (gzip level 1, brotli quality 1, 64 KiB chunks): JSON still shrinks several times over, and
  // with the answer written in one piece (openapi.ts) compressing a large answer costs little more than sending it
  // uncompressed (docs/speed.md has the search case's figures).
  const compress = compression({
    level: 1,
    brotli: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } },
    chunkSize: 64 * 1024,
    filter: (req, res) => res.locals.uncompressed !== true && compression.filter(req, res),
  });
  // a client that accepts no encoding (most API clients) skips the middleware, which wraps every response otherwise
  then.push((req, res, next) => {
    if (!req.headers['accept-encoding']) return next();
    res.locals.compressible = true; // openapi.ts writes such an answer in one piece
    return compress(req, res, next);
  });
  // each request's own entity manager, forked when first used: a hot read answered from memory never makes one
  then.push((req, _res, next) => {
    let em: typeof req.em | undefined;
    Object.defineProperty(req, 'em', {
      configurable: true,
      enumerable: true,
      get: () => (em ??= orm.em.fork()),
      set: (value: typeof req.em) => (em = value),
    });
    next();
  });
  const api = express.Router();
  api.use(stripJsonSuffix);
  // Form names nest at most 5 levels (`note[title]` is 1): deeper answers 400 (body-parser 2 parses with qs's
  // strictDepth, which @types/body-parser does not know yet); more than 2000 fields answer 413. A GET or HEAD has no
  // body the API reads: it skips both parsers (a share of a hot read's time).
  const formOptions = { extended: true, limit: config.limits.requestBodyBytes, parameterLimit: 2000, depth: 5 };
  const bodyParsers = [
    express.json({ limit: config.limits.requestBodyBytes, type: ['application/json', 'application/*+json'] }),
    express.urlencoded(formOptions),
  ];
  api.use((req, res, next) => (req.method === 'GET' || req.method === 'HEAD' ? next() : bodyParsers[0]!(req, res, (error?: unknown) => (error ? next(error) : bodyParsers[1]!(req, res, next)))));
  api.use(authenticate());
  const budget = tokenBudget(config.rateLimitPerHour);
  api.use(rateLimit(budget));
  api.use(openApiMiddleware(loadOpenApiDocument(), operations, services));
  // the hot reads: a page answered before to this token, while nothing it shows has changed, ahead of the router
  // when nothing of it needs a statement (hot-reads.ts); most are answered ahead of express (the listener below)
  then.push(serveHotReads({ hot: memory.hot, budget }));
  app.use(inOrder(then));
  // the API first: its requests pass none of the plain routes below
  app.use((req, res, next) => (req.path.startsWith('/api/') ? api(req, res, next) : next()));
  // Outside /api/v1: plain express routes, each with the API's input rules (NUL, lone surrogates, integers, body
  // limits) and a 405 with Allow for a method it lacks, refused in its own format (src/http/input-guard.ts)
  app.use(systemRoutes({ orm }));
  app.use(avatarRoutes());
  // OAuth 2 and its pages (/oauth/*, /.well-known/oauth-authorization-server): outside /api/v1, where a cookie never reaches
  app.use(oauthRoutes(services));
  // the MCP server for AI agents (/mcp) and its protected resource metadata (/.well-known/oauth-protected-resource)
  app.use(mcpRoutes(services));


  // the browser views behind html_url (session cookie or bearer token; a cookie never reaches /api/v1 above)
  app.use(webRoutes(services));
  app.use((req, _res, next) => next(new HttpError(404, 'not_found', `nothing at ${req.path}`)));
  app.use(problemDetails);
  // what the server listens with (listenerOf): the hot reads that need nothing of express, ahead of it
  app.locals.listener = hotReadListener(app, { hot: memory.hot, budget, em: () => orm.em.fork() }, { tag, measure: metrics?.measureFrom, cors: corsOn });
  return app;
}

/** The request listener of an app buildApp made, for node's server: the app, with the hot reads ahead of it. */
export function listenerOf(app: express.Express): RequestListener {
  return app.locals.listener as RequestListener;
}

/**
 * The handlers as one: each runs when the one before calls next() without an error; an error, or the last one
 * calling next, goes on to express's next layer. Errors thrown or rejected are handed on as express would.
 */
function inOrder(handlers: readonly express.RequestHandler[]): express.RequestHandler {
  return (req, res, next) => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = handlers[index++];
      if (!handler) return next();
      try {
        const result = handler(req, res, step) as unknown;
        if (result instanceof Promise) result.catch(step);
      } catch (thrown) {
        step(thrown);
      }
    };
    step();
  };
}

/** The change stream of an app buildApp made: closed when the server stops, so its streams end. */
export function liveHostOf(app: express.Express): LiveHost {
  return app.locals.live as LiveHost;
}

export function eventHubOf(app: express.Express): EventHub {
  return app.locals.events as EventHub;
}
