-- Every revision written by the triggers of 0002 is also announced with NOTIFY on the channel `revisions` (sent by
-- PostgreSQL when the transaction commits, never for one that rolls back), and so is every deleted or changed token.
-- The payload is a comma-separated list of tags: `n<note id>`, `t<team id>`, `k<token id>`, or `*` when the list
-- would not fit a notification (everything changed). Each server process listens, and drops what it keeps in memory
-- about those objects (src/db/change-feed.ts).
create function notify_changes(tags text) returns void language plpgsql as $$
begin
  if tags is not null then
    perform pg_notify('revisions', case when length(tags) > 7000 then '*' else tags end);
  end if;
end $$;

create or replace function revisions_of_pages() returns trigger language plpgsql as $$
declare tags text;
begin
  if tg_op = 'DELETE' then
    with added as (insert into revisions (kind, target_id) select distinct 'n', note_id from old_rows returning kind, target_id)
    select string_agg(kind || target_id, ',') into tags from added;
  else
    with added as (insert into revisions (kind, target_id) select distinct 'n', note_id from new_rows returning kind, target_id)
    select string_agg(kind || target_id, ',') into tags from added;
  end if;
  perform notify_changes(tags);
  return null;
end $$;

create or replace function revisions_of_notes() returns trigger language plpgsql as $$
declare tags text;
begin
  if tg_op = 'DELETE' then
    with added as (insert into revisions (kind, target_id) select distinct 'n', id from old_rows returning kind, target_id)
    select string_agg(kind || target_id, ',') into tags from added;
  else
    with added as (insert into revisions (kind, target_id) select distinct 'n', id from new_rows returning kind, target_id)
    select string_agg(kind || target_id, ',') into tags from added;
  end if;
  perform notify_changes(tags);
  return null;
end $$;

create or replace function revisions_of_teams() returns trigger language plpgsql as $$
declare tags text;
begin
  with added as (insert into revisions (kind, target_id) select distinct 't', id from new_rows returning kind, target_id)
  select string_agg(kind || target_id, ',') into tags from added;
  perform notify_changes(tags);
  return null;
end $$;

create or replace function revisions_of_memberships() returns trigger language plpgsql as $$
declare tags text;
begin
  if tg_op = 'DELETE' then
    with added as (insert into revisions (kind, target_id) select distinct 't', team_id from old_rows returning kind, target_id)
    select string_agg(kind || target_id, ',') into tags from added;
  else
    with added as (insert into revisions (kind, target_id) select distinct 't', team_id from new_rows returning kind, target_id)
    select string_agg(kind || target_id, ',') into tags from added;
  end if;
  perform notify_changes(tags);
  return null;
end $$;

create or replace function revisions_of_users() returns trigger language plpgsql as $$
declare tags text;
begin
  with added as (
    insert into revisions (kind, target_id)
      select distinct 't', m.team_id from memberships m join new_rows u on u.id = m.user_id returning kind, target_id)
  select string_agg(kind || target_id, ',') into tags from added;
  perform notify_changes(tags);
  return null;
end $$;

-- a team that goes takes its memberships with it (the cascade above announces it); a token that goes, or whose
-- owner, scope, secret or expiry changes (not its `last_used_at`):
create function changes_of_tokens() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    perform notify_changes((select string_agg('k' || id, ',') from old_rows));
  else
    perform notify_changes((
      select string_agg('k' || n.id, ',') from new_rows n join old_rows o on o.id = n.id
       where (n.user_id, n.scope, n.token_hash, n.expires_at) is distinct from (o.user_id, o.scope, o.token_hash, o.expires_at)));
  end if;
  return null;
end $$;
create trigger tokens_delete_changes after delete on tokens
  referencing old table as old_rows for each statement execute function changes_of_tokens();
create trigger tokens_update_changes after update on tokens
  referencing old table as old_rows new table as new_rows for each statement execute function changes_of_tokens();
