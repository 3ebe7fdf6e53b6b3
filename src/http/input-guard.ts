// Two rules the validator cannot enforce from the document's schemas, checked for every operation after routing and
// before validation, so no operation has to remember them:
//
// - No string holds U+0000 (NUL) or a lone surrogate (a JSON `\ud800` without its pair): PostgreSQL text cannot
//   store NUL, UTF-8 cannot encode a lone surrogate (jsonb refuses it; text would silently get U+FFFD), so either
//   would fail there (a 500) or change what was sent instead of being refused here. Path segments holding one
//   answer 404 (they name nothing), query parameters and body fields 400, with the parameter or JSON pointer.
// - An integer path or query parameter is written in decimal digits. ajv's type coercion reads `0x2`, `1e0`, ` 2`
//   and `Infinity` as numbers, and a JSON Schema `pattern` never applies to a number, so `/pages/0x2` would be page
//   2. Anything else answers 404 in the path and 400 in the query. The range (minimum/maximum) is the document's.
// - An empty query value is an absent parameter (design.md, "Wire habits": old clients send `?team=&type=` and
//   `?page=&parent=all`): `name=` and a bare `name` are dropped from the query before anything validates it, on
//   every operation, so no schema has to allow `''` and a default applies as if the parameter were not sent.
import type { Request, RequestHandler } from 'express';
import { HttpError, type FieldError } from './errors.ts';
import { resolve } from './form-coercion.ts';

export type ParameterObject = { name: string; in: string; schema?: { type?: string | string[]; $ref?: string } };
type Document = { paths: Record<string, Record<string, unknown>>; components?: Record<string, Record<string, unknown>> };
type RouteMetadata = { openApiRoute?: string; pathParams?: Record<string, string> };

const NUL = '\u0000';
const UNSTORABLE = 'must not contain NUL (U+0000) or a lone surrogate';

/** NUL, or UTF-16 that is not well formed (a lone surrogate): nothing the database can store as sent. */
function unstorable(value: string): boolean {
  return value.includes(NUL) || !value.isWellFormed();
}
const DECIMAL = /^-?[0-9]+$/;

const cache = new WeakMap<Document, Map<string, ParameterObject[]>>();

/** The parameters of an operation (those of its path item, overridden by its own), with `$ref`s resolved. */
export function operationParameters(document: Document, openApiRoute: string, method: string): ParameterObject[] {
  let byOperation = cache.get(document);
  if (!byOperation) cache.set(document, (byOperation = new Map()));
  const key = `${method.toLowerCase()} ${openApiRoute}`;
  let parameters = byOperation.get(key);
  if (!parameters) {
    const item = document.paths[openApiRoute] as { parameters?: unknown[] } & Record<string, { parameters?: unknown[] } | undefined> | undefined;
    const list = [...(item?.parameters ?? []), ...(item?.[method.toLowerCase()]?.parameters ?? [])]
      .map((parameter) => resolve(document as never, parameter as never) as unknown as ParameterObject | undefined)
      .filter((parameter): parameter is ParameterObject => parameter !== undefined);
    const named = new Map<string, ParameterObject>();
    for (const parameter of list) named.set(`${parameter.in}:${parameter.name}`, parameter);
    parameters = [...named.values()];
    byOperation.set(key, parameters);
  }
  return parameters;
}

/** The parameters of the operation a request was routed to (empty before routing). */
export function requestParameters(document: Document, req: Request): ParameterObject[] {
  const route = (req as unknown as { openapi?: RouteMetadata }).openapi?.openApiRoute;
  return route ? operationParameters(document, route, req.method) : [];
}

function isInteger(document: Document, parameter: ParameterObject): boolean {
  const schema = resolve(document as never, parameter.schema as never) as { type?: string | string[] } | undefined;
  const types = Array.isArray(schema?.type) ? schema.type : [schema?.type];
  return types.includes('integer');
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** JSON pointers of every string (value or key) that is unstorable; iterative, so a deeply nested body cannot overflow. */
function pointersUnstorable(root: unknown, limit = 10): string[] {
  const found: string[] = [];
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0 && found.length < limit) {
    const [value, pointer] = stack.pop()!;
    if (typeof value === 'string') {
      if (unstorable(value)) found.push(pointer);
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const at = `${pointer}/${escapePointer(key)}`;
        if (unstorable(key)) found.push(at);
        else stack.push([item, at]);
      }
    }
  }
  return found;
}

/** The query without its empty values (`a=`, a bare `a`, or `a[]=` alone): those parameters count as not sent. */
export function withoutEmptyValues(query: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value === '' || (Array.isArray(value) && value.every((item) => item === ''))) continue;
    kept[name] = value;
  }
  return kept;
}

export function inputGuard(document: Document): RequestHandler {
  return (req, _res, next) => {
    const metadata = (req as unknown as { openapi?: RouteMetadata }).openapi;
    if (!metadata?.openApiRoute) return next();
    // Express 5 parses `req.query` afresh on each read: an own property keeps the cleaned object (the validator's
    // coercion then writes into this same object, which the handler reads)
    Object.defineProperty(req, 'query', { value: withoutEmptyValues(req.query as Record<string, unknown>), writable: true, configurable: true, enumerable: true });
    const parameters = operationParameters(document, metadata.openApiRoute, req.method);

    const pathErrors: FieldError[] = [];
    for (const [name, value] of Object.entries(metadata.pathParams ?? {})) {
      if (typeof value !== 'string') continue;
      if (unstorable(value)) pathErrors.push({ parameter: name, detail: UNSTORABLE });
    }
    for (const parameter of parameters) {
      if (parameter.in !== 'path' || !isInteger(document, parameter)) continue;
      const value = metadata.pathParams?.[parameter.name];
      if (typeof value === 'string' && !DECIMAL.test(value)) pathErrors.push({ parameter: parameter.name, detail: 'must be written in decimal digits' });
    }
    // A malformed path parameter names nothing that can exist.
    if (pathErrors.length > 0) return next(new HttpError(404, 'not_found', 'not found', { errors: pathErrors }));

    const errors: FieldError[] = [];
    const query = req.query as Record<string, unknown>;
    for (const pointer of pointersUnstorable(query)) {
      errors.push({ parameter: pointer.slice(1).split('/')[0]!.replace(/~1/g, '/').replace(/~0/g, '~'), detail: UNSTORABLE });
    }
    for (const parameter of parameters) {
      if (parameter.in !== 'query' || !isInteger(document, parameter)) continue;
      const value = query[parameter.name];
      // an empty value is an absent parameter; arrays and objects are left to the validator's type check
      if (typeof value === 'string' && value !== '' && !DECIMAL.test(value)) errors.push({ parameter: parameter.name, detail: 'must be written in decimal digits' });
    }
    for (const pointer of pointersUnstorable(req.body)) errors.push({ pointer, detail: UNSTORABLE });
    if (errors.length > 0) {
      const summary = errors.map((error) => `${error.pointer ?? error.parameter} ${error.detail}`).join('; ');
      return next(new HttpError(400, 'validation_failed', summary, { errors }));
    }
    next();
  };
}
