-- Webhooks (issue 12): a team's registered endpoints, the outbox of messages still to deliver, and the log of every
-- delivery attempt. Outbox rows are written by the domain-event subscriber in the same transaction as the change
-- (webhooks.subscriber.ts); the worker (webhooks.worker.ts) claims due rows with FOR UPDATE SKIP LOCKED, so several
-- server processes on one PostgreSQL share the work without sending a message twice at once.
-- The secret is kept as given (`whsec_...`): signing needs the key itself, not a hash of it; it is never shown again.
create table webhooks (
  id serial primary key,
  team_id int not null references teams (id) on delete cascade,
  url text not null,
  secret varchar(128) not null,
  events text[] not null default '{}',
  active boolean not null default true,
  disabled_reason text null,
  consecutive_failures int not null default 0,
  created_by_id int null references users (id) on delete set null,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create index webhooks_team_id_index on webhooks (team_id);

-- One row per (event, webhook) still to deliver. `payload` is the exact body sent (text: the signed bytes never
-- change between attempts); `message_id` is the Standard Webhooks `webhook-id`, the same on every retry.
create table webhook_outbox (
  id bigserial primary key,
  webhook_id int not null references webhooks (id) on delete cascade,
  message_id varchar(64) not null,
  event_type varchar(40) not null,
  payload text not null,
  attempts int not null default 0,
  next_attempt_at timestamptz(3) not null,
  created_at timestamptz(3) not null
);
create index webhook_outbox_due_index on webhook_outbox (next_attempt_at, id);
create index webhook_outbox_webhook_id_index on webhook_outbox (webhook_id);

create table webhook_deliveries (
  id bigserial primary key,
  webhook_id int not null references webhooks (id) on delete cascade,
  message_id varchar(64) not null,
  event_type varchar(40) not null,
  attempt int not null,
  succeeded boolean not null,
  status_code int null,
  error text null,
  duration_ms int not null,
  next_attempt_at timestamptz(3) null,
  created_at timestamptz(3) not null
);
create index webhook_deliveries_webhook_id_index on webhook_deliveries (webhook_id, id);
create index webhook_deliveries_created_at_index on webhook_deliveries (created_at);
