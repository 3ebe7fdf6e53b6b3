-- A version's diff is computed when someone first reads it, and kept (issue 18, "a lean write"): most versions'
-- diffs are never read, and a page written many times a second paid for each one inside its write. Null: not
-- computed yet (src/modules/pages/version-diffs.ts); versions written before keep theirs.
alter table page_versions alter column diff drop not null;
