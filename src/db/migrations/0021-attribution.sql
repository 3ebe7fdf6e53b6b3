-- What was made through an app records the app (issue 21, "Attribution"): its public client id and its name as
-- they were at the time (`via_client`, `via_app`), kept when the app is deleted later. Null: made with a personal
-- token or in the browser. Page versions, comments, issues, requests and activity log entries; the change log has
-- its `client_id` since 0015.
alter table page_versions add column via_client varchar(64) null, add column via_app varchar(255) null;
alter table comments add column via_client varchar(64) null, add column via_app varchar(255) null;
alter table issues add column via_client varchar(64) null, add column via_app varchar(255) null;
alter table requests add column via_client varchar(64) null, add column via_app varchar(255) null;
alter table logs add column via_client varchar(64) null, add column via_app varchar(255) null;
