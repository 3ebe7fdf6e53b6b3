-- Request budgets shared by every server process on this database (src/http/rate-limit.ts): per key (`token:<id>`,
-- and the sign-in limits' `account:<name>` and `address:<ip>`), the start of its current window and how many requests
-- of it have been handed out. Unlogged: written on the request path, it needs no WAL and no replica; after a crash of
-- PostgreSQL the budgets start afresh. Rows whose window is long over are deleted by the server's pruning (every ten minutes).
create unlogged table rate_limits (
  key text primary key,
  window_start timestamptz not null,
  used int not null,
  granted int not null
);
