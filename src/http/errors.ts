// Errors of the HTTP exchange itself (a missing token, a method a path lacks, a body that cannot be read, a range
// past the end, a server shutting down), with their status and headers; the domain's errors carry no status
// (src/modules/errors.ts) and are mapped here, in one place (`statusOf`). The one error handler
// (problem-details.ts) turns both into RFC 9457 problem details. `code` is the stable, machine-readable part clients
// switch on, from the list in the Problem schema of the document (a code that is not listed there fails `tsc`).
import type { ErrorCode, FailureKind, FieldError } from '../modules/errors.ts';

export class HttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  /** Members of the problem body beyond the standard ones (`conflicts` of a `merge_conflict`). */
  readonly extensions: Record<string, unknown> | undefined;

  constructor(
    status: number,
    code: ErrorCode,
    detail: string,
    options: { title?: string; errors?: FieldError[]; headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.status = status;
    this.code = code;
    this.title = options.title ?? defaultTitles[status] ?? 'Error';
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions;
  }
}

export const defaultTitles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const unauthorized = (detail: string, tokenWasSent: boolean) =>
  new HttpError(401, 'unauthorized', detail, {
    headers: {
      'WWW-Authenticate': tokenWasSent
        ? `Bearer realm="notes", error="invalid_token", error_description="${detail}"`
        : 'Bearer realm="notes"',
    },
  });

/** The status of each kind of domain error: the one place a domain error becomes HTTP. */
export const statusOf: Record<FailureKind, number> = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  too_large: 413,
  unprocessable: 422,
  range_not_satisfiable: 416,
  unavailable: 503,
};
