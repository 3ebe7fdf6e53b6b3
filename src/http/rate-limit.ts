// Request budgets over fixed windows, shared by every server process on the database: the count lives in the table
// `rate_limits` (migration 0011), moved by one atomic upsert, so N processes behind a load balancer grant a budget
// once in all, never N times. The same store serves the embedded database (one process), so there is one code path.
// Used for the per-token budget (RATE_LIMIT_PER_HOUR, below) and the sign-in limits (modules/oauth/sign-in-limits.ts).
//
// Cost of the per-token budget: a process does not write the row on every request. It takes a lease of several
// requests at once — 1% of what is left of the budget (at most 50, or more for a token whose leases last under a
// tenth of a second: the size asked doubles each time, never past 1% of what is left), or as many as its requests
// waiting for one if more, never more than is left — and spends it from memory; a lease is one statement, and only
// one per key is in flight in a process at a time. With the default budget of 5,000 that is one statement per 50
// requests at first; in the last 100 of the hour, leases are exactly what is waiting. What this gives up: a lease
// left unspent (its process stopped, or its clients moved to another process) is not given back, so a token may get
// up to 1% of its budget fewer requests per process in an hour (50 of the default 5,000), never more; and
// RateLimit-Remaining counts the other processes' unspent leases as spent. Once the database says a budget is spent,
// the process refuses from memory until the
// window ends (flooding costs no statement).
//
// Every answer carries the RateLimit-* headers; past the budget the answer is 429 with Retry-After.
import type { Request, RequestHandler, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { leaseStatement, takeLease } from '../db/rate-limits.repository.ts';
import { HttpError } from './errors.ts';

const MAX_TRACKED_KEYS = 10_000;

export type Verdict = { limit: number; remaining: number; resetSeconds: number; exceeded: boolean };

type Waiter = { resolve: (verdict: Verdict) => void; reject: (error: unknown) => void };

/**
 * What this process holds of one key's window (`started`: the database's; `windowEnd`: on this process's clock;
 * `takenAt` and `ask`: when the last lease was taken, and the size asked for).
 */
type Lease = { started: number; windowEnd: number; used: number; left: number; takenAt: number; ask: number };

/** A key whose leases last less than this is leased twice as much next time (up to 1% of what is left). */
const FAST_LEASE_MS = 100;
/** A lease that lasted longer than this brings the size asked for back to `maxLease`. */
const SLOW_LEASE_MS = 1000;

/** A budget of `limit` requests per window of `windowSeconds` for each key, kept in `rate_limits`. */
export class SharedBudget {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #sql: string;
  readonly #maxLease: number;
  readonly #leases = new Map<string, Lease>();
  /** Per key: the requests waiting for a lease, and whether one is being taken. */
  readonly #queues = new Map<string, { waiting: Waiter[]; taking: boolean }>();

  /** `maxLease` 1: every request asks the database (the sign-in limits: few requests, each one counted there). */
  constructor(limit: number, windowSeconds: number, options: { maxLease: number; leaseDivisor?: number }) {
    this.#limit = limit;
    this.#windowMs = windowSeconds * 1000;
    this.#maxLease = options.maxLease;
    this.#sql = leaseStatement(limit, windowSeconds, options.maxLease, options.leaseDivisor ?? 100);
  }

  /**
   * Spends one request of `key`'s budget (exceeded: none was left). `em` may be a function giving it: only a lease
   * to take needs one (a request's entity manager is made when first used).
   */
  spend(em: EntityManager | (() => EntityManager), key: string): Promise<Verdict> {
    const now = Date.now();
    const lease = this.#leases.get(key);
    if (lease && now < lease.windowEnd) {
      if (lease.left > 0) {
        lease.left -= 1;
        return Promise.resolve(this.#verdict(lease, now, false));
      }
      // a spent budget (used >= limit) is refused from memory until its window ends
      if (lease.used >= this.#limit) return Promise.resolve(this.#verdict(lease, now, true));
    }
    // One lease in flight per key, asked for every request waiting when it is sent; those arriving meanwhile wait
    // for the next. Each waiter is served from the lease taken for it, so none waits forever behind newcomers.
    let queue = this.#queues.get(key);
    if (!queue) this.#queues.set(key, (queue = { waiting: [], taking: false }));
    const answer = new Promise<Verdict>((resolve, reject) => queue.waiting.push({ resolve, reject }));
    if (!queue.taking) void this.#drain(typeof em === 'function' ? em() : em, key, queue);
    return answer;
  }

  async #drain(em: EntityManager, key: string, queue: { waiting: Waiter[]; taking: boolean }): Promise<void> {
    queue.taking = true;
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0);
      try {
        const lease = await this.#take(em, key, batch.length);
        const now = Date.now();
        for (const waiter of batch) {
          const granted = lease.left > 0;
          if (granted) lease.left -= 1;
          waiter.resolve(this.#verdict(lease, now, !granted));
        }
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    }
    queue.taking = false;
    this.#queues.delete(key);
  }

  /**
   * The size to ask for: `maxLease`, doubled each time the last lease lasted under FAST_LEASE_MS (a key spending
   * thousands of requests a second takes a lease every tenth of a second, not one per 50 requests), kept while they
   * last under SLOW_LEASE_MS. The statement never grants more than 1/divisor of what is left beyond what is waiting.
   */
  #askFor(held: Lease | undefined, now: number): number {
    if (this.#maxLease <= 1 || !held) return this.#maxLease;
    const lasted = now - held.takenAt;
    if (lasted < FAST_LEASE_MS) return Math.min(held.ask * 2, 1_000_000);
    return lasted < SLOW_LEASE_MS ? held.ask : this.#maxLease;
  }

  async #take(em: EntityManager, key: string, want: number): Promise<Lease> {
    const ask = this.#askFor(this.#leases.get(key), Date.now());
    const row = await takeLease(em, this.#sql, key, want, ask);
    const started = Number(row.started);
    // the window's end on this process's clock: what the database says is left of it, from now
    const windowEnd = Date.now() + (started + this.#windowMs - Number(row.now));
    const held = this.#leases.get(key);
    // what is left of a lease of the same window is kept with the new one
    const left = Number(row.granted) + (held && held.started === started ? held.left : 0);
    if (this.#leases.size >= MAX_TRACKED_KEYS && !held) this.#leases.clear(); // only unspent leases are lost: fewer requests, never more
    const lease = { started, windowEnd, used: Number(row.used), left, takenAt: Date.now(), ask };
    this.#leases.set(key, lease);
    return lease;
  }

  #verdict(lease: Lease, now: number, exceeded: boolean): Verdict {
    return {
      limit: this.#limit,
      remaining: Math.max(0, this.#limit - lease.used + lease.left),
      resetSeconds: Math.max(1, Math.ceil((lease.windowEnd - now) / 1000)),
      exceeded,
    };
  }
}

/** The per-token budget (RATE_LIMIT_PER_HOUR): one per app, shared by `rateLimit` and the hot reads. */
export function tokenBudget(limitPerHour: number): SharedBudget {
  return new SharedBudget(limitPerHour, 3600, { maxLease: 50 });
}

/** The key of a token's budget. */
function tokenBudgetKey(tokenId: number): string {
  return `token:${tokenId}`;
}

/** The RateLimit-* headers of a verdict, on every answer. */
export function setRateLimitHeaders(res: Response, verdict: Verdict): void {
  res.setHeader('RateLimit-Limit', String(verdict.limit));
  res.setHeader('RateLimit-Remaining', String(verdict.remaining));
  res.setHeader('RateLimit-Reset', String(verdict.resetSeconds));
}

/**
 * Spends one request of the token's budget, once per request: the verdict is kept on the response, and a second call
 * (rateLimit after the hot reads let the request go on) answers it again.
 */
export function spendOnce(budget: SharedBudget, req: Request, res: Response, tokenId: number): Promise<Verdict> {
  const spent = res.locals.rateVerdict as Promise<Verdict> | undefined;
  if (spent) return spent;
  const verdict = budget.spend(() => req.em, tokenBudgetKey(tokenId));
  res.locals.rateVerdict = verdict;
  return verdict;
}

export function rateLimit(budget: SharedBudget): RequestHandler {
  return async (req, res, next) => {
    const tokenId = req.caller?.tokenId;
    if (tokenId === undefined) return next();
    const verdict = await spendOnce(budget, req, res, tokenId);
    setRateLimitHeaders(res, verdict);
    if (verdict.exceeded) {
      throw new HttpError(429, 'rate_limited', `more than ${verdict.limit} requests this hour with this token`, {
        headers: { 'Retry-After': String(verdict.resetSeconds) },
      });
    }
    next();
  };
}
