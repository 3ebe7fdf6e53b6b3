// Browser sessions: who is signed in on this browser, for the server-rendered pages (the OAuth sign-in and consent
// pages now, the HTML views later). Server-side: the cookie holds a random secret, the database its SHA-256, so a
// session can be ended anywhere (sign-out, the user deleted) and nothing about the user sits in the cookie.
//
// Cookies: `notes_session` (the session) and, before sign-in, `notes_csrf` (a double-submit token for the sign-in
// form); both HttpOnly, SameSite=Lax, Path=/, and Secure when the public URL is https. A cookie never authorizes
// /api/v1: the API reads only bearer tokens (src/http/auth.ts).
//
// Use: `const sessions = createSessions({ secure })`, then `read`, `start`, `end`, `csrfToken`, `checkCsrf` (the
// OAuth pages, src/modules/oauth/authorize.routes.ts, are the example). It keeps no state in memory, so every part of
// the app that serves pages may make its own instance.
//
// CSRF: every form carries `csrf_token`; `checkCsrf` compares it with the session's own token once signed in, with
// the `notes_csrf` cookie before.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import { currentTime } from '../../db/timestamps.ts';
import type { User } from '../users/user.entity.ts';
import { BrowserSession } from './session.entity.ts';

export const SESSION_COOKIE = 'notes_session';
export const CSRF_COOKIE = 'notes_csrf';
const SESSION_LIFETIME_MS = 14 * 86_400_000;

export type SignedIn = { sessionId: number; user: User; csrfToken: string };

export type Sessions = {
  /** The signed-in session of this request's browser, or undefined (no cookie, unknown, expired). */
  read(req: Request): Promise<SignedIn | undefined>;
  /** Signs the browser in as `user`: a new session (a session from before is ended: no fixation). */
  start(req: Request, res: Response, user: User): Promise<SignedIn>;
  end(req: Request, res: Response): Promise<void>;
  /** The token a form must carry back: the session's, or the browser's pre-sign-in token (set here if missing). */
  csrfToken(req: Request, res: Response, session: SignedIn | undefined): string;
  checkCsrf(req: Request, submitted: unknown, session: SignedIn | undefined): boolean;
};

const hash = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
const random = () => randomBytes(32).toString('base64url');

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function createSessions(options: { secure: boolean }): Sessions {
  const cookieOptions = { httpOnly: true, sameSite: 'lax' as const, secure: options.secure, path: '/' };
  const em = (req: Request): EntityManager => req.em;

  const read: Sessions['read'] = async (req) => {
    const secret = readCookie(req, SESSION_COOKIE);
    if (!secret || secret.length > 100) return undefined;
    const session = await em(req).findOne(BrowserSession, { secretHash: hash(secret) }, { populate: ['user'] });
    if (!session || session.expiresAt.getTime() <= Date.now()) return undefined;
    return { sessionId: session.id, user: session.user, csrfToken: session.csrfToken };
  };

  const end: Sessions['end'] = async (req, res) => {
    const secret = readCookie(req, SESSION_COOKIE);
    if (secret) await em(req).nativeDelete(BrowserSession, { secretHash: hash(secret) });
    res.clearCookie(SESSION_COOKIE, cookieOptions);
  };

  return {
    read,
    end,
    async start(req, res, user) {
      const previous = readCookie(req, SESSION_COOKIE);
      if (previous) await em(req).nativeDelete(BrowserSession, { secretHash: hash(previous) });
      await em(req).nativeDelete(BrowserSession, { user: user.id, expiresAt: { $lte: currentTime() } });
      const secret = random();
      const session = em(req).create(BrowserSession, {
        secretHash: hash(secret),
        user,
        csrfToken: random(),
        expiresAt: new Date(currentTime().getTime() + SESSION_LIFETIME_MS),
      });
      await em(req).flush();
      res.cookie(SESSION_COOKIE, secret, { ...cookieOptions, maxAge: SESSION_LIFETIME_MS });
      res.clearCookie(CSRF_COOKIE, cookieOptions);
      return { sessionId: session.id, user, csrfToken: session.csrfToken };
    },
    csrfToken(req, res, session) {
      if (session) return session.csrfToken;
      const existing = readCookie(req, CSRF_COOKIE);
      if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
      const token = random();
      res.cookie(CSRF_COOKIE, token, cookieOptions);
      return token;
    },
    checkCsrf(req, submitted, session) {
      if (typeof submitted !== 'string' || submitted === '') return false;
      const expected = session ? session.csrfToken : readCookie(req, CSRF_COOKIE);
      return expected !== undefined && sameText(expected, submitted);
    },
  };
}
