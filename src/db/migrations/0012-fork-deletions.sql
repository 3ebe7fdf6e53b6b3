-- Requests that delete pages, and pages deleted in the original (issue 8).
--
-- A fork page remembers the original's page it came from even after the original deletes it: `origin_page_id` is
-- nulled by its foreign key then, `upstream_page_id` (no foreign key) keeps the id, so a request proposing the page
-- knows it was deleted there (a `delete_modify` conflict) instead of taking it for a page new in the fork. A trigger
-- keeps it in step with every write of `origin_page_id` (fork copies, pulls, merges), wherever it is written.
alter table pages add column upstream_page_id int null;
update pages set upstream_page_id = origin_page_id where origin_page_id is not null;
create function pages_keep_upstream_page() returns trigger language plpgsql as $$
begin
  new.upstream_page_id := new.origin_page_id;
  return new;
end
$$;
create trigger pages_keep_upstream_page before insert or update of origin_page_id on pages
  for each row when (new.origin_page_id is not null) execute function pages_keep_upstream_page();

-- A page deleted in a fork, where it came from the original: what a request needs to propose the deletion
-- (`type: delete`) after the fork page and its versions are gone. One row per fork and original page.
create table fork_deletions (
  note_id int not null references notes (id) on delete cascade,
  upstream_page_id int not null,
  base_version_id int null references page_versions (id) on delete set null,
  title varchar(255) not null,
  user_id int null references users (id) on delete set null,
  created_at timestamptz(0) not null,
  primary key (note_id, upstream_page_id)
);

-- A `delete` entry of a request has no fork page and no proposed version.
alter table request_pages alter column page_version_id drop not null;
alter table request_pages alter column from_page_id drop not null;
alter table request_pages drop constraint request_pages_type_check;
alter table request_pages add constraint request_pages_type_check check (type in ('create', 'update', 'delete'));
alter table request_pages add constraint request_pages_sides_check
  check ((type = 'delete') = (page_version_id is null and from_page_id is null));
