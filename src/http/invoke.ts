// Running an operation, for every caller of it: the API's router (openapi.ts) and the web views
// (src/modules/web/web.context.ts) alike. The declared scope is loaded (404 for a note the caller may not read), the
// declared action is authorized before the handler runs (policy.ts; outside production the actions the handler
// authorized itself are checked against the declaration), then the handler; what a write changed is forgotten from
// memory before the answer goes. The caller turns the result into its answer (JSON and headers, or a page).
import type { Request, Response } from 'express';
import type { OperationId } from '../../generated/operations.gen.ts';
import type { Action } from '../modules/access/policy.ts';
import { authorizations, authorizeDeclared, checkDeclaredAction, loadScope, scopeTags } from '../modules/access/scope.ts';
import type { Caching } from '../cache/caching.ts';
import { Answer } from './answer.ts';
import { DomainError } from '../modules/errors.ts';
import type { AppServices, HandlerContext, OperationDefinition } from './handler.ts';

/**
 * The writes an app with `writes: proposals` may make (the others answer 403 `proposals_only`): page writes, which
 * land in its fork (src/modules/requests/proposals.ts), forks and requests, comments, issues and the user's
 * notifications. Never a change to a note's pages, settings or requests, nor to teams, webhooks, apps or tokens.
 */
const PROPOSAL_WRITES: ReadonlySet<OperationId> = new Set<OperationId>([
  'createPage', 'updatePage', 'updatePageViaPatch', 'createFork', 'createRequest',
  'createNoteComment', 'createPageComment', 'createIssue', 'createIssueComment', 'createRequestComment',
  'markNotificationsRead', 'toggleNotification', 'toggleNotificationViaPut',
]);

/** The validated input of an operation: path parameters, query, body and the headers it declares. */
export type OperationInput = { path: Record<string, unknown>; query: Record<string, unknown>; body: unknown; headers: Record<string, string> };

/**
 * Runs `definition` for `req`'s caller with `input`; `req` is the request as the handler sees it (the web views pass
 * a GET of the API path they stand for). Returns what the handler returned (or the operation's kept answer), the
 * scope it ran in, and the change feed's mark taken before anything was read (what a kept answer is checked against).
 */
export async function invokeOperation(
  definition: OperationDefinition<OperationId>,
  services: AppServices,
  req: Request,
  res: Response,
  input: OperationInput,
): Promise<{ result: unknown; scope: unknown; heardAtStart: number }> {
  if (!req.caller) throw new Error('operation reached without an authenticated caller');
  const heardAtStart = services.memory.hot.mark();
  // a GET may be answered from memory: everything committed before it arrived is heard first (hot-reads.ts)
  const pastRead = readsThePast(input.query);
  const [scope] = await Promise.all([
    // a read of the past (`at`) may name a page that is gone now: its scope is the note's, and the handler finds the
    // page as it was (src/modules/pages/history.ts); who may read is decided by the note, as for any read
    loadScope(definition.scope === 'page' && pastRead ? 'note' : definition.scope, req.em, req.caller, input.path),
    req.method === 'GET' ? services.memory.hot.sync() : undefined,
  ]);
  const authorizedHere = authorizeDeclared(scope, definition.action);
  if (req.caller.clientWrites === 'proposals' && req.method !== 'GET' && req.method !== 'HEAD' && !PROPOSAL_WRITES.has(definition.id)) {
    throw new DomainError('forbidden', 'proposals_only', `this token's app only proposes changes: ${definition.id} is not one of its writes (${[...PROPOSAL_WRITES].join(', ')})`);
  }
  const context: HandlerContext = {
    em: req.em,
    caller: req.caller,
    config: services.config,
    urls: services.urls,
    log: req.log,
    request: req,
    memory: services.memory,
    admit: (bytes) => services.answers.admit(res, bytes),
    refuseWhenTight: (what) => services.pressure.refuseWhenTight(what),
    heardAtStart,
    events: services.events,
  };
  const handle = definition.handle as (input: unknown, scope: unknown, context: HandlerContext) => Promise<unknown>;
  // what is kept in memory is the answer of now: a read of the past neither takes nor keeps it
  const shared = req.method === 'GET' && !pastRead ? (definition.cache as Caching<unknown, unknown> | undefined)?.shared : undefined;
  try {
    const kept = shared?.get(services.memory, scope);
    if (kept) return { result: kept, scope, heardAtStart };
    let result: unknown;
    if (services.config.environment === 'production' || authorizedHere) {
      result = await handle(input, scope, context);
    } else {
      const authorized = new Set<Action>();
      result = await authorizations.run(authorized, () => handle(input, scope, context));
      checkDeclaredAction(definition.id, definition.action, authorized);
    }
    if (shared && result instanceof Answer) shared.keep(services.memory, scope, result);
    return { result, scope, heardAtStart };
  } finally {
    // what this process changed is forgotten before it answers (the database's announcement follows)
    if (req.method !== 'GET') services.memory.hot.forget(scopeTags(scope));
  }
}

/** Whether a request reads the note as it was at a moment (`?at=`, history.ts): never answered from, nor kept in, memory. */
export function readsThePast(query: unknown): boolean {
  return typeof query === 'object' && query !== null && (query as Record<string, unknown>).at !== undefined;
}
