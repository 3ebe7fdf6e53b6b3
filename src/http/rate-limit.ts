// Per-token request budget over a fixed one-hour window, shared by every server process on the database: the count
// lives in the table `rate_limits` (migration 0011), moved by one atomic upsert, so N processes behind a load
// balancer grant N requests per hour in all, never more. The same store serves the embedded database (one process).
//
// Cost: a process does not write the row on every request. It takes a lease of several requests at once — 1% of what
// is left of the budget, at most 50, at least 1 — and spends it from memory; a lease is one statement. With the
// default budget of 5,000 that is one statement per 50 requests at first, one per request for the last 100 of the
// hour. What this gives up: a lease left unspent (its process stopped, or its clients moved to another process) is
// not given back, so a token may get up to 50 requests fewer than its budget per process in an hour, never more; and
// RateLimit-Remaining counts the other processes' unspent leases as spent. Once the database says the budget is
// spent, the process refuses from memory until the window ends (flooding a spent budget costs no statement).
//
// Every answer carries the RateLimit-* headers; past the budget the answer is 429 with Retry-After.
import type { RequestHandler } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { HttpError } from './errors.ts';

const WINDOW_MS = 3_600_000;
const MAX_LEASE = 50;
/** A lease is this fraction of what is left (1/100). */
const LEASE_DIVISOR = 100;
const MAX_TRACKED_TOKENS = 10_000;

/** What this process holds of one token's window. */
type Lease = { windowEnd: number; used: number; left: number };

/** The lease the database hands out when `remaining` (an SQL expression) requests are left. */
const leaseOf = (remaining: string) =>
  `(case when ${remaining} <= 0 then 0 else least(${remaining}, greatest(1, least(${MAX_LEASE}, (${remaining}) / ${LEASE_DIVISOR}))) end)`;

function leaseStatement(limit: number): string {
  const expired = `r.window_start <= now() - interval '1 hour'`;
  const remaining = `(case when ${expired} then ${limit} else ${limit} - r.used end)`;
  return `insert into rate_limits as r (token_id, window_start, used, granted) values (?, now(), ${leaseOf(String(limit))}, ${leaseOf(String(limit))})
    on conflict (token_id) do update set
      window_start = case when ${expired} then now() else r.window_start end,
      used = (case when ${expired} then 0 else r.used end) + ${leaseOf(remaining)},
      granted = ${leaseOf(remaining)}
    returning used, granted, (extract(epoch from window_start) * 1000)::float8 as started`;
}

async function takeLease(em: EntityManager, sql: string, tokenId: number): Promise<Lease> {
  const rows = await em.execute<{ used: number; granted: number; started: number }[]>(sql, [tokenId]);
  const row = rows[0]!;
  return { windowEnd: Number(row.started) + WINDOW_MS, used: Number(row.used), left: Number(row.granted) };
}

export function rateLimit(limitPerHour: number): RequestHandler {
  const sql = leaseStatement(limitPerHour);
  const leases = new Map<number, Lease>();
  return async (req, res, next) => {
    const tokenId = req.caller?.tokenId;
    if (tokenId === undefined) return next();
    const now = Date.now();
    let lease = leases.get(tokenId);
    // a spent budget (used >= limit) is refused from memory until its window ends
    if (!lease || now >= lease.windowEnd || (lease.left === 0 && lease.used < limitPerHour)) {
      lease = await takeLease(req.em, sql, tokenId);
      if (leases.size >= MAX_TRACKED_TOKENS) leases.clear(); // only unspent leases are lost: fewer requests, never more
      leases.set(tokenId, lease);
    }
    const allowed = lease.left > 0;
    if (allowed) lease.left -= 1;
    const resetSeconds = Math.max(1, Math.ceil((lease.windowEnd - now) / 1000));
    res.setHeader('RateLimit-Limit', String(limitPerHour));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, limitPerHour - lease.used + lease.left)));
    res.setHeader('RateLimit-Reset', String(resetSeconds));
    if (!allowed) {
      throw new HttpError(429, 'rate_limited', `more than ${limitPerHour} requests this hour with this token`, {
        headers: { 'Retry-After': String(resetSeconds) },
      });
    }
    next();
  };
}
