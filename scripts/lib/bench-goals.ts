// The server's memory goal, shared by `make bench` (scripts/bench-http.ts: the largest VmRSS sampled during its load
// rounds) and the worst-case answer test (test/api/answer-size.test.ts: the peak while it serves the largest lists).
export type Database = 'pglite' | 'postgres';

/** Largest resident memory of the server process while it serves, in MiB (the kernel's "MB" of /proc). */
export const RSS_GOAL_MB: Record<Database, number> = { postgres: 250, pglite: 400 };

/**
 * The change stream (issue 20; `make bench`'s events case, scripts/lib/bench-events.ts): with EVENT_STREAMS streams
 * open while the page write load runs, an event reaches a stream within EVENT_DELIVERY_P99_GOAL_MS of its write's
 * answer at p99, and the writers keep EVENT_STREAMS_WRITE_GOAL of the writes per second they make with none open
 * (the streams cost them at most 10 %).
 */
export const EVENT_STREAMS = 200;
export const EVENT_DELIVERY_P99_GOAL_MS = 200;
export const EVENT_STREAMS_WRITE_GOAL = 0.9;
