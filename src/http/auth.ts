// Authentication for /api/v1: a bearer token in the Authorization header, or the `access_token` query parameter
// (removed from the URL here, so nothing downstream sees or logs it). Read-scoped tokens may only read.
import type { RequestHandler } from 'express';
import { currentTime } from '../db/timestamps.ts';
import { findUsableToken } from '../modules/auth/tokens.ts';
import { HttpError, unauthorized } from './errors.ts';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LAST_USED_GRANULARITY_MS = 60_000;

function takeQueryToken(url: string): { url: string; token?: string } {
  const queryAt = url.indexOf('?');
  if (queryAt === -1) return { url };
  const params = new URLSearchParams(url.slice(queryAt + 1));
  const token = params.get('access_token') ?? undefined;
  if (token === undefined) return { url };
  params.delete('access_token');
  const rest = params.toString();
  return { url: url.slice(0, queryAt) + (rest ? `?${rest}` : ''), token };
}

export function authenticate(): RequestHandler {
  return async (req, _res, next) => {
    let fromQuery: string | undefined;
    try {
      const taken = takeQueryToken(req.url);
      req.url = taken.url;
      fromQuery = taken.token;
    } catch {
      throw new HttpError(400, 'malformed_body', 'the query string is not validly encoded');
    }
    const header = req.get('authorization');
    let secret: string | undefined;
    if (header !== undefined) {
      const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
      if (!match) throw unauthorized('the Authorization header must be "Bearer <token>"', true);
      secret = match[1];
    } else if (fromQuery !== undefined && fromQuery !== '') {
      secret = fromQuery;
    }
    if (secret === undefined) throw unauthorized('a bearer token is required', false);
    const { token, expired } = await findUsableToken(req.em, secret);
    if (!token) throw unauthorized(expired ? 'the token has expired' : 'the token is not valid', true);
    if (token.scope === 'read' && !READ_METHODS.has(req.method)) {
      throw new HttpError(403, 'insufficient_scope', 'this token may only read; a write-scoped token is needed', {
        headers: { 'WWW-Authenticate': 'Bearer realm="notes", error="insufficient_scope", scope="write"' },
      });
    }
    const now = currentTime();
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() >= LAST_USED_GRANULARITY_MS) {
      await req.em.execute('update tokens set last_used_at = ? where id = ?', [now, token.id]);
    }
    req.caller = { user: token.user, token };
    next();
  };
}
