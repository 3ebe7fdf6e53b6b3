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
//
// The routes outside /api/v1 (OAuth, the sign-in forms, the browser views, the system routes, avatars, /metrics) are
// plain express routes the validator never sees: `plainRouter` (below) gives them the same rules and a 405 with
// `Allow` for a method a path lacks, and answers every refusal in the route's own format.
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { DomainError, type FieldError } from '../modules/errors.ts';
import { HttpError } from './errors.ts';
import { resolve } from './form-coercion.ts';
import { toHttpError } from './problem-details.ts';

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

// ---------------------------------------------------------------------------------------------------------------
// Routes outside /api/v1
//
// Every route the process serves outside the API is declared in a table of `PlainRoute`s and built by
// `plainRouter`, which gives each the rules the API's operations get from the guard above and from the API's body
// parsers:
// - nothing unstorable (NUL, a lone surrogate) in a path parameter (404: it names nothing), a query parameter or key,
//   a form or JSON field or key, or another input the route declares (`inputs`: the decoded HTTP Basic credentials
//   of /oauth/token and /oauth/revoke) (400);
// - the parameters a route declares as integers (`integers`) are decimal digits from 0 to 2147483647, like every id
//   of the API: 404 in the path, 400 in the query (an empty query value is an absent parameter);
// - bodies (`plainBodies`): at most LIMIT_REQUEST_BODY_BYTES, flat form names (no nesting: no OAuth parameter has
//   any), at most 50 fields (413 past it), JSON where the route takes it;
// - a method the path lacks answers 405 with `Allow` (HEAD follows GET; OPTIONS answers 200 with `Allow`, as
//   express answers it on every other route; with CORS_ORIGINS set, the CORS middleware answers it before routing).
// Refusals, body parser errors and errors thrown by a route leave through the route's `Refusal`: an HTML page, an
// RFC 6749 error, or problem details (`asProblem`). An unknown error is logged here and refused as a generic 500.

/** How a route answers a refusal, in its own format. `error.headers` (Allow, ...) belong on the answer. */
export type Refusal = (error: HttpError, req: Request, res: Response, next: NextFunction) => void;

/** Problem details, through the app's one error handler. */
export const asProblem: Refusal = (error, _req, _res, next) => next(error);

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];
type Handlers = RequestHandler | readonly RequestHandler[];

export type PlainRoute = { path: string | string[] } & Partial<Record<Method, Handlers>> & {
  /** Path and query parameters holding an integer (an id, an index, a page number). */
  integers?: { path?: readonly string[]; query?: readonly string[] };
  /** Inputs that are neither parameters nor fields, as the route decodes them (name -> value). */
  inputs?: (req: Request) => Record<string, string> | undefined;
  /**
   * false: the body is not refused for NUL or lone surrogates here, because the route hands every value of it to an
   * operation that refuses them in its own way (the MCP endpoint: a tool's arguments go to the API, whose 400 becomes
   * the tool's error). Path, query and `inputs` are guarded still.
   */
  guardBody?: boolean;
  /** Runs first, for every method: `next('route')` when the path is not this route's after all (404 then). */
  precondition?: RequestHandler;
};

const INTEGER_MAX = 2_147_483_647;
const NON_NEGATIVE = /^[0-9]{1,10}$/;
const isInteger32 = (value: string) => NON_NEGATIVE.test(value) && Number(value) <= INTEGER_MAX;
const INTEGER_DETAIL = `must be decimal digits, at most ${INTEGER_MAX}`;

/** What the rules above refuse in this request to `route`, or undefined. Runs after routing and body parsing. */
export function plainInputProblem(req: Request, route: Pick<PlainRoute, 'integers' | 'inputs' | 'guardBody'>): HttpError | undefined {
  const pathErrors: FieldError[] = [];
  for (const [name, value] of Object.entries((req.params ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    if (unstorable(value)) pathErrors.push({ parameter: name, detail: UNSTORABLE });
    else if (route.integers?.path?.includes(name) && !isInteger32(value)) pathErrors.push({ parameter: name, detail: INTEGER_DETAIL });
  }
  if (pathErrors.length > 0) return new HttpError(404, 'not_found', 'not found', { errors: pathErrors });

  const errors: FieldError[] = [];
  const query = req.query as Record<string, unknown>;
  for (const pointer of pointersUnstorable(query)) {
    errors.push({ parameter: pointer.slice(1).split('/')[0]!.replace(/~1/g, '/').replace(/~0/g, '~'), detail: UNSTORABLE });
  }
  for (const name of route.integers?.query ?? []) {
    const value = query[name];
    if (value === undefined || value === '') continue;
    if (typeof value !== 'string') errors.push({ parameter: name, detail: 'must be given once, as one integer' });
    else if (!isInteger32(value)) errors.push({ parameter: name, detail: INTEGER_DETAIL });
  }
  if (route.guardBody !== false) for (const pointer of pointersUnstorable(req.body)) errors.push({ pointer, detail: UNSTORABLE });
  for (const [name, value] of Object.entries(route.inputs?.(req) ?? {})) {
    if (unstorable(value)) errors.push({ parameter: name, detail: UNSTORABLE });
  }
  if (errors.length === 0) return undefined;
  const summary = errors.map((error) => `${error.pointer ?? error.parameter} ${error.detail}`).join('; ');
  return new HttpError(400, 'validation_failed', summary, { errors });
}

/** The body parsers of a plain route's POST: a flat form (and JSON with `json`), `limit` bytes, 50 fields. */
export function plainBodies(limit: number, options: { json?: boolean } = {}): RequestHandler[] {
  const form = express.urlencoded({ extended: false, limit, parameterLimit: 50 });
  return options.json ? [form, express.json({ limit })] : [form];
}

/** `Allow` for these methods: HEAD right after GET, as express answers HEAD wherever GET is. */
function allowOf(methods: readonly string[]): string {
  return methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])).join(', ');
}

/** A client error (parsers, guards, thrown HttpErrors and DomainErrors) refused in the route's format; anything else a logged 500. */
function refuseErrors(refuse: Refusal): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    const known = toHttpError(error);
    if (known && (known.status < 500 || error instanceof HttpError || error instanceof DomainError)) return refuse(known, req, res, next);
    req.log?.error({ error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error) }, 'request failed');
    refuse(new HttpError(500, 'internal_error', 'the server failed to answer; the request id identifies it in the logs'), req, res, next);
  };
}

/**
 * The routes of `table`, each with the guard and a 405 for the methods it lacks; every refusal and error through
 * `refuse`. `bodies` parse the body of every method but GET.
 */
export function plainRouter(options: { refuse: Refusal; bodies?: readonly RequestHandler[] }, table: readonly PlainRoute[]): express.Router {
  const { refuse, bodies = [] } = options;
  const router = express.Router();
  const errors = refuseErrors(refuse);
  for (const route of table) {
    const methods = METHODS.filter((method) => route[method] !== undefined);
    const allow = allowOf(methods);
    const guard: RequestHandler = (req, res, next) => {
      const problem = plainInputProblem(req, route);
      return problem ? refuse(problem, req, res, next) : next();
    };
    const handle = router.route(route.path);
    if (route.precondition) handle.all(route.precondition);
    for (const method of methods) {
      const chain = [...(method === 'GET' ? [] : bodies), guard, ...[route[method]!].flat()];
      handle[method.toLowerCase() as Lowercase<Method>](...chain);
    }
    const refuseMethod: RequestHandler = (req, res, next) => {
      // what express itself answers to OPTIONS wherever a path exists (an `all` route would hide it otherwise)
      if (req.method === 'OPTIONS') {
        const sorted = allow.split(', ').sort().join(', ');
        for (const [name, value] of Object.entries({ Allow: sorted, 'Content-Length': String(Buffer.byteLength(sorted)), 'Content-Type': 'text/plain', 'X-Content-Type-Options': 'nosniff' })) res.setHeader(name, value);
        return void res.status(200).end(sorted);
      }
      // a path segment that names nothing is a 404 whatever the method
      const problem = plainInputProblem(req, { integers: route.integers });
      if (problem?.status === 404) return refuse(problem, req, res, next);
      refuse(new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here; use ${allow}`, { headers: { Allow: allow } }), req, res, next);
    };
    handle.all(refuseMethod, errors);
  }
  // what fails before a route runs (a path parameter that is not valid percent-encoding)
  router.use(errors);
  return router;
}
