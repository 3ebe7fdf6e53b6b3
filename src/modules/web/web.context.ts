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
    req.caller = { user: session.user, tokenId: 0, tokenScope: 'read', tokenConfirmed: true, clientId: null, clientWrites: 'direct' };
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
  // the handler sees a GET of the API path
  const request = Object.create(req, { url: { value: apiPath }, method: { value: 'GET' } }) as Request;
  const { result, scope } = await invokeOperation(definition as never, services, request, res, { path, query, body: undefined, headers: {} });
  const body = (result instanceof OperationAnswer ? result.body : result) as Body<Id>;
  const total = result instanceof OperationAnswer ? result.list?.total : undefined;
  return { body, scope: scope as ScopeOf<S>, total };
}
