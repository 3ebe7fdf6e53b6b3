-- Apps whose writes are proposals (issue 21, "Agents propose, people decide"; src/modules/requests/proposals.ts):
-- `writes` is `direct` (the app's tokens write like their user) or `proposals` (a page the app creates or changes
-- lands in a fork of the note that belongs to the app and the user, and one open request on the original carries
-- it). `proposal_forks` remembers that fork per app, user and note (made on the first write), and the request it
-- keeps up to date (null once none is open: the next write opens another).
alter table oauth_clients add column writes varchar(10) not null default 'direct' check (writes in ('direct', 'proposals'));
create table proposal_forks (
  id serial primary key,
  client_id int not null references oauth_clients (id) on delete cascade,
  user_id int not null references users (id) on delete cascade,
  note_id int not null references notes (id) on delete cascade,
  fork_id int not null references notes (id) on delete cascade,
  request_id int null references requests (id) on delete set null,
  created_at timestamptz(3) not null default now(),
  unique (client_id, user_id, note_id)
);
create index proposal_forks_fork_index on proposal_forks (fork_id);
