-- The change stream (issue 20, GET /api/v1/events; src/modules/events/event-hub.ts).
--
-- 1. One vocabulary for the stream and the webhooks: the members' events are `member.added`, `member.changed` and
--    `member.removed` (they were `membership.*`), in the log and in what webhooks asked for.
update changes set type = 'member.' || substr(type, length('membership.') + 1) where type like 'membership.%';
update webhooks set events = array(select case when e like 'membership.%' then 'member.' || substr(e, length('membership.') + 1) else e end from unnest(events) e)
 where exists (select 1 from unnest(events) e where e like 'membership.%');

-- 2. Every transaction that appends to the change log announces it on the channel `revisions` (tag `c`) when it
--    commits, so every server process's stream hears of a change made anywhere at once, whichever process, tool or
--    table made it (a comment touches no note row, so the note's own announcement would not do).
create function announce_change_log() returns trigger language plpgsql as $$
begin
  perform pg_notify('revisions', 'c');
  return null;
end $$;
create trigger changes_insert_announce after insert on changes
  for each statement execute function announce_change_log();
