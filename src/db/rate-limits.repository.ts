// The SQL of the shared request budgets (src/http/rate-limit.ts, migration 0011): one atomic upsert takes a lease of
// a key's budget, and a periodic delete drops the windows long over.
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The lease handed out when `remaining` (an SQL expression) requests are left: what the requests waiting in this
 * process need (the parameter `want`), or 1/divisor of what is left if more, at most `maxLease` or the parameter
 * `ask` if larger (a process spending its leases fast asks for more, rate-limit.ts); never more than left.
 */
function leaseOf(remaining: string, maxLease: number, divisor: number): string {
  return `(case when ${remaining} <= 0 then 0 else least(${remaining}, greatest(?::int, least(greatest(${maxLease}, ?::int), (${remaining}) / ${divisor}))) end)`;
}

/** The upsert that takes a lease of a budget of `limit` requests per window of `windowSeconds` (see `takeLease`). */
export function leaseStatement(limit: number, windowSeconds: number, maxLease: number, divisor: number): string {
  const lease = (remaining: string) => leaseOf(remaining, maxLease, divisor);
  const expired = `r.window_start <= now() - interval '${windowSeconds} seconds'`;
  const remaining = `(case when ${expired} then ${limit} else ${limit} - r.used end)`;
  return `insert into rate_limits as r (key, window_start, used, granted) values (?, now(), ${lease(String(limit))}, ${lease(String(limit))})
      on conflict (key) do update set
        window_start = case when ${expired} then now() else r.window_start end,
        used = (case when ${expired} then 0 else r.used end) + ${lease(remaining)},
        granted = ${lease(remaining)}
      returning used, granted, (extract(epoch from window_start) * 1000)::float8 as started, (extract(epoch from now()) * 1000)::float8 as now`;
}

export type LeaseRow = { used: number; granted: number; started: number; now: number };

/**
 * Takes a lease of `key`'s budget for `want` waiting requests with a statement of `leaseStatement`, as large as `ask`
 * where 1/divisor of what is left allows it.
 */
export async function takeLease(em: EntityManager, statement: string, key: string, want: number, ask: number): Promise<LeaseRow> {
  const rows = await em.execute<LeaseRow[]>(statement, [key, want, ask, want, ask, want, ask, want, ask]);
  return rows[0]!;
}

/** Deletes the rows of windows long over (every window is a day at most); the server runs it every ten minutes. */
export async function pruneRateLimits(em: EntityManager): Promise<void> {
  await em.execute(`delete from rate_limits where window_start < now() - interval '1 day'`);
}
