// Brute force: every sign-in attempt (the sign-in page and the password grant alike) counts against the account
// named and against the client's address, each in a fixed window kept in PostgreSQL and shared by every server
// process (src/http/rate-limit.ts). Past either budget the answer is 429 with Retry-After; every answer
// carries the RateLimit-* headers of the tighter of the two.
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OAuthSettings } from '../../config.ts';
import { SharedBudget, type Verdict } from '../../http/rate-limit.ts';
import { foldCase } from '../text/fold.ts';

export type { Verdict };
export type SignInLimits = { attempt(em: EntityManager, account: string, address: string): Promise<Verdict> };

/**
 * The key of an account's budget: the foldCase key of the name (text/fold.ts), the one sign-in looks the user up by,
 * so `ALICE`, `alice` and `ａｌｉｃｅ` spend one budget. A name longer than any username (39 characters) names no account,
 * yet its attempts still count; past 64 characters it is neither folded (NFKC can make a text 18 times longer) nor
 * stored but hashed, so a 2 MiB "login" cannot become a row key (PostgreSQL refuses index rows past ~2.7 KB).
 */
export function accountKey(account: string): string {
  const name = account.length <= 64 ? foldCase(account) : account;
  return name.length <= 64 ? `account:${name}` : `account#${createHash('sha256').update(name, 'utf8').digest('hex')}`;
}

export function signInLimits(settings: OAuthSettings): SignInLimits {
  // every attempt is counted in the database (no lease): few requests, and each one matters
  const accounts = new SharedBudget(settings.signInAttemptsPerAccount, settings.signInWindowSeconds, { maxLease: 1 });
  const addresses = new SharedBudget(settings.signInAttemptsPerAddress, settings.signInWindowSeconds, { maxLease: 1 });
  return {
    async attempt(em, account, address) {
      const byAccount = await accounts.spend(em, accountKey(account));
      const byAddress = await addresses.spend(em, `address:${address}`);
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
