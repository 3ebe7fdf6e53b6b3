-- The change log (issue 18, docs/design.md "The change log"): every write appends what happened, one row per domain
-- event, in the transaction of the change, so a change and its record commit or roll back together. Rows are never
-- updated; they carry ids and version numbers, never content (`payload`: the event's thin data, the same that
-- webhooks send). What follows from a change after it commits (the search index, the webhooks' outbox) is projected
-- from here by workers that keep a durable cursor each in `projection_cursors`.
--
-- Order: `id` is handed out when the row is written, `tx` is the writing transaction's id. A row with a lower id
-- can commit after one with a higher id, so a reader that went by id alone could pass over it; a transaction whose
-- id is below the oldest one still running (pg_snapshot_xmin of the current snapshot) has ended, and every row it
-- wrote is visible. Readers therefore take rows in (tx, id) order up to that horizon, and never miss one.
create table changes (
  id bigint generated always as identity primary key,
  tx xid8 not null default pg_current_xact_id(),
  occurred_at timestamptz(3) not null default now(),
  type varchar(40) not null,
  actor_id int null,
  client_id int null,
  team_id int null,
  note_id int null,
  subject_id int null,
  payload jsonb not null default '{}'::jsonb
);
create index changes_order_index on changes (tx, id);

-- Where each projection has got to in the change log: the (tx, id) of the last row it applied. A worker takes its
-- row FOR UPDATE SKIP LOCKED and applies the next rows in the same transaction as the move of its cursor, so a
-- crash loses nothing (the rows are applied again after it) and two processes never apply the same rows at once.
create table projection_cursors (
  name varchar(40) primary key,
  tx xid8 not null,
  change_id bigint not null,
  updated_at timestamptz(3) not null default now()
);
insert into projection_cursors (name, tx, change_id) values ('search', '0', 0), ('webhooks', '0', 0);
