// Who reads a view, and how a view gets its data.
//
// Who: a browser signed in on the OAuth sign-in page holds the session cookie (src/modules/sessions); a client
// that sends a bearer token (the Authorization header or access_token, as before) is served too. The session's
// caller reads only (token scope `read`; it never reaches /api/v1, whose router reads bearer tokens alone). A
// browser with neither is sent to the sign-in page, and back to the view after signing in.
//
// Data: a view runs the very operation handlers of the API (the operation table, src/http/operations.ts) with the
// wrapper they run behind (src/http/invoke.ts): the same scope, the same authorization, the same loaders and
// statements, the same 404 for a note the caller may not read. Their answers are the presented JSON bodies of the
// document, which the views render; what the API would send as headers (Link, X-Total-Count, ETag) is not sent with
// the page, and a list's total is read from it.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { OperationId, Operations } from '../../../generated/operations.gen.ts';
import { authenticate } from '../../http/auth.ts';
import { type AppServices, type OperationDefinition } from '../../http/handler.ts';
import { Answer as OperationAnswer } from '../../http/answer.ts';
import { invokeOperation } from '../../http/invoke.ts';
import { operations } from '../../http/operations.ts';
import type { ScopeKind, ScopeOf } from '../access/scope.ts';
import type { SignedIn, Sessions } from '../sessions/sessions.ts';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { HttpError } from '../../http/errors.ts';
import { loadOpenApiDocument } from '../../http/openapi.ts';
import type { Viewer } from './layout.ts';

export const SIGN_IN_PATH = '/oauth/sign-in';

/** The sign-in page, coming back to `path` (a local path) after signing in. */
export function signInRedirect(path: string): string {
  return `${SIGN_IN_PATH}?return_to=${encodeURIComponent(path)}`;
}

export function viewerOf(res: Response): Viewer | undefined {
  return res.locals.viewer as Viewer | undefined;
}

/** Bearer token if the request carries one (the API's rules), else the session cookie, else the sign-in page. */
export function viewAuth(sessions: Sessions): RequestHandler {
  const bearer = authenticate({ cache: false });
  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.get('authorization') !== undefined || /[?&]access_token=/.test(req.url)) {
      return bearer(req, res, (error?: unknown) => {
        if (!error && req.caller) res.locals.viewer = { username: req.caller.user.username, name: req.caller.user.name } satisfies Viewer;
        next(error);
      });
    }
    const session = await sessions.read(req);
    if (!session) {
      res.set('Cache-Control', 'no-store').redirect(303, signInRedirect(req.originalUrl));
      return;
    }
    req.caller = { user: session.user, tokenId: 0, tokenScope: 'read', tokenConfirmed: true, clientId: null, clientWrites: 'direct' };
    res.locals.viewer = { username: session.user.username, name: session.user.name, csrfToken: session.csrfToken } satisfies Viewer;
    res.locals.session = session;
    next();
  };
}

type Body<Id extends OperationId> = Operations[Id]['responses'] extends { 200: infer B } ? B : never;

export type Answer<Id extends OperationId, S extends ScopeKind> = { body: Body<Id>; scope: ScopeOf<S>; total: number | undefined };

/**
 * Runs the API operation `id` for this request's caller as `method` `apiPath` (the path its Link headers would
 * name), with `path` its path parameters, `query` and `body`: its scope, its authorization, then its handler.
 */
async function invokeAs<Id extends OperationId, S extends ScopeKind>(
  services: AppServices,
  req: Request,
  res: Response,
  id: Id,
  kind: S,
  call: { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; apiPath: string; path: Record<string, unknown>; query: Record<string, unknown>; body: unknown },
): Promise<Answer<Id, S>> {
  const definition = operations[id] as unknown as OperationDefinition<Id, S>;
  if (definition.scope !== kind) throw new Error(`${id} runs in a ${definition.scope} scope, not ${kind}`);
  const request = Object.create(req, { url: { value: call.apiPath }, method: { value: call.method }, body: { value: call.body } }) as Request;
  const { result, scope } = await invokeOperation(definition as never, services, request, res, { path: call.path, query: call.query, body: call.body, headers: {} });
  const body = (result instanceof OperationAnswer ? result.body : result) as Body<Id>;
  const total = result instanceof OperationAnswer ? result.list?.total : undefined;
  return { body, scope: scope as ScopeOf<S>, total };
}

/** A read: the API operation `id` as a GET of `apiPath` (the handler sees that GET). */
export function runOperation<Id extends OperationId, S extends ScopeKind>(
  services: AppServices,
  req: Request,
  res: Response,
  id: Id,
  kind: S,
  apiPath: string,
  path: Record<string, unknown>,
  query: Record<string, unknown> = {},
): Promise<Answer<Id, S>> {
  return invokeAs(services, req, res, id, kind, { method: 'GET', apiPath, path, query, body: undefined });
}

/**
 * A form's POST: only from a signed-in browser (the session's cookie; a bearer token writes through the API), and
 * only with the session's CSRF token in `csrf_token` (else 403, and nothing runs).
 */
export function formAuth(sessions: Sessions): RequestHandler {
  return (req, res, next) => {
    const session = res.locals.session as SignedIn | undefined;
    if (!session) return next(new HttpError(403, 'forbidden', 'a form of the browser views is sent from a signed-in browser; API clients use /api/v1'));
    if (!sessions.checkCsrf(req, (req.body as Record<string, unknown> | undefined)?.csrf_token, session)) {
      return next(new HttpError(403, 'forbidden', 'the form has expired or did not come from this site (its CSRF token does not match): load the page again'));
    }
    next();
  };
}

let schemas: Ajv | undefined;
const validators = new Map<OperationId, ValidateFunction>();

/** The operation's JSON body schema from the document, compiled once: a form's body is checked as the API checks it. */
function bodyValidator(id: OperationId): ValidateFunction {
  const known = validators.get(id);
  if (known) return known;
  if (!schemas) {
    schemas = new Ajv({ strict: false, allErrors: true });
    addFormats.default(schemas);
    schemas.addSchema(loadOpenApiDocument() as object, 'openapi');
  }
  type Operation = { operationId?: string; requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> } };
  const operation = Object.values(loadOpenApiDocument().paths)
    .flatMap((item) => Object.values(item as Record<string, Operation>))
    .find((candidate) => candidate?.operationId === id);
  const ref = operation?.requestBody?.content?.['application/json']?.schema?.$ref;
  if (!ref) throw new Error(`${id} takes no JSON body in the document`);
  const validate = schemas.getSchema(`openapi${ref}`)!;
  validators.set(id, validate);
  return validate;
}

/**
 * A form's write: the API operation `id` as `method` `apiPath` with `body`, checked against the operation's body
 * schema first (400 as the API answers it); the handler, the scope and the authorization are the API's.
 */
export function runWrite<Id extends OperationId, S extends ScopeKind>(
  services: AppServices,
  req: Request,
  res: Response,
  id: Id,
  kind: S,
  method: 'POST' | 'PUT' | 'DELETE',
  apiPath: string,
  path: Record<string, unknown>,
  body: unknown,
): Promise<Answer<Id, S>> {
  if (body !== undefined) {
    const validate = bodyValidator(id);
    if (!validate(body)) {
      const errors = (validate.errors ?? []).map((error) => ({ pointer: error.instancePath || '/', detail: error.message ?? 'is not valid' }));
      throw new HttpError(400, 'validation_failed', errors.map((error) => `${error.pointer} ${error.detail}`).join('; '), { errors });
    }
  }
  return invokeAs(services, req, res, id, kind, { method, apiPath, path, query: {}, body });
}
