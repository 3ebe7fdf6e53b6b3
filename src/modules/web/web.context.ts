// Who reads a view, and how a view gets its data.
//
// Who: a browser signed in on the OAuth sign-in page holds the session cookie (src/modules/sessions); a client
// that sends a bearer token (the Authorization header or access_token, as before) is served too. The session's
// caller reads only (token scope `read`; it never reaches /api/v1, whose router reads bearer tokens alone). A
// browser with neither is sent to the sign-in page, and back to the view after signing in.
//
// Data: a view runs the very operation handlers of the API (the operation table, src/http/operations.ts) with the
// scope loader they run behind: the same loaders, the same statements, the same 404 for a note the caller may not
// read. Their answers are the presented JSON bodies of the document, which the views render. Headers the handlers
// set for the API (Link, X-Total-Count, ETag) are kept aside, not sent with the page.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { OperationId, Operations } from '../../../generated/operations.gen.ts';
import { authenticate } from '../../http/auth.ts';
import type { AppServices, HandlerContext, OperationDefinition } from '../../http/handler.ts';
import { operations } from '../../http/operations.ts';
import { loadScope, type ScopeKind, type ScopeOf } from '../access/scope.ts';
import type { Sessions } from '../sessions/sessions.ts';
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
    req.caller = { user: session.user, tokenId: 0, tokenScope: 'read', tokenConfirmed: true, clientId: null };
    res.locals.viewer = { username: session.user.username, name: session.user.name, csrfToken: session.csrfToken } satisfies Viewer;
    next();
  };
}

type Body<Id extends OperationId> = Operations[Id]['responses'] extends { 200: infer B } ? B : never;

export type Answer<Id extends OperationId, S extends ScopeKind> = { body: Body<Id>; scope: ScopeOf<S>; total: number | undefined };

/**
 * Runs the API operation `id` for this request's caller, as GET `apiPath` (the path its Link headers would name),
 * with `path` the operation's path parameters and `query` its query: its scope, then its handler.
 */
export async function runOperation<Id extends OperationId, S extends ScopeKind>(
  services: AppServices,
  req: Request,
  res: Response,
  id: Id,
  kind: S,
  apiPath: string,
  path: Record<string, unknown>,
  query: Record<string, unknown> = {},
): Promise<Answer<Id, S>> {
  const definition = operations[id] as unknown as OperationDefinition<Id, S>;
  if (definition.scope !== kind) throw new Error(`${id} runs in a ${definition.scope} scope, not ${kind}`);
  const caller = req.caller!;
  const scope = await loadScope(definition.scope, req.em, caller, path);
  const kept = new Map<string, string>();
  // the handler sees a GET of the API path; what it sets on the response stays here
  const request = Object.create(req, { url: { value: apiPath }, method: { value: 'GET' } }) as Request;
  const response = Object.create(res, {
    setHeader: { value: (name: string, value: unknown) => (kept.set(name.toLowerCase(), String(value)), response) },
    set: {
      value: (name: string | Record<string, unknown>, value?: unknown) => {
        for (const [key, item] of typeof name === 'string' ? [[name, value] as const] : Object.entries(name)) kept.set(key.toLowerCase(), String(item));
        return response;
      },
    },
  }) as Response;
  const context: HandlerContext = {
    em: req.em, caller, config: services.config, urls: services.urls, log: req.log, request, response, memory: services.memory,
    heardAtStart: services.memory.hot.mark(),
  };
  const handle = definition.handle as unknown as (input: unknown, scope: unknown, context: HandlerContext) => Promise<Body<Id>>;
  const body = await handle({ path, query, body: undefined, headers: {} }, scope, context);
  const total = kept.get('x-total-count');
  return { body, scope: scope as ScopeOf<S>, total: total === undefined ? undefined : Number(total) };
}
