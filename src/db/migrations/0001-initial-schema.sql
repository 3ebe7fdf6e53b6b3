-- The whole data model of the contract. Every table that belongs to a team reaches it through an indexed column:
-- memberships, notes and logs carry team_id; everything inside a note carries note_id (notes.team_id is indexed).
-- Timestamps are kept to the whole second (see src/db/timestamps.ts).

create table users (
  id serial primary key,
  username varchar(39) not null,
  name varchar(255) not null default '',
  lang varchar(8) not null default 'en' check (lang in ('en', 'ja')),
  receive_email boolean not null default true,
  keyboard_shortcuts boolean not null default true,
  options jsonb null,
  password_hash varchar(255) null,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create unique index users_username_unique on users (lower(username));

create table tokens (
  id serial primary key,
  user_id int not null references users (id) on delete cascade,
  token_hash varchar(64) not null,
  prefix varchar(12) not null,
  scope varchar(8) not null check (scope in ('read', 'write')),
  label varchar(255) null,
  expires_at timestamptz(0) null,
  last_used_at timestamptz(0) null,
  created_at timestamptz(0) not null
);
create unique index tokens_token_hash_unique on tokens (token_hash);
create index tokens_user_id_index on tokens (user_id);

create table teams (
  id serial primary key,
  name varchar(39) not null,
  is_default boolean not null default false,
  plan varchar(16) not null default 'free' check (plan in ('free', 'micro', 'small')),
  fullname varchar(255) null,
  url varchar(2048) null,
  description text null,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create unique index teams_name_unique on teams (lower(name));

create table memberships (
  id serial primary key,
  team_id int not null references teams (id) on delete cascade,
  user_id int not null references users (id) on delete cascade,
  role varchar(16) not null check (role in ('manager', 'member')),
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create unique index memberships_team_user_unique on memberships (team_id, user_id);
create index memberships_user_id_index on memberships (user_id);

create table notes (
  id serial primary key,
  team_id int not null references teams (id) on delete cascade,
  user_id int not null references users (id),
  slug varchar(64) null,
  title varchar(255) not null,
  description text not null default '',
  is_private boolean not null default false,
  format varchar(16) not null default 'html',
  share varchar(16) not null default 'none',
  is_time_track boolean not null default false,
  forked_from_id int null references notes (id) on delete set null,
  pulled_at timestamptz(0) null,
  issue_sequence int not null default 0,
  request_sequence int not null default 0,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create unique index notes_team_slug_unique on notes (team_id, slug) where slug is not null;
create index notes_team_id_index on notes (team_id, id);
create index notes_forked_from_id_index on notes (forked_from_id) where forked_from_id is not null;
create index notes_user_id_index on notes (user_id);

create table pages (
  id serial primary key,
  note_id int not null references notes (id) on delete cascade,
  parent_id int null references pages (id) on delete cascade,
  position int not null default 0,
  title varchar(255) not null,
  content text not null default '',
  is_cover boolean not null default false,
  lock_version int not null default 1,
  version_sequence int not null default 0,
  origin_page_id int null references pages (id) on delete set null,
  base_version_id int null,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create index pages_note_parent_position_index on pages (note_id, parent_id, position, id);
create index pages_parent_id_index on pages (parent_id) where parent_id is not null;
create unique index pages_one_cover_per_note on pages (note_id) where is_cover;
create index pages_origin_page_id_index on pages (origin_page_id) where origin_page_id is not null;

create table page_versions (
  id serial primary key,
  page_id int not null references pages (id) on delete cascade,
  note_id int not null references notes (id) on delete cascade,
  index int not null,
  title varchar(255) not null,
  content text not null,
  diff text not null,
  user_id int not null references users (id),
  created_at timestamptz(0) not null
);
create unique index page_versions_page_index_unique on page_versions (page_id, index);
create index page_versions_note_user_index on page_versions (note_id, user_id);
create index page_versions_note_created_index on page_versions (note_id, id);
alter table pages add constraint pages_base_version_id_foreign
  foreign key (base_version_id) references page_versions (id) on delete set null;

create table tags (
  id serial primary key,
  note_id int not null references notes (id) on delete cascade,
  name varchar(64) not null,
  created_at timestamptz(0) not null
);
create unique index tags_note_name_unique on tags (note_id, lower(name));

create table issues (
  id serial primary key,
  note_id int not null references notes (id) on delete cascade,
  index int not null,
  title varchar(255) not null,
  description text not null default '',
  is_done boolean not null default false,
  position int not null default 0,
  rate double precision not null default 0,
  from_user_id int not null references users (id),
  to_user_id int null references users (id),
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create unique index issues_note_index_unique on issues (note_id, index);
create index issues_to_user_index on issues (to_user_id, is_done) where to_user_id is not null;

create table issue_tags (
  issue_id int not null references issues (id) on delete cascade,
  tag_id int not null references tags (id) on delete cascade,
  primary key (issue_id, tag_id)
);
create index issue_tags_tag_id_index on issue_tags (tag_id);

create table comments (
  id serial primary key,
  type varchar(8) not null check (type in ('note', 'page', 'issue')),
  note_id int not null references notes (id) on delete cascade,
  page_id int null references pages (id) on delete cascade,
  issue_id int null references issues (id) on delete cascade,
  user_id int not null references users (id),
  body text not null,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null,
  constraint comments_target_matches_type check (
    (type = 'note' and page_id is null and issue_id is null)
    or (type = 'page' and page_id is not null and issue_id is null)
    or (type = 'issue' and issue_id is not null and page_id is null)
  )
);
create index comments_note_index on comments (note_id, type, id);
create index comments_page_id_index on comments (page_id) where page_id is not null;
create index comments_issue_id_index on comments (issue_id) where issue_id is not null;

create table comment_mentions (
  comment_id int not null references comments (id) on delete cascade,
  user_id int not null references users (id),
  primary key (comment_id, user_id)
);
create index comment_mentions_user_id_index on comment_mentions (user_id);

create table attachments (
  id serial primary key,
  note_id int not null references notes (id) on delete cascade,
  user_id int not null references users (id),
  filename varchar(255) not null,
  extname varchar(32) not null default '',
  content_type varchar(255) not null,
  byte_size int not null,
  checksum varchar(64) not null,
  managed boolean not null default true,
  forked_from_id int null references attachments (id) on delete set null,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create index attachments_note_id_index on attachments (note_id, id);

create table attachment_blobs (
  attachment_id int primary key references attachments (id) on delete cascade,
  data bytea not null
);

create table requests (
  id serial primary key,
  to_note_id int not null references notes (id) on delete cascade,
  from_note_id int not null references notes (id) on delete cascade,
  index int not null,
  user_id int not null references users (id),
  status varchar(16) not null default 'opened' check (status in ('draft', 'opened', 'closed', 'merged')),
  is_wip boolean not null default false,
  description text not null default '',
  closed_at timestamptz(0) null,
  merged_at timestamptz(0) null,
  merged_by_id int null references users (id),
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create unique index requests_to_note_index_unique on requests (to_note_id, index);
create index requests_from_note_id_index on requests (from_note_id);

create table request_pages (
  id serial primary key,
  request_id int not null references requests (id) on delete cascade,
  note_id int not null references notes (id) on delete cascade,
  page_version_id int not null references page_versions (id) on delete cascade,
  from_page_id int not null references pages (id) on delete cascade,
  to_page_id int null references pages (id) on delete set null,
  type varchar(16) not null check (type in ('create', 'update')),
  path text not null,
  diff text not null,
  merged boolean not null default false,
  created_at timestamptz(0) not null
);
create index request_pages_request_id_index on request_pages (request_id, id);

create table request_attachments (
  request_id int not null references requests (id) on delete cascade,
  attachment_id int not null references attachments (id) on delete cascade,
  primary key (request_id, attachment_id)
);

create table notifications (
  id serial primary key,
  user_id int not null references users (id) on delete cascade,
  from_user_id int not null references users (id),
  event varchar(16) not null check (event in ('new_note', 'mention', 'assign', 'comment', 'request', 'merge', 'close')),
  type varchar(16) not null check (type in ('note', 'page', 'issue', 'request', 'comment')),
  note_id int not null references notes (id) on delete cascade,
  page_id int null references pages (id) on delete cascade,
  issue_id int null references issues (id) on delete cascade,
  request_id int null references requests (id) on delete cascade,
  comment_id int null references comments (id) on delete cascade,
  title varchar(512) not null,
  is_read boolean not null default false,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create index notifications_user_read_index on notifications (user_id, is_read, id);
create index notifications_note_id_index on notifications (note_id);

create table logs (
  id serial primary key,
  user_id int not null references users (id),
  action varchar(16) not null,
  type varchar(16) not null check (type in ('note', 'page', 'issue', 'comment', 'request', 'attachment', 'team')),
  team_id int null references teams (id) on delete cascade,
  note_id int null references notes (id) on delete cascade,
  page_id int null references pages (id) on delete set null,
  issue_id int null references issues (id) on delete set null,
  comment_id int null references comments (id) on delete set null,
  request_id int null references requests (id) on delete set null,
  attachment_id int null references attachments (id) on delete set null,
  summary jsonb null,
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create index logs_team_id_index on logs (team_id, id);
create index logs_note_id_index on logs (note_id, id);
create index logs_user_id_index on logs (user_id, id);
