// Typed errors thrown anywhere in a request; the one error handler (problem-details.ts) turns them into RFC 9457
// problem details. `code` is the stable, machine-readable part clients switch on: one code per kind of failure, from
// the list in the Problem schema of the document (a code that is not listed there fails `tsc`).
import type { Problem } from '../../generated/client/types.gen.ts';

export type ErrorCode = Problem['code'];

export type FieldError = { pointer?: string; parameter?: string; detail: string };

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

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new HttpError(400, 'validation_failed', detail, errors ? { errors } : {});

export const unauthorized = (detail: string, tokenWasSent: boolean) =>
  new HttpError(401, 'unauthorized', detail, {
    headers: {
      'WWW-Authenticate': tokenWasSent
        ? `Bearer realm="notes", error="invalid_token", error_description="${detail}"`
        : 'Bearer realm="notes"',
    },
  });

export const forbidden = (detail: string) => new HttpError(403, 'forbidden', detail);

export const notFound = (what: string) => new HttpError(404, 'not_found', `${what} not found`);

export const conflict = (code: ErrorCode, detail: string, errors?: FieldError[]) =>
  new HttpError(409, code, detail, errors ? { errors } : {});

export const unprocessable = (code: ErrorCode, detail: string, errors?: FieldError[]) =>
  new HttpError(422, code, detail, errors ? { errors } : {});

export const payloadTooLarge = (detail: string) => new HttpError(413, 'payload_too_large', detail);

