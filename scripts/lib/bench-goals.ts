// The server's memory goal, shared by `make bench` (scripts/bench-http.ts: the largest VmRSS sampled during its load
// rounds) and the worst-case answer test (test/api/answer-size.test.ts: the peak while it serves the largest lists).
export type Database = 'pglite' | 'postgres';

/** Largest resident memory of the server process while it serves, in MiB (the kernel's "MB" of /proc). */
export const RSS_GOAL_MB: Record<Database, number> = { postgres: 250, pglite: 400 };
