-- The note at any moment (issue 23): a page's place in its note's tree (parent, position), its title and whether it
-- exists are recorded for every moment since it was created, and a deleted page keeps its versions.
--
-- `page_places`: one row per change of a page's place or title, and one (present = false) when it is deleted, written
-- by triggers on `pages`, so no write path can forget it (a move, a reorder of siblings, a rename, a delete of a
-- subtree, a merge, a pull). `since` is the writing transaction's time. No foreign key to `pages`: the rows outlive
-- the page. The rows of a deleted note go with it (trigger on `notes`).
--
-- Pages that existed before this migration start their history at it: their row says they sat where they sit now
-- since they were created (their place before the migration was not recorded anywhere); their titles and contents
-- at every moment come from their versions, which were always kept. Pages deleted before the migration are gone.
create table page_places (
  id bigint generated always as identity primary key,
  note_id int not null,
  page_id int not null,
  parent_id int null,
  position int not null,
  title varchar(255) not null,
  present boolean not null,
  since timestamptz(6) not null default now()
);
create index page_places_note_since_index on page_places (note_id, since, id);
create index page_places_page_index on page_places (page_id, since, id);

-- The versions of deleted pages, as they were (same ids): `page_versions` keeps the versions of live pages only, as
-- before, so what counts or lists versions today is unchanged.
create table deleted_page_versions (
  id int primary key,
  page_id int not null,
  note_id int not null references notes (id) on delete cascade,
  index int not null,
  title varchar(255) not null,
  content text not null,
  user_id int not null references users (id),
  created_at timestamptz(0) not null,
  request_id int null,
  from_version_id int null,
  merged_from_base int null,
  via_client varchar(64) null,
  via_app varchar(255) null
);
create index deleted_page_versions_note_index on deleted_page_versions (note_id, page_id, index);

create function page_places_record() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    -- a page deleted with its note (the note's cascade) leaves nothing behind
    perform 1 from notes where id = old.note_id;
    if not found then
      return old;
    end if;
    insert into page_places (note_id, page_id, parent_id, position, title, present)
      values (old.note_id, old.id, old.parent_id, old.position, old.title, false);
    insert into deleted_page_versions (id, page_id, note_id, index, title, content, user_id, created_at, request_id,
        from_version_id, merged_from_base, via_client, via_app)
      select id, page_id, note_id, index, title, content, user_id, created_at, request_id, from_version_id,
        merged_from_base, via_client, via_app
      from page_versions where page_id = old.id;
    return old;
  end if;
  insert into page_places (note_id, page_id, parent_id, position, title, present)
    values (new.note_id, new.id, new.parent_id, new.position, new.title, true);
  return new;
end $$;

create trigger pages_places_insert after insert on pages
  for each row execute function page_places_record();
create trigger pages_places_update after update of parent_id, position, title, note_id on pages
  for each row when (old.parent_id is distinct from new.parent_id or old.position <> new.position
    or old.title <> new.title or old.note_id <> new.note_id)
  execute function page_places_record();
-- before: the page's versions are still there to keep (the cascade to page_versions runs after the row is gone)
create trigger pages_places_delete before delete on pages
  for each row execute function page_places_record();

create function page_places_of_deleted_notes() returns trigger language plpgsql as $$
begin
  delete from page_places where note_id in (select id from old_rows);
  return null;
end $$;
create trigger notes_page_places_delete after delete on notes
  referencing old table as old_rows for each statement execute function page_places_of_deleted_notes();

insert into page_places (note_id, page_id, parent_id, position, title, present, since)
  select note_id, id, parent_id, position, title, true, created_at from pages;
