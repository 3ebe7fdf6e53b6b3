-- Revisions: an insert-only log that says "something a view of this note (or team) shows has changed". Triggers
-- write it in the same transaction as the change, whoever makes it (any server process, the admin command line,
-- a cascade), so a reader that compares the newest revision with the one a cached view was built at never serves a
-- stale view of a write it can see. Appending takes no row lock, so concurrent writers never queue on it; rows
-- superseded by a newer one of the same target are pruned now and then (src/db/revisions.ts).
--   kind 'n': the note's row or any of its pages changed (a page view embeds the note, its children, parent, path)
--   kind 't': the team's row, its memberships or one of its users changed (every note of the team embeds them)
create table revisions (
  id bigserial primary key,
  kind char(1) not null check (kind in ('n', 't')),
  target_id int not null
);
create index revisions_target_index on revisions (kind, target_id, id);

create function revisions_of_pages() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    insert into revisions (kind, target_id) select distinct 'n', note_id from old_rows;
  else
    insert into revisions (kind, target_id) select distinct 'n', note_id from new_rows;
  end if;
  return null;
end $$;
create trigger pages_insert_revisions after insert on pages
  referencing new table as new_rows for each statement execute function revisions_of_pages();
create trigger pages_update_revisions after update on pages
  referencing new table as new_rows for each statement execute function revisions_of_pages();
create trigger pages_delete_revisions after delete on pages
  referencing old table as old_rows for each statement execute function revisions_of_pages();

create function revisions_of_notes() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    insert into revisions (kind, target_id) select distinct 'n', id from old_rows;
  else
    insert into revisions (kind, target_id) select distinct 'n', id from new_rows;
  end if;
  return null;
end $$;
create trigger notes_update_revisions after update on notes
  referencing new table as new_rows for each statement execute function revisions_of_notes();
create trigger notes_delete_revisions after delete on notes
  referencing old table as old_rows for each statement execute function revisions_of_notes();

create function revisions_of_teams() returns trigger language plpgsql as $$
begin
  insert into revisions (kind, target_id) select distinct 't', id from new_rows;
  return null;
end $$;
create trigger teams_update_revisions after update on teams
  referencing new table as new_rows for each statement execute function revisions_of_teams();

create function revisions_of_memberships() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    insert into revisions (kind, target_id) select distinct 't', team_id from old_rows;
  else
    insert into revisions (kind, target_id) select distinct 't', team_id from new_rows;
  end if;
  return null;
end $$;
create trigger memberships_insert_revisions after insert on memberships
  referencing new table as new_rows for each statement execute function revisions_of_memberships();
create trigger memberships_update_revisions after update on memberships
  referencing new table as new_rows for each statement execute function revisions_of_memberships();
create trigger memberships_delete_revisions after delete on memberships
  referencing old table as old_rows for each statement execute function revisions_of_memberships();

create function revisions_of_users() returns trigger language plpgsql as $$
begin
  insert into revisions (kind, target_id)
    select distinct 't', m.team_id from memberships m join new_rows u on u.id = m.user_id;
  return null;
end $$;
create trigger users_update_revisions after update on users
  referencing new table as new_rows for each statement execute function revisions_of_users();
