-- Merge-on-write (issue 19): a version written by updatePage from an older base, merged three ways with the
-- versions written since, records that base's index (PageVersion.merged_from_base); null for every other version.
alter table page_versions add column merged_from_base int;
