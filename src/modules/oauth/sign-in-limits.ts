// Brute force: every sign-in attempt (the sign-in page and the password grant alike) counts against the account
// named and against the client's address, each in a fixed window kept in memory (one server process, like the
// per-token limit in src/http/rate-limit.ts). Past either budget the answer is 429 with Retry-After; every answer
// carries the RateLimit-* headers of the tighter of the two.
import type { Response } from 'express';
import type { OAuthSettings } from '../../config.ts';

type Window = { startedAt: number; count: number };
export type Verdict = { limit: number; remaining: number; resetSeconds: number; exceeded: boolean };

class FixedWindows {
  private readonly windows = new Map<string, Window>();
  private readonly limit: number;
  private readonly windowMs: number;
  constructor(limit: number, windowMs: number) {
    this.limit = limit;
    this.windowMs = windowMs;
  }

  hit(key: string, now: number): Verdict {
    if (this.windows.size > 100_000) this.sweep(now);
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= this.windowMs) {
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return {
      limit: this.limit,
      remaining: Math.max(0, this.limit - window.count),
      resetSeconds: Math.max(1, Math.ceil((window.startedAt + this.windowMs - now) / 1000)),
      exceeded: window.count > this.limit,
    };
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.startedAt >= this.windowMs) this.windows.delete(key);
  }
}

export type SignInLimits = { attempt(account: string, address: string): Verdict };

export function signInLimits(settings: OAuthSettings): SignInLimits {
  const windowMs = settings.signInWindowSeconds * 1000;
  const accounts = new FixedWindows(settings.signInAttemptsPerAccount, windowMs);
  const addresses = new FixedWindows(settings.signInAttemptsPerAddress, windowMs);
  return {
    attempt(account, address) {
      const now = Date.now();
      const byAccount = accounts.hit(account.toLowerCase(), now);
      const byAddress = addresses.hit(address, now);
      const exceeded = [byAccount, byAddress].filter((verdict) => verdict.exceeded);
      if (exceeded.length > 0) return exceeded.reduce((a, b) => (a.resetSeconds >= b.resetSeconds ? a : b));
      return byAccount.remaining <= byAddress.remaining ? byAccount : byAddress;
    },
  };
}

export function sendRateLimitHeaders(res: Response, verdict: Verdict): void {
  res.setHeader('RateLimit-Limit', String(verdict.limit));
  res.setHeader('RateLimit-Remaining', String(verdict.remaining));
  res.setHeader('RateLimit-Reset', String(verdict.resetSeconds));
  if (verdict.exceeded) res.setHeader('Retry-After', String(verdict.resetSeconds));
}
