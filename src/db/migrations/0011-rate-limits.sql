-- The request budget of each token, shared by every server process on this database (src/http/rate-limit.ts): the
-- start of the token's current one-hour window and how many requests of it have been handed out. Unlogged: written
-- on the request path, it needs no WAL and no replica; after a crash of PostgreSQL the budgets start afresh.
create unlogged table rate_limits (
  token_id int primary key references tokens (id) on delete cascade,
  window_start timestamptz not null,
  used int not null,
  granted int not null
);
