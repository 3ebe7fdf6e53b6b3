-- OAuth 2 (issue 10): registered apps, authorization codes, refresh tokens, the apps a user authorized, and the
-- browser sessions of the sign-in page. Access tokens issued through OAuth are rows of `tokens`, like personal
-- tokens, so the API authenticates both the same way; `client_id` names the app and `family` the grant they came
-- from (one code exchange or password grant, and every refresh after it), so a reused code or refresh token
-- revokes the whole family at once. Secrets and tokens are stored only as SHA-256 hashes.
create table oauth_clients (
  id serial primary key,
  client_id varchar(64) not null,
  secret_hash varchar(64) null,
  name varchar(255) not null,
  redirect_uris jsonb not null,
  confidential boolean not null,
  first_party boolean not null default false,
  owner_id int null references users (id) on delete cascade,
  created_at timestamptz(0) not null
);
create unique index oauth_clients_client_id_unique on oauth_clients (client_id);
create index oauth_clients_owner_id_index on oauth_clients (owner_id);

alter table tokens add column client_id int null references oauth_clients (id) on delete cascade;
alter table tokens add column family varchar(32) null;
create index tokens_family_index on tokens (family) where family is not null;
create index tokens_client_id_index on tokens (client_id) where client_id is not null;

create table oauth_codes (
  id serial primary key,
  code_hash varchar(64) not null,
  client_id int not null references oauth_clients (id) on delete cascade,
  user_id int not null references users (id) on delete cascade,
  redirect_uri text not null,
  scope varchar(8) not null check (scope in ('read', 'write')),
  code_challenge varchar(128) null,
  code_challenge_method varchar(8) null,
  family varchar(32) null,
  expires_at timestamptz(0) not null,
  used_at timestamptz(0) null,
  created_at timestamptz(0) not null
);
create unique index oauth_codes_code_hash_unique on oauth_codes (code_hash);

create table oauth_refresh_tokens (
  id serial primary key,
  token_hash varchar(64) not null,
  client_id int not null references oauth_clients (id) on delete cascade,
  user_id int not null references users (id) on delete cascade,
  scope varchar(8) not null check (scope in ('read', 'write')),
  family varchar(32) not null,
  expires_at timestamptz(0) not null,
  used_at timestamptz(0) null,
  created_at timestamptz(0) not null
);
create unique index oauth_refresh_tokens_token_hash_unique on oauth_refresh_tokens (token_hash);
create index oauth_refresh_tokens_family_index on oauth_refresh_tokens (family);

create table oauth_grants (
  id serial primary key,
  user_id int not null references users (id) on delete cascade,
  client_id int not null references oauth_clients (id) on delete cascade,
  scope varchar(8) not null check (scope in ('read', 'write')),
  created_at timestamptz(0) not null,
  updated_at timestamptz(0) not null
);
create unique index oauth_grants_user_client_unique on oauth_grants (user_id, client_id);

create table browser_sessions (
  id serial primary key,
  secret_hash varchar(64) not null,
  user_id int not null references users (id) on delete cascade,
  csrf_token varchar(64) not null,
  expires_at timestamptz(0) not null,
  created_at timestamptz(0) not null
);
create unique index browser_sessions_secret_hash_unique on browser_sessions (secret_hash);
