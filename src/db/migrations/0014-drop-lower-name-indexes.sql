-- One rule for case-insensitive names (issue 25), the rest of it: every lookup of a team by name (the request scope,
-- the team filters of logs and notifications) and of a user by username (mentions, sign-in) now compares the stored
-- key, `teams.name_key` / `users.username_key`, with foldCase of the name given (src/modules/text/fold.ts), through
-- the unique indexes of migration 0013. Nothing compares lower(name) or lower(username) any more, so the unique
-- indexes on them from 0001 only cost a write each; they go.
--
-- Uniqueness is kept by teams_name_key_unique and users_username_key_unique: names are ASCII (checks of 0013), and
-- on ASCII two names that lower() makes equal have equal keys (A-Z to a-z), whatever the database's locale; the keys
-- are the stricter of the two (in a Turkish locale lower() keeps KIM and kim apart, the keys do not).
drop index users_username_unique;
drop index teams_name_unique;
