-- Imports (issue 23): a note's export zip is imported by a job that runs in the server process after the upload is
-- answered (202); `GET /api/v1/jobs/{id}` shows its state to the user who started it.
--
-- `jobs`: `progress` 0-100 is written while the job runs where the database has a connection to spare (PostgreSQL);
-- on the embedded database the job's transaction holds the only connection, so the running process keeps it in
-- memory. `heartbeat_at` is touched by the running process; a job left queued or running by a process that died is
-- failed (`interrupted`) at the next start (src/modules/imports/jobs.repository.ts).
create table jobs (
  id serial primary key,
  kind varchar(16) not null check (kind in ('import')),
  user_id int not null references users (id) on delete cascade,
  team_id int null references teams (id) on delete set null,
  state varchar(16) not null default 'queued' check (state in ('queued', 'running', 'done', 'failed')),
  progress int not null default 0 check (progress between 0 and 100),
  note_id int null references notes (id) on delete set null,
  error_code varchar(64) null,
  error_detail text null,
  heartbeat_at timestamptz(3) not null default now(),
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now()
);
create index jobs_user_index on jobs (user_id, id);
create index jobs_unfinished_index on jobs (state) where state in ('queued', 'running');

-- Who made something in an imported note, when no user of that name exists here: the row is the importing user's
-- (user_id is not null everywhere) and `imported_author` keeps the original author as the export named them,
-- `{"username": ..., "name": ...}`; presenters and the export show that name. Null everywhere else.
alter table page_versions add column imported_author jsonb null;
alter table deleted_page_versions add column imported_author jsonb null;
alter table issues add column imported_author jsonb null;
alter table comments add column imported_author jsonb null;
alter table requests add column imported_author jsonb null;
alter table attachments add column imported_author jsonb null;

-- A deleted page's versions keep their imported author too (0022's trigger, with the new column).
create or replace function page_places_record() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    perform 1 from notes where id = old.note_id;
    if not found then
      return old;
    end if;
    insert into page_places (note_id, page_id, parent_id, position, title, present)
      values (old.note_id, old.id, old.parent_id, old.position, old.title, false);
    insert into deleted_page_versions (id, page_id, note_id, index, title, content, user_id, created_at, request_id,
        from_version_id, merged_from_base, via_client, via_app, imported_author)
      select id, page_id, note_id, index, title, content, user_id, created_at, request_id, from_version_id,
        merged_from_base, via_client, via_app, imported_author
      from page_versions where page_id = old.id;
    return old;
  end if;
  insert into page_places (note_id, page_id, parent_id, position, title, present)
    values (new.note_id, new.id, new.parent_id, new.position, new.title, true);
  return new;
end $$;

-- An imported request comes without its fork (an export carries one note): `from_note_id` is null, and so are its
-- pages' fork sides (`page_version_id`, `from_page_id`); what it proposed is kept on the page entry itself
-- (`imported_title`, `imported_content`), and the fork's name as the export gave it (`imported_from`,
-- `{"team": ..., "note": ...}`). Such a request can be read, opened and closed, never merged (422 `fork_missing`).
alter table requests alter column from_note_id drop not null;
alter table requests add column imported_from jsonb null;
alter table request_pages add column imported_title varchar(255) null, add column imported_content text null;
alter table request_pages drop constraint request_pages_sides_check;
alter table request_pages add constraint request_pages_sides_check
  check ((type = 'delete') = (page_version_id is null and from_page_id is null) or imported_content is not null);
