-- RFC 7591 dynamic client registration (POST /oauth/register; src/modules/oauth/registration.ts): anyone may register
-- a public app, so such an app is marked, and one that no user authorized within OAUTH_REGISTRATION_UNUSED_HOURS of
-- its registration is deleted (by the next registration, in its transaction). `authorized_at` is when a user first
-- authorized the app; `scope` the scopes the app registered for (null: both), which /oauth/authorize holds it to.
alter table oauth_clients add column registered_dynamically boolean not null default false;
alter table oauth_clients add column authorized_at timestamptz(0) null;
alter table oauth_clients add column scope varchar(8) null check (scope in ('read', 'write'));
create index oauth_clients_unused_registrations_index on oauth_clients (created_at) where registered_dynamically and authorized_at is null;
