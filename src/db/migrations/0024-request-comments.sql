-- Comments on requests (issue 24): anyone who may read the original note may comment on a request to it, as on its
-- issues. The comment belongs to the original (the request's `note_id`), like the request; `request_id` names the
-- request, and the check that keeps `type` and the target columns consistent gains the fourth kind.
alter table comments add column request_id int null references requests (id) on delete cascade;
alter table comments drop constraint comments_type_check;
alter table comments add constraint comments_type_check check (type in ('note', 'page', 'issue', 'request'));
alter table comments drop constraint comments_target_matches_type;
alter table comments add constraint comments_target_matches_type check (
  (type = 'note' and page_id is null and issue_id is null and request_id is null)
  or (type = 'page' and page_id is not null and issue_id is null and request_id is null)
  or (type = 'issue' and issue_id is not null and page_id is null and request_id is null)
  or (type = 'request' and request_id is not null and page_id is null and issue_id is null)
);
create index comments_request_id_index on comments (request_id) where request_id is not null;
