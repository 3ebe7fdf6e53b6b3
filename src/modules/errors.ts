// Errors of the domain: what went wrong, in the service's own words — a kind, the stable code clients switch on (from
// the Problem schema of the document: a code not listed there fails `tsc`), a detail — and never an HTTP status.
// Services, loaders and handlers throw these; the HTTP layer maps each kind to its status in one place
// (src/http/problem-details.ts, `toHttpError`), and the web views and OAuth pages render them through the same map.
import type { Problem } from '../../generated/client/types.gen.ts';

export type ErrorCode = Problem['code'];

/** A field the input got wrong: a JSON pointer into the body, or a parameter's name. */
export type FieldError = { pointer?: string; parameter?: string; detail: string };

export type FailureKind =
  | 'invalid'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'too_large'
  | 'unprocessable'
  | 'range_not_satisfiable'
  | 'unavailable';

export class DomainError extends Error {
  readonly kind: FailureKind;
  readonly code: ErrorCode;
  readonly errors: FieldError[] | undefined;
  /** Members of the problem body beyond the standard ones (`conflicts` of a `merge_conflict`). */
  readonly extensions: Record<string, unknown> | undefined;

  constructor(kind: FailureKind, code: ErrorCode, detail: string, options: { errors?: FieldError[]; extensions?: Record<string, unknown> } = {}) {
    super(detail);
    this.kind = kind;
    this.code = code;
    this.errors = options.errors;
    this.extensions = options.extensions;
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) => new DomainError('invalid', 'validation_failed', detail, errors ? { errors } : {});

export const forbidden = (detail: string) => new DomainError('forbidden', 'forbidden', detail);

export const notFound = (what: string) => new DomainError('not_found', 'not_found', `${what} not found`);

export const conflict = (code: ErrorCode, detail: string, errors?: FieldError[]) => new DomainError('conflict', code, detail, errors ? { errors } : {});

export const unprocessable = (code: ErrorCode, detail: string, errors?: FieldError[]) =>
  new DomainError('unprocessable', code, detail, errors ? { errors } : {});

export const payloadTooLarge = (detail: string) => new DomainError('too_large', 'payload_too_large', detail);

export const preconditionFailed = (detail: string) => new DomainError('precondition_failed', 'precondition_failed', detail);
