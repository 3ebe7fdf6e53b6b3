// Authentication for /api/v1: a bearer token in the Authorization header, or the `access_token` query parameter
// (removed from the URL here, so nothing downstream sees or logs it). Read-scoped tokens may only read.
//
// Looking a token up with its user is the costliest statement of a small read, so tokens are cached in this process
// for a minute, keyed by the SHA-256 of the secret. A cached token is confirmed by the request's first statement
// (the scope loaded for the handler carries `token_alive`; operations without a scope run `confirmToken`), so a token
// revoked anywhere stops working at once; `forgetToken` drops it here too.
import { markTokenUsed } from '../modules/auth/auth.repository.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestHandler } from 'express';
import type { Caller } from '../modules/access/caller.ts';
import { clientOfToken, findUsableToken, hashToken } from '../modules/auth/tokens.ts';
import { HttpError, unauthorized } from './errors.ts';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LAST_USED_GRANULARITY_MS = 60_000;
const CACHE_LIFETIME_MS = 60_000;
const CACHE_ENTRIES = 10_000;

type CachedToken = { caller: Omit<Caller, 'tokenConfirmed'>; expiresAt: number | null; lastUsedAt: number; cachedAt: number };
const tokenCache = new Map<string, CachedToken>();

/** Drops a token from this process's cache (after a revoke, or when its confirmation failed). */
export function forgetToken(tokenId: number): void {
  for (const [hash, entry] of tokenCache) if (entry.caller.tokenId === tokenId) tokenCache.delete(hash);
}

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

/** The secret of an Authorization header `Bearer <token>`, or undefined when it has another form. */
function bearerSecret(header: string): string | undefined {
  return /^Bearer[ ]+([^\s]+)\s*$/i.exec(header)?.[1];
}

/** A cached token that needs no statement now: fresh in the cache, not expired, its last use recorded within the minute. */
function usableFromMemory(entry: CachedToken | undefined, now: number): entry is CachedToken {
  return entry !== undefined && now - entry.cachedAt < CACHE_LIFETIME_MS && (entry.expiresAt === null || entry.expiresAt > now) &&
    now - entry.lastUsedAt < LAST_USED_GRANULARITY_MS;
}

/**
 * The caller of an Authorization header whose token this process can take from memory alone, with nothing to write
 * (what `authenticate` would find with no statement), or undefined: then `authenticate` decides. The hot reads
 * (hot-reads.ts) use it; scope by method is theirs to check (they only serve GET).
 */
export function callerFromMemory(header: string | undefined, now: number): Caller | undefined {
  if (header === undefined) return undefined;
  const secret = bearerSecret(header);
  if (secret === undefined) return undefined;
  const entry = tokenCache.get(hashToken(secret));
  return usableFromMemory(entry, now) ? { ...entry.caller, tokenConfirmed: false } : undefined;
}

async function lookUp(em: EntityManager, hash: string, now: number): Promise<{ entry?: CachedToken; confirmed: boolean; expired: boolean }> {
  const cached = tokenCache.get(hash);
  if (cached && now - cached.cachedAt < CACHE_LIFETIME_MS) {
    if (cached.expiresAt !== null && cached.expiresAt <= now) return { confirmed: false, expired: true };
    return { entry: cached, confirmed: false, expired: false };
  }
  const { token, expired } = await findUsableToken(em, hash);
  if (!token) {
    tokenCache.delete(hash);
    return { confirmed: true, expired };
  }
  // an app's way of writing and its name are taken when the token is looked up, and cached with it
  const app = token.clientId == null ? null : await clientOfToken(em, token.clientId);
  const entry: CachedToken = {
    caller: {
      user: token.user,
      tokenId: token.id,
      tokenScope: token.scope,
      clientId: token.clientId ?? null,
      clientWrites: app?.writes ?? 'direct',
      via: app?.via ?? null,
    },
    expiresAt: token.expiresAt ? token.expiresAt.getTime() : null,
    lastUsedAt: token.lastUsedAt ? token.lastUsedAt.getTime() : 0,
    cachedAt: now,
  };
  if (tokenCache.size >= CACHE_ENTRIES) tokenCache.delete(tokenCache.keys().next().value!);
  tokenCache.set(hash, entry);
  return { entry, confirmed: true, expired: false };
}

/**
 * The caller a bearer token's secret names, looked up in the database (never from the cache), or undefined for an
 * unknown or expired token: for the live editor's connections, which authenticate outside a request.
 */
export async function callerOfSecret(em: EntityManager, secret: string): Promise<Caller | undefined> {
  const hash = hashToken(secret);
  tokenCache.delete(hash);
  const { entry } = await lookUp(em, hash, Date.now());
  return entry ? { ...entry.caller, tokenConfirmed: true } : undefined;
}

/** `cache: false` looks the token up on every request (the HTML views, which run no scope statement). */
/**
 * `scopeByMethod: false`: a `read` token may use any method (the MCP endpoint takes every call as a POST and checks
 * the token's scope per tool instead).
 */
export function authenticate(options: { cache?: boolean; scopeByMethod?: boolean } = {}): RequestHandler {
  const useCache = options.cache ?? true;
  const scopeByMethod = options.scopeByMethod ?? true;
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
      secret = bearerSecret(header);
      if (secret === undefined) throw unauthorized('the Authorization header must be "Bearer <token>"', true);
    } else if (fromQuery !== undefined && fromQuery !== '') {
      secret = fromQuery;
    }
    if (secret === undefined) throw unauthorized('a bearer token is required', false);
    const hash = hashToken(secret);
    const now = Date.now();
    if (!useCache) tokenCache.delete(hash);
    const { entry, confirmed, expired } = await lookUp(req.em, hash, now);
    if (!entry) throw unauthorized(expired ? 'the token has expired' : 'the token is not valid', true);
    if (scopeByMethod && entry.caller.tokenScope === 'read' && !READ_METHODS.has(req.method)) {
      throw new HttpError(403, 'insufficient_scope', 'this token may only read; a write-scoped token is needed', {
        headers: { 'WWW-Authenticate': 'Bearer realm="notes", error="insufficient_scope", scope="write"' },
      });
    }
    if (now - entry.lastUsedAt >= LAST_USED_GRANULARITY_MS) {
      entry.lastUsedAt = now;
      await markTokenUsed(req.em, entry.caller.tokenId);
    }
    req.caller = { ...entry.caller, tokenConfirmed: confirmed };
    next();
  };
}

/** For a request whose token came from the cache and that loads no scope: one statement confirms it still exists. */
export async function confirmToken(em: EntityManager, caller: Caller): Promise<void> {
  if (caller.tokenConfirmed) return;
  const rows = await em.execute<{ alive: boolean }[]>(
    'select exists (select 1 from tokens where id = ? and (expires_at is null or expires_at > now())) as alive',
    [caller.tokenId],
  );
  requireLiveToken(caller, rows[0]?.alive === true);
}

/** 401 (and forgotten here) when the confirmation found the token gone or expired. */
export function requireLiveToken(caller: Caller, alive: boolean): void {
  if (caller.tokenConfirmed || alive) return;
  forgetToken(caller.tokenId);
  throw unauthorized('the token is not valid', true);
}
