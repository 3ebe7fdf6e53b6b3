// Structured JSON logs through pino, one object per line on stdout (LOG_LEVEL). Secrets are removed by the logger
// itself, whatever a call site passes: the Authorization and Cookie headers, Set-Cookie, and any field named like a
// credential (password, access_token, refresh_token, client_secret, token, secret, code_verifier, authorization,
// cookie) at any depth up to five; URLs are logged with the values of such query parameters replaced (`redactUrl`).
//
// Call sites use pino's order, `log.info({ fields }, 'message')`; the older `log.info('message', { fields })` still
// works at run time (a hook puts the fields first), though pino's types refuse it.
import pino from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type Logger = pino.Logger;

export const REDACTED = '[Redacted]';

/** Field names whose values never reach the log. */
const SECRET_FIELDS = ['password', 'access_token', 'refresh_token', 'client_secret', 'token', 'secret', 'code_verifier', 'authorization', 'cookie'];

// Explicit paths (pino's redaction, cheap without wildcards); any depth is covered by `scrub` below, which runs only
// for lines actually written (pino's wildcard paths cost time on every child logger, i.e. every request).
const redactPaths = ['request.headers.authorization', 'request.headers.cookie', 'request.headers["proxy-authorization"]', 'res.headers["set-cookie"]', ...SECRET_FIELDS];
const SECRET_NAMES = new Set([...SECRET_FIELDS, 'proxy-authorization', 'set-cookie']);

/** A copy of `value` with every field named like a credential replaced, down to a few levels. */
function scrub(value: unknown, depth: number): unknown {
  if (depth === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth - 1));
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = SECRET_NAMES.has(key.toLowerCase()) ? REDACTED : scrub(item, depth - 1);
  return copy;
}

/** A URL (path and query) with the values of credential-carrying query parameters replaced. */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = decodeSafely(equals === -1 ? pair : pair.slice(0, equals)).toLowerCase();
      return equals !== -1 && (SECRET_FIELDS.includes(name) || name === 'code') ? `${pair.slice(0, equals)}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, at)}?${query}`;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The path of a URL without its query string. */
export function pathOnly(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? url : url.slice(0, at);
}

export function createLogger(level: LogLevel, base: Record<string, unknown> = {}, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base,
    messageKey: 'message',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      bindings: (bindings) => scrub(bindings, 4) as Record<string, unknown>,
      log: (object) => scrub(object, 5) as Record<string, unknown>,
    },
    redact: { paths: redactPaths, censor: REDACTED },
    serializers: { err: pino.stdSerializers.err },
    hooks: {
      // `log.info('message', { fields })`, the project's order, becomes pino's `log.info({ fields }, 'message')`
      logMethod(args, method) {
        const [first, second] = args as unknown[];
        if (typeof first === 'string' && args.length === 2 && second !== null && typeof second === 'object') {
          method.apply(this, [second as object, first]);
          return;
        }
        method.apply(this, args);
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
