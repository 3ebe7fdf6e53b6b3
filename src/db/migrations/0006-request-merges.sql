-- Requests and merges (issue 8).
-- A request page remembers the fork's base when the request was made: the proposed version was derived from it, so
-- the three-way merge uses it even after the fork has pulled (and moved its bases) since.
alter table request_pages add column base_version_id int null references page_versions (id) on delete set null;
-- A version written by a merge records the request and the fork version it came from (history is never rewritten).
alter table page_versions add column request_id int null references requests (id) on delete set null;
alter table page_versions add column from_version_id int null references page_versions (id) on delete set null;
-- A fork page's parent as it was in the original at its base (the original's page id; null: the top level), so the
-- tree merges three ways too: moved on one side -> moved; moved to different parents on both -> a `tree` conflict.
alter table pages add column base_parent_id int null;
update pages set base_parent_id = origin.parent_id from pages origin where pages.origin_page_id = origin.id;
