// express-openapi-validator does the request validation (with type coercion), the response validation outside
// production, and the routing: its resolver maps each operationId of the document to our handler.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import OpenApiValidator from 'express-openapi-validator';
import { notImplemented } from './errors.ts';
import { formCoercion } from './form-coercion.ts';
import type { AppServices, BoundOperation } from './handler.ts';
import { inputGuard } from './input-guard.ts';
import { notImplementedOperations } from './not-implemented.ts';

export const openApiDocumentPath = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated', 'openapi.json');

type PathItem = Record<string, { operationId?: string } | unknown>;
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
      const operation = item[method] as { operationId?: string } | undefined;
      if (operation?.operationId) ids.push(operation.operationId);
    }
  }
  return ids;
}

/** Every operation must be either built or listed as not implemented, never both, never neither. */
export function checkOperationCoverage(document: OpenApiDocument, handlers: Record<string, BoundOperation>): void {
  const problems: string[] = [];
  const notBuilt = new Set(notImplementedOperations);
  for (const id of operationIds(document)) {
    if (handlers[id] && notBuilt.has(id)) problems.push(`${id} is both built and listed as not implemented`);
    if (!handlers[id] && !notBuilt.has(id)) problems.push(`${id} has no handler and is not listed as not implemented`);
  }
  const known = new Set(operationIds(document));
  for (const id of [...Object.keys(handlers), ...notBuilt]) if (!known.has(id)) problems.push(`${id} is not in the OpenAPI document`);
  if (problems.length > 0) throw new Error(`operation coverage is broken:\n${problems.join('\n')}`);
}

export function openApiMiddleware(
  document: OpenApiDocument,
  handlers: Record<string, BoundOperation>,
  services: AppServices,
): RequestHandler[] {
  checkOperationCoverage(document, handlers);
  const bound = new Map<string, RequestHandler>();
  const resolver = (_basePath: string, route: { openApiRoute: string; basePath: string; method: string }, apiDoc: OpenApiDocument) => {
    const pathKey = route.openApiRoute.substring(route.basePath.length);
    const operation = apiDoc.paths[pathKey]?.[route.method.toLowerCase()] as { operationId: string };
    const id = operation.operationId;
    let handler = bound.get(id);
    if (!handler) {
      const make = handlers[id];
      handler = make ? make(services) : () => {
        throw notImplemented(id);
      };
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
    fileUploader: { limits: { fileSize: services.config.limits.attachmentBytes, files: 1, fields: 20, parts: 21 } },
    operationHandlers: { basePath: '', resolver: resolver as never },
  }) as unknown as RequestHandler[];
  const at = middlewares.findIndex((middleware) => middleware.name === 'requestMiddleware');
  if (at === -1) throw new Error('express-openapi-validator changed: no requestMiddleware to put form coercion before');
  middlewares.splice(at, 0, inputGuard(document as never), formCoercion(document as never));
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
