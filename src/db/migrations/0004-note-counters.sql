-- Per-note counters for the sequence numbers used in paths (`index` of issues, and later of requests): one row per
-- note and kind, incremented with `insert ... on conflict do update ... returning` in the transaction that creates
-- the object, so concurrent creations queue on that one row and get 1, 2, 3, ... without gaps, and an index freed
-- by a delete is never handed out again (max(index) + 1 would reuse it). The unique (note_id, index) indexes of
-- issues and requests stay as the backstop.
create table note_counters (
  note_id int not null references notes (id) on delete cascade,
  kind text not null check (kind in ('issue', 'request')),
  last_index int not null,
  primary key (note_id, kind)
);

insert into note_counters (note_id, kind, last_index)
  select note_id, 'issue', max(index) from issues group by note_id;
insert into note_counters (note_id, kind, last_index)
  select to_note_id, 'request', max(index) from requests group by to_note_id;

-- The order in which tags were added to an issue (its tags are presented in that order).
alter table issue_tags add column added_order bigserial;
