// Per-token request budget over a fixed one-hour window, kept in memory (one server process). Every answer carries
// the RateLimit-* headers; past the budget the answer is 429 with Retry-After.
import type { RequestHandler } from 'express';
import { HttpError } from './errors.ts';

const WINDOW_MS = 3_600_000;

export function rateLimit(limitPerHour: number): RequestHandler {
  const windows = new Map<number, { startedAt: number; count: number }>();
  return (req, res, next) => {
    const tokenId = req.caller?.tokenId;
    if (tokenId === undefined) return next();
    const now = Date.now();
    let window = windows.get(tokenId);
    if (!window || now - window.startedAt >= WINDOW_MS) {
      window = { startedAt: now, count: 0 };
      windows.set(tokenId, window);
    }
    window.count += 1;
    const resetSeconds = Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000));
    res.setHeader('RateLimit-Limit', String(limitPerHour));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, limitPerHour - window.count)));
    res.setHeader('RateLimit-Reset', String(resetSeconds));
    if (window.count > limitPerHour) {
      throw new HttpError(429, 'rate_limited', `more than ${limitPerHour} requests this hour with this token`, {
        headers: { 'Retry-After': String(resetSeconds) },
      });
    }
    next();
  };
}
