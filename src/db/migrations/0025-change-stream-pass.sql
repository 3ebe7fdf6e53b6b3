-- The change stream's pass in one round trip (issue 20; src/modules/events/event-hub.ts, event-stream.repository.ts).
--
-- On PostgreSQL a pass of the stream's loop read where the change log stands (the watermark: the last id handed out,
-- then the transactions holding the appenders' lock), read it again every few milliseconds while the appenders its
-- first reading saw were still running (the settle), then read the changes and their context: two to eight
-- statements, each answer handled on the server's one thread, which under a write load is busy with the writers, so
-- each waited its turn there. change_stream_pass does it all in the database and answers once. The SQL that reads
-- changes and their context lives here alone, for the stream's every reading.

-- What presenting and permitting events needs (event-presenter.ts): the teams, the notes that still exist, the apps,
-- and which of the users are in which of the teams now. One JSON object: {"teams", "notes", "apps", "memberships"}.
create function change_context(p_teams int[], p_notes int[], p_apps int[], p_users int[])
  returns json language plpgsql stable as $$
begin
  return json_build_object(
    'teams', (select coalesce(json_agg(json_build_object('id', t.id, 'name', t.name)), '[]') from teams t where t.id = any(p_teams)),
    'notes', (select coalesce(json_agg(json_build_object('id', n.id, 'team_id', n.team_id, 'slug', n.slug, 'is_private', n.is_private)), '[]')
                from notes n where n.id = any(p_notes)),
    'apps', (select coalesce(json_agg(json_build_object('id', a.id, 'client_id', a.client_id, 'name', a.name)), '[]')
               from oauth_clients a where a.id = any(p_apps)),
    'memberships', (select coalesce(json_agg(json_build_object('team_id', m.team_id, 'user_id', m.user_id)), '[]')
                      from memberships m where m.team_id = any(p_teams) and m.user_id = any(p_users)));
end $$;

-- The changes with ids in (p_after, p_up_to], in id order, at most p_limit, and their context for p_users: one JSON
-- object, {"changes": [...], "context": change_context(...)}; occurred_at cut to milliseconds, as the driver's Date.
create function change_stream_changes(p_after bigint, p_up_to bigint, p_limit int, p_users int[])
  returns json language plpgsql stable as $$
declare
  v_changes json;
  v_teams int[];
  v_notes int[];
  v_apps int[];
begin
  with c as materialized (
    select id, tx, occurred_at, type, actor_id, client_id, team_id, note_id, subject_id, payload
      from changes where id > p_after and id <= p_up_to order by changes.id limit p_limit
  )
  select coalesce(json_agg(json_build_object('id', c.id::text, 'tx', c.tx::text, 'occurred_at', date_trunc('milliseconds', c.occurred_at),
           'type', c.type, 'actor_id', c.actor_id, 'client_id', c.client_id, 'team_id', c.team_id, 'note_id', c.note_id,
           'subject_id', c.subject_id, 'payload', c.payload) order by c.id), '[]'),
         coalesce(array_agg(distinct c.team_id) filter (where c.team_id is not null), '{}'),
         coalesce(array_agg(distinct c.note_id) filter (where c.note_id is not null), '{}'),
         coalesce(array_agg(distinct c.client_id) filter (where c.client_id is not null), '{}')
    into v_changes, v_teams, v_notes, v_apps from c;
  return json_build_object('changes', v_changes, 'context', change_context(v_teams, v_notes, v_apps, p_users));
end $$;

-- Where the change log stands (safe-bound.ts): the last change id handed out (read from the sequence, which is not
-- transactional), then the transactions holding the appenders' lock (p_classid, p_objid: CHANGE_WRITERS_LOCK,
-- events.repository.ts) on this database, by their virtual ids. The order matters: a transaction holding an id at or
-- below `last` either still holds the lock when the locks are read, or has ended.
create function change_log_watermark(p_classid int, p_objid int, out last bigint, out running text[])
  language plpgsql volatile as $$
begin
  select case when is_called then last_value else last_value - 1 end into last from changes_id_seq;
  select coalesce(array_agg(l.virtualtransaction::text), '{}') into running from pg_locks l
   where l.locktype = 'advisory' and l.classid = p_classid::oid and l.objid = p_objid::oid and l.objsubid = 2
     and l.database = (select oid from pg_database where datname = current_database());
end $$;

-- A pass: the watermark, read again every p_step_ms while any transaction the first reading saw holds the
-- appenders' lock (p_classid, p_objid: CHANGE_WRITERS_LOCK, events.repository.ts), for at most p_settle_ms; then
-- the changes after p_after up to the last reading's last id (at most p_limit) with their context for p_users.
-- VOLATILE: each statement in it takes a snapshot of its own (READ COMMITTED), so the changes are read after the
-- last reading of the locks, and every change at or below a bound that reading makes safe (safe-bound.ts) is
-- committed and visible to it. Answers {"first": {"last", "running"}, "final": {"last", "running"}, "changes",
-- "context"}; `last` as text (a bigint).
create function change_stream_pass(p_after bigint, p_limit int, p_users int[], p_settle_ms int, p_step_ms int, p_classid int, p_objid int)
  returns json language plpgsql volatile as $$
declare
  v_deadline timestamptz := clock_timestamp() + make_interval(secs => p_settle_ms / 1000.0);
  v_first_last bigint;
  v_first_running text[];
  v_last bigint;
  v_running text[];
  v_read json;
begin
  select w.last, w.running into v_last, v_running from change_log_watermark(p_classid, p_objid) w;
  v_first_last := v_last;
  v_first_running := v_running;
  -- the appenders the first reading saw are most often a few milliseconds from their commit
  while v_running && v_first_running and clock_timestamp() < v_deadline loop
    perform pg_sleep(p_step_ms / 1000.0);
    select w.last, w.running into v_last, v_running from change_log_watermark(p_classid, p_objid) w;
  end loop;
  v_read := change_stream_changes(p_after, v_last, p_limit, p_users);
  return json_build_object(
    'first', json_build_object('last', v_first_last::text, 'running', v_first_running),
    'final', json_build_object('last', v_last::text, 'running', v_running),
    'changes', v_read -> 'changes',
    'context', v_read -> 'context');
end $$;
