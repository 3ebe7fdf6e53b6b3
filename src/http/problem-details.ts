// The one error handler: every error of every request ends here and leaves as RFC 9457 problem details.
import type { ErrorRequestHandler } from 'express';
import { DeadlockException, ForeignKeyConstraintViolationException, LockWaitTimeoutException, NotFoundError, UniqueConstraintViolationException } from '@mikro-orm/core';
import { DomainError, type FieldError } from '../modules/errors.ts';
import { HttpError, defaultTitles, statusOf } from './errors.ts';

type ValidatorError = { status?: number; message?: string; errors?: { path?: string; message?: string; location?: string }[]; headers?: Record<string, string> };

function fromValidator(error: ValidatorError): HttpError | undefined {
  const status = error.status;
  if (typeof status !== 'number' || status < 400 || status > 599 || !Array.isArray(error.errors)) return undefined;
  const errors: FieldError[] = error.errors.map((item) => {
    const path = item.path ?? '';
    const detail = item.message ?? 'is invalid';
    if (item.location === 'body' || path.startsWith('/body') || path.startsWith('.body')) {
      return { pointer: toPointer(path.replace(/^[./]body/, '')), detail };
    }
    const name = path.replace(/^[./](query|path|params|headers)[./]?/, '');
    return { parameter: name, detail };
  });
  switch (status) {
    case 400: {
      const pathParam = errors.find((item) => item.parameter !== undefined && error.errors?.some((e) => e.path?.includes('params')));
      // A path parameter of the wrong shape (`/api/v1/teams/x/users/abc`) names nothing that can exist.
      if (pathParam) return new HttpError(404, 'not_found', 'not found', { errors });
      return new HttpError(400, 'validation_failed', summarize(errors), { errors });
    }
    case 404:
      return new HttpError(404, 'not_found', 'no such endpoint');
    case 405:
      return new HttpError(405, 'method_not_allowed', error.message ?? 'method not allowed', { headers: withHead(error.headers ?? {}) });
    case 413:
      return new HttpError(413, 'payload_too_large', error.message ?? 'request body too large');
    case 415:
      return new HttpError(415, 'unsupported_media_type', error.message ?? 'unsupported media type');
    default:
      return new HttpError(status, status >= 500 ? 'internal_error' : 'validation_failed', error.message ?? 'error');
  }
}

/** HEAD is answered wherever GET is (openapi.ts), so an `Allow` that names GET names HEAD too. */
function withHead(headers: Record<string, string>): Record<string, string> {
  const allow = headers.Allow?.split(/,\s*/);
  if (!allow?.includes('GET') || allow.includes('HEAD')) return headers;
  allow.splice(allow.indexOf('GET') + 1, 0, 'HEAD');
  return { ...headers, Allow: allow.join(', ') };
}

function toPointer(path: string): string {
  if (path === '' || path === '/') return '';
  return path.startsWith('/') ? path : `/${path.replace(/\./g, '/')}`;
}

function summarize(errors: FieldError[]): string {
  return errors.map((item) => `${item.pointer ?? item.parameter ?? ''} ${item.detail}`.trim()).join('; ') || 'invalid request';
}

type BodyParserError = { type?: string; status?: number; expose?: boolean; message?: string; code?: string; field?: string };

function fromBodyParser(error: BodyParserError): HttpError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new HttpError(400, 'malformed_body', 'the request body is not valid for its Content-Type');
    case 'entity.too.large':
      return new HttpError(413, 'payload_too_large', 'the request body is larger than the limit');
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new HttpError(415, 'unsupported_media_type', error.message ?? 'unsupported charset or encoding');
    case 'parameters.too.many':
      return new HttpError(413, 'payload_too_large', 'too many form parameters');
    case 'querystring.parse.rangeError':
      // qs with strictDepth: a form key nested deeper than the parser's depth (app.ts) is refused, not flattened
      return new HttpError(400, 'malformed_body', 'form field names are nested too deeply');
    case 'request.aborted':
      return new HttpError(400, 'malformed_body', 'the request body was cut off');
    default:
      break;
  }
  // multer (multipart) errors
  if (error.code === 'LIMIT_FILE_SIZE' || error.code === 'LIMIT_FIELD_VALUE' || error.code === 'LIMIT_PART_COUNT' || error.code === 'LIMIT_FILE_COUNT') {
    return new HttpError(413, 'payload_too_large', error.message ?? 'upload too large');
  }
  if (typeof error.code === 'string' && error.code.startsWith('LIMIT_')) {
    return new HttpError(400, 'malformed_body', error.message ?? 'malformed multipart body');
  }
  if (error.message === 'Unexpected end of form' || error.message === 'Malformed part header' || error.message?.startsWith('Multipart:')) {
    return new HttpError(400, 'malformed_body', 'the multipart body is malformed');
  }
  if (error.message?.startsWith('URIError') || error.message?.includes('URI malformed')) {
    return new HttpError(400, 'malformed_body', 'the request is not validly percent-encoded');
  }
  // A body whose Content-Encoding (gzip, deflate, br) does not decode: body-parser passes zlib's error on as a 400.
  if (typeof error.code === 'string' && /^(Z_|ERR_BROTLI|ERR__ERROR|ERR_ZSTD)/.test(error.code)) {
    return new HttpError(400, 'malformed_body', 'the request body does not decode with its Content-Encoding');
  }
  return undefined;
}

/** Any other client error of the body parsers (http-errors with `expose`), by its status, so none becomes a 500. */
function fromExposedClientError(error: BodyParserError): HttpError | undefined {
  const status = error.status;
  if (error.expose !== true || typeof status !== 'number' || status < 400 || status > 499) return undefined;
  switch (status) {
    case 400:
      return new HttpError(400, 'malformed_body', 'the request body could not be read');
    case 413:
      return new HttpError(413, 'payload_too_large', 'the request body is larger than the limit');
    case 415:
      return new HttpError(415, 'unsupported_media_type', 'unsupported charset or encoding');
    default:
      return new HttpError(400, 'malformed_body', error.message ?? 'the request could not be read');
  }
}

export function toHttpError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error instanceof DomainError) return new HttpError(statusOf[error.kind], error.code, error.message, { errors: error.errors, extensions: error.extensions });
  if (error instanceof NotFoundError) return new HttpError(404, 'not_found', 'not found');
  if (error instanceof UniqueConstraintViolationException) return new HttpError(409, 'already_exists', 'a conflicting record exists');
  if (error instanceof ForeignKeyConstraintViolationException) return new HttpError(409, 'still_referenced', 'the record is still referenced');
  // two transactions that each wait for the other: PostgreSQL aborts one, which lost the race
  if (error instanceof DeadlockException || error instanceof LockWaitTimeoutException) {
    return new HttpError(409, 'concurrent_change', 'a concurrent change to the same objects won; read them again and retry');
  }
  if (error instanceof URIError) return new HttpError(400, 'malformed_body', 'the request is not validly percent-encoded');
  if (error && typeof error === 'object') {
    return fromBodyParser(error as BodyParserError) ?? fromValidator(error as ValidatorError) ?? fromExposedClientError(error as BodyParserError);
  }
  return undefined;
}

export const problemDetails: ErrorRequestHandler = (error, req, res, _next) => {
  const requestId = req.requestId ?? 'unknown';
  let problem = toHttpError(error);
  if (!problem || (problem.status === 500 && !(error instanceof HttpError))) {
    // Unknown errors, and response validation failures (our bug, never the client's), leave as a generic 500; the
    // stack goes to the log only.
    req.log?.error({
      error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
    }, 'request failed');
    problem = new HttpError(500, 'internal_error', 'the server failed to answer; the request id identifies it in the logs');
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  const body = {
    type: 'about:blank',
    title: problem.title ?? defaultTitles[problem.status],
    status: problem.status,
    detail: problem.message,
    code: problem.code,
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...problem.extensions,
    request_id: requestId,
  };
  res.status(problem.status).type('application/problem+json; charset=utf-8').send(JSON.stringify(body));
};
