-- A version names everyone whose changes it holds: a live document's save (src/modules/live/live-write.ts) is
-- written for the person who typed last, and `co_author_ids` names the others who typed into it since the save
-- before, in the order they first typed, without the author. Empty for every other write (the API's, a merge's, a
-- pull's), and for every version written before this migration. User ids without a foreign key (an array cannot
-- have one): a co-author whose account is gone is left out where versions are shown.
alter table page_versions add column co_author_ids int[] not null default '{}';
alter table deleted_page_versions add column co_author_ids int[] not null default '{}';

-- A deleted page's versions keep their co-authors too (0023's trigger, with the new column).
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
        from_version_id, merged_from_base, via_client, via_app, imported_author, co_author_ids)
      select id, page_id, note_id, index, title, content, user_id, created_at, request_id, from_version_id,
        merged_from_base, via_client, via_app, imported_author, co_author_ids
      from page_versions where page_id = old.id;
    return old;
  end if;
  insert into page_places (note_id, page_id, parent_id, position, title, present)
    values (new.note_id, new.id, new.parent_id, new.position, new.title, true);
  return new;
end $$;
