// The shape of an operation handler, typed from the document:
// `defineOperation('getPage', { scope: 'page', action: 'note.read' }, fn)` declares the policy action the operation
// requires (policy.ts; the role matrix test reads it) and gets the operation's validated input (path, query, body and
// the headers the document names, typed by the generated `<Operation>Data`), the scope the request names (caller,
// team, note, page: loaded once, before the handler runs) and a context, and returns what the operation answers (typed by `<Operation>Responses`): the JSON
// body for a 200, `noContent` for a 204, a `StreamAnswer` for bytes. The wrapper turns that into the HTTP answer.
import type { AnswerGate } from './answer-gate.ts';
import type { MemoryPressure } from './memory-pressure.ts';
import type { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperationId, Operations } from '../../generated/operations.gen.ts';
import type { Config } from '../config.ts';
import type { Caller } from '../modules/access/caller.ts';
import type { Requirement } from '../modules/access/policy.ts';
import type { ScopeKind, ScopeOf } from '../modules/access/scope.ts';
import type { Caching } from '../cache/caching.ts';
import type { Memory, Reader } from '../cache/memory.ts';
import type { Logger } from './logger.ts';
import type { Answer } from './answer.ts';
import type { EventHub } from '../modules/events/event-hub.ts';
import type { Urls } from './urls.ts';

/** The answer of an operation that answers 204 with no body. */
export type NoContent = { readonly kind: 'no-content' };
export const noContent: NoContent = { kind: 'no-content' };

/** The answer of an operation that answers 202: the work goes on after it (an import's job, `getJob`). */
export type Accepted<Body> = { readonly kind: 'accepted'; readonly body: Body };
export const accepted = <Body>(body: Body): Accepted<Body> => ({ kind: 'accepted', body });

/**
 * Bytes with their own headers (the attachment download): streamed as they are read, never held whole (304: no body).
 * `direct`: the body is not piped; the source writes the response itself once its status and headers are set, and
 * hears itself of a client that goes away (the change stream, src/modules/events/stream-out.ts).
 */
export type StreamAnswer = { kind: 'stream'; status: 200 | 206 | 304; headers: Record<string, string>; body: Readable; direct?: (res: ServerResponse) => void };

/** The change stream of this process (src/modules/events/event-hub.ts), as the handlers see it. */
export type Events = EventHub;

export type HandlerContext = {
  em: EntityManager;
  caller: Caller;
  config: Config;
  urls: Urls;
  log: Logger;
  /**
   * The request as the handler sees it: its method (a write reads fresh, readerOf) and, for an upload, its body
   * stream. Handlers never write the response: they return data (answer.ts).
   */
  request: Request;
  memory: Memory;
  /** Resolves when an answer carrying this many bytes of text may be built (the answer gate, answer-gate.ts). */
  admit: (bytes: number) => Promise<void>;
  /**
   * Refuses work that can be refused (an import, an export, a new change stream) with 503 and `Retry-After` while
   * memory is tight (memory-pressure.ts); `what` names it in the problem's detail.
   */
  refuseWhenTight: (what: string) => void;
  /** The change feed's mark taken when the request began (src/cache/feed-cache.ts): keep a value only if it still holds. */
  heardAtStart: number;
  /** This process's change stream (GET /api/v1/events). */
  events: Events;
};

export function readerOf(context: HandlerContext): Reader {
  return { em: context.em, urls: context.urls, memory: context.memory, callerId: context.caller.user.id, fresh: context.request.method !== 'GET' };
}

type DataOf<Id extends OperationId> = Operations[Id]['data'];
type Part<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;

/** The validated input of an operation: every part typed by the document. */
export type Input<Id extends OperationId> = {
  path: DataOf<Id> extends { path?: infer P } ? Part<P> : Record<string, never>;
  query: DataOf<Id> extends { query?: infer Q } ? Part<Q> : Record<string, never>;
  body: DataOf<Id> extends { body?: infer B } ? B : undefined;
  headers: DataOf<Id> extends { headers?: infer H } ? Part<H> : Record<string, never>;
};

type ResponsesOf<Id extends OperationId> = Operations[Id]['responses'];
/** The JSON body of an operation's 200. */
export type BodyOf<Id extends OperationId> = ResponsesOf<Id> extends { 200: infer Body } ? Body : never;
/** What a handler returns: the 200 body (or an `Answer`: the body with its ETag or list place), `noContent` for a 204, `accepted(body)` for a 202, a stream where the 200 is bytes. */
export type Success<Id extends OperationId> =
  ResponsesOf<Id> extends { 204: unknown } ? NoContent
  : ResponsesOf<Id> extends { 202: infer Body } ? Accepted<Body>
  : ResponsesOf<Id> extends { 200: infer Body } ? ([Body] extends [Blob | File] ? StreamAnswer : Body | Answer<Body> | (Id extends StreamingOperation ? StreamAnswer : never))
  : never;

/** The operations whose 200 is also a stream of another media type (text/event-stream), beside their JSON. */
type StreamingOperation = 'streamEvents';

export type Handler<Id extends OperationId, S extends ScopeKind> = (
  input: Input<Id>,
  scope: ScopeOf<S>,
  context: HandlerContext,
) => Promise<Success<Id>>;

/** A built operation, branded with its operationId so it can only sit in the table under that id. */
export type OperationDefinition<Id extends OperationId, S extends ScopeKind = ScopeKind> = {
  readonly id: Id;
  readonly scope: S;
  /** The policy action the operation requires (policy.ts), read by the wrapper and by the role matrix test. */
  readonly action: Requirement;
  /** What the operation keeps in memory, and what it shows (src/cache/caching.ts); the wrapper keeps it. */
  readonly cache?: Caching<ScopeOf<S>, BodyOf<Id>> | undefined;
  readonly handle: Handler<Id, S>;
};

/**
 * `action` is required: the wrapper authorizes an action asked of nothing or of the note in scope before the handler
 * runs (`authorizeDeclared`); for one about an object (a comment's author) the handler calls `authorize` with it.
 */
export function defineOperation<Id extends OperationId, S extends ScopeKind>(
  id: Id,
  options: { scope: S; action: Requirement; cache?: Caching<ScopeOf<S>, BodyOf<Id>> },
  handle: Handler<Id, S>,
): OperationDefinition<Id, S> {
  return { id, scope: options.scope, action: options.action, cache: options.cache, handle };
}


/**
 * An operation the document describes outside /api/v1 that a plain express route serves (the OAuth endpoints,
 * driven by their library): `servedBy` names the module. Requests for it never reach the API router.
 */
export type ServedByRoute = { readonly servedBy: string };
export const servedByRoute = (module: string): ServedByRoute => ({ servedBy: module });

/** Every operation of the document with its handler: a missing one fails `tsc`. */
export type OperationTable = {
  [Id in OperationId]: OperationDefinition<Id, 'caller'> | OperationDefinition<Id, 'team'> | OperationDefinition<Id, 'note'>
    | OperationDefinition<Id, 'page'> | ServedByRoute;
};

export type AppServices = { config: Config; urls: Urls; memory: Memory; answers: AnswerGate; events: Events; pressure: MemoryPressure };
