// express-openapi-validator does the request validation (with type coercion), the response validation outside
// production, and the routing: its resolver maps each operationId of the document to its entry in the operation
// table, which the wrapper below runs: scope first, then the handler, then the answer.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, RequestHandler, Response } from 'express';
import OpenApiValidator from 'express-openapi-validator';
import type { OperationId } from '../../generated/operations.gen.ts';
import { formCoercion } from './form-coercion.ts';
import { invokeOperation, readsThePast } from './invoke.ts';
import { Answer } from './answer.ts';
import { noContent, type Accepted, type AppServices, type HandlerContext, type OperationDefinition, type OperationTable, type StreamAnswer } from './handler.ts';
import { answeredNotModified } from './etag.ts';
import { inputGuard, operationParameters } from './input-guard.ts';
import { serialiseOnce, toJsonParts, writeParts } from './json.ts';
import type { Caching } from '../cache/caching.ts';
import { hotReadKey } from '../cache/memory.ts';
import { paginationHeaders } from './pagination.ts';
import { deferMultipartBody } from '../modules/attachments/upload.ts';

export const openApiDocumentPath = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated', 'openapi.json');

type Parameter = { name?: string; in?: string };
type OperationObject = { operationId?: string; parameters?: Parameter[] };
type PathItem = Record<string, OperationObject | Parameter[] | unknown>;
export type OpenApiDocument = { paths: Record<string, PathItem>; components?: Record<string, Record<string, unknown>> };

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];

let cachedDocument: OpenApiDocument | undefined;
export function loadOpenApiDocument(): OpenApiDocument {
  cachedDocument ??= JSON.parse(readFileSync(openApiDocumentPath, 'utf8')) as OpenApiDocument;
  return cachedDocument;
}

export function operationIds(document: OpenApiDocument): string[] {
  const ids: string[] = [];
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as OperationObject | undefined;
      if (operation?.operationId) ids.push(operation.operationId);
    }
  }
  return ids;
}

/**
 * The table and the document name the same operations (the types already say so for the generated document; this
 * catches a stale generated/ at start-up).
 */
export function checkOperationCoverage(document: OpenApiDocument, table: OperationTable): void {
  const inDocument = new Set(operationIds(document));
  const inTable = new Set(Object.keys(table));
  const problems = [
    ...[...inDocument].filter((id) => !inTable.has(id)).map((id) => `${id} is in the document but not in the operation table`),
    ...[...inTable].filter((id) => !inDocument.has(id)).map((id) => `${id} is in the operation table but not in the document`),
  ];
  if (problems.length > 0) throw new Error(`operation coverage is broken:\n${problems.join('\n')}`);
}

/**
 * The validator compiles a regular expression for every path of the document on every request to find the route
 * (an open upstream pull request, express-openapi-validator #1217, caches them). Until it lands, its own copy of
 * path-to-regexp is wrapped so each (route, options) is compiled once. If an upgrade stops calling it this way, the
 * wrapper is simply not used: `routeMatcherCacheSize()` stays 0, which a test checks.
 */
const compiledRoutes = new Map<string, unknown>();
function cacheRouteMatchers(): void {
  const requireFromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const pathToRegexpModule = requireFromValidator('path-to-regexp') as { pathToRegexp: (route: string, options?: object) => unknown; __cached?: boolean };
  if (pathToRegexpModule.__cached) return;
  const original = pathToRegexpModule.pathToRegexp;
  pathToRegexpModule.pathToRegexp = (route: string, options?: object) => {
    const key = `${route}\u0000${JSON.stringify(options ?? {})}`;
    let compiled = compiledRoutes.get(key);
    if (compiled === undefined) {
      compiled = original(route, options);
      compiledRoutes.set(key, compiled);
    }
    return compiled;
  };
  pathToRegexpModule.__cached = true;
}

export function routeMatcherCacheSize(): number {
  return compiledRoutes.size;
}

/** The parameters an operation declares: headers (`If-Match`, ...) as the document spells them, and query names. */
export type DeclaredParameters = { headers: readonly string[]; query: ReadonlySet<string> };

function parametersOf(document: OpenApiDocument, pathKey: string, method: string): DeclaredParameters {
  const parameters = operationParameters(document as never, pathKey, method);
  return {
    headers: parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name),
    query: new Set(parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name)),
  };
}

function readHeaders(req: Request, names: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = req.get(name);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

function send(res: Response, result: unknown, list: { base: string; query: ReadonlySet<string> }, validateResponses: boolean): void {
  if (result === noContent) {
    res.status(204).end();
    return;
  }
  if (result && typeof result === 'object' && (result as Accepted<unknown>).kind === 'accepted') {
    res.status(202).type('application/json; charset=utf-8').json((result as Accepted<unknown>).body);
    return;
  }
  if (result && typeof result === 'object' && (result as StreamAnswer).kind === 'stream') {
    const stream = result as StreamAnswer;
    res.locals.uncompressed = true; // app.ts: ranges are of the bytes as stored
    res.status(stream.status).set(stream.headers);
    stream.body.on('error', (error) => res.destroy(error));
    if (stream.direct) {
      stream.direct(res);
      return;
    }
    // a client gone: the stream's source stops too (a file is closed)
    res.on('close', () => stream.body.destroy());
    stream.body.pipe(res);
    return;
  }
  let body = result;
  if (result instanceof Answer) {
    if (result.etag !== undefined) res.setHeader('ETag', result.etag);
    if (result.list !== undefined) res.set(paginationHeaders(res.req, list.base, list.query, result.list));
    if (result.link !== undefined) res.setHeader('Link', result.link);
    body = result.body;
  }
  const parts = toJsonParts(body);
  if (answeredNotModified(res.req, res, parts)) return;
  // the response validator reads what res.json is given: outside production it gets the very bytes sent, parsed
  if (validateResponses) {
    res.status(200).json(JSON.parse(Buffer.concat(parts).toString('utf8')));
    return;
  }
  res.status(200).type('application/json; charset=utf-8');
  if (parts.length === 1) {
    res.send(parts[0]);
    return;
  }
  res.setHeader('Content-Length', String(parts.reduce((total, part) => total + part.length, 0)));
  writeParts(res, parts, res.locals.compressible === true).catch((error: unknown) => res.destroy(error as Error));
}

/** Serves one operation: it runs (invoke.ts), and its result is written as the HTTP answer. */
export function bindOperation(definition: OperationDefinition<OperationId>, services: AppServices, parameters: DeclaredParameters): RequestHandler {
  return async (req, res) => {
    const input = { path: (req.params ?? {}) as Record<string, unknown>, query: req.query ?? {}, body: req.body, headers: readHeaders(req, parameters.headers) };
    const { result, scope, heardAtStart } = await invokeOperation(definition, services, req, res, input);
    const caching = definition.cache as Caching<unknown, unknown> | undefined;
    if (caching && req.method === 'GET' && !readsThePast(req.query) && result instanceof Answer && result.etag !== undefined) {
      // kept whole, as it is sent, for this token and path (served before routing: hot-reads.ts)
      services.memory.hot.keep(hotReadKey(req.caller!.tokenId, req.path), { body: serialiseOnce(result.body), etag: result.etag }, caching.shows(scope), heardAtStart);
    }
    send(res, result, { base: services.urls.base, query: parameters.query }, services.config.validateResponses);
  };
}

export function openApiMiddleware(document: OpenApiDocument, table: OperationTable, services: AppServices): RequestHandler[] {
  checkOperationCoverage(document, table);
  cacheRouteMatchers();
  const bound = new Map<string, RequestHandler>();
  const resolver = (_basePath: string, route: { openApiRoute: string; basePath: string; method: string }, apiDoc: OpenApiDocument) => {
    const pathKey = route.openApiRoute.substring(route.basePath.length);
    const operation = apiDoc.paths[pathKey]?.[route.method.toLowerCase()] as { operationId: OperationId };
    const id = operation.operationId;
    let handler = bound.get(id);
    if (!handler) {
      const entry = table[id];
      handler = 'servedBy' in entry
          ? (_req, _res, next) => next()
          : bindOperation(entry as OperationDefinition<OperationId>, services, parametersOf(document, pathKey, route.method));
      bound.set(id, handler);
    }
    return handler;
  };
  const middlewares = OpenApiValidator.middleware({
    apiSpec: document as never,
    validateRequests: { coerceTypes: true, allowUnknownQueryParameters: true, removeAdditional: false },
    validateResponses: services.config.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    validateFormats: true,
    ignoreUndocumented: false,
    // route on req.url, which the `.json` suffix and access_token handling have already rewritten
    useRequestUrl: true,
    // multer would hold an upload whole in memory: the upload operation streams its body itself (attachments/upload.ts)
    fileUploader: false,
    operationHandlers: { basePath: '', resolver: resolver as never },
  }) as unknown as RequestHandler[];
  const at = middlewares.findIndex((middleware) => middleware.name === 'requestMiddleware');
  if (at === -1) throw new Error('express-openapi-validator changed: no requestMiddleware to put form coercion before');
  middlewares.splice(at, 0, inputGuard(document as never), formCoercion(document as never), deferMultipartBody);
  return [headAsGet, ...middlewares];
}

/**
 * HEAD answers wherever GET does, with the same status and headers and no body (RFC 9110 section 9.3.2). The
 * document describes GET only, so HEAD is routed and validated as GET; node's response already knows it answers a
 * HEAD request (it decided when the request arrived) and sends no body.
 */
const headAsGet: RequestHandler = (req, _res, next) => {
  if (req.method === 'HEAD') req.method = 'GET';
  next();
};
