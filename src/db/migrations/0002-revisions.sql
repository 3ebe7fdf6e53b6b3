-- Revisions: an insert-only log that says "something a view of this note (or team) shows has changed". Triggers
-- write it in the same transaction as the change, whoever makes it (any server process, the admin command line,
-- a cascade), so a reader that compares the newest revision with the one a cached view was built at never serves a
-- stale view of a write it can see. Appending takes no row lock, so concurrent writers never queue on it; rows
-- superseded by a newer one of the same target are pruned now and then (src/db/revisions.ts).
--   kind 'n': the note's row or any of its pages changed (a page view embeds the note, its children, parent, path)
--   kind 't': the team's row, its memberships or one of its users changed (every note of the team embeds them)
--
-- Every revision written here is also announced with NOTIFY on the channel `revisions` (sent by
-- PostgreSQL when the transaction commits, never for one that rolls back), and so is every deleted or changed token.
-- The payload is a comma-separated list of tags: `n<note id>`, `t<team id>`, `k<token id>`, or `*` when the list
-- would not fit a notification (everything changed). Each server process listens, and drops what it keeps in memory
-- about those objects (src/db/change-feed.ts).
create table revisions (
  id bigserial primary key,
  kind char(1) not null check (kind in ('n', 't')),
  target_id int not null
);
create index revisions_target_index on revisions (kind, target_id, id);

create function notify_changes(tags text) returns void language plpgsql as $$
begin
  if tags is not null then
    perform pg_notify('revisions', case when length(tags) > 7000 then '*' else tags end);
  end if;
end $$;

create function revisions_of_pages() returns trigger language plpgsql as $$
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
create trigger pages_insert_revisions after insert on pages
  referencing new table as new_rows for each statement execute function revisions_of_pages();
create trigger pages_update_revisions after update on pages
  referencing new table as new_rows for each statement execute function revisions_of_pages();
create trigger pages_delete_revisions after delete on pages
  referencing old table as old_rows for each statement execute function revisions_of_pages();

create function revisions_of_notes() returns trigger language plpgsql as $$
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
create trigger notes_update_revisions after update on notes
  referencing new table as new_rows for each statement execute function revisions_of_notes();
create trigger notes_delete_revisions after delete on notes
  referencing old table as old_rows for each statement execute function revisions_of_notes();

create function revisions_of_teams() returns trigger language plpgsql as $$
declare tags text;
begin
  with added as (insert into revisions (kind, target_id) select distinct 't', id from new_rows returning kind, target_id)
  select string_agg(kind || target_id, ',') into tags from added;
  perform notify_changes(tags);
  return null;
end $$;
create trigger teams_update_revisions after update on teams
  referencing new table as new_rows for each statement execute function revisions_of_teams();

create function revisions_of_memberships() returns trigger language plpgsql as $$
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
create trigger memberships_insert_revisions after insert on memberships
  referencing new table as new_rows for each statement execute function revisions_of_memberships();
create trigger memberships_update_revisions after update on memberships
  referencing new table as new_rows for each statement execute function revisions_of_memberships();
create trigger memberships_delete_revisions after delete on memberships
  referencing old table as old_rows for each statement execute function revisions_of_memberships();

create function revisions_of_users() returns trigger language plpgsql as $$
declare tags text;
begin
  with added as (
    insert into revisions (kind, target_id)
      select distinct 't', m.team_id from memberships m join new_rows u on u.id = m.user_id returning kind, target_id)
  select string_agg(kind || target_id, ',') into tags from added;
  perform notify_changes(tags);
  return null;
end $$;
create trigger users_update_revisions after update on users
  referencing new table as new_rows for each statement execute function revisions_of_users();

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
