-- The activity log outlives what it is about: deleting a note no longer deletes the entries of what was inside it
-- (its pages, issues, comments). Before the note's row goes, the note.deleted subscriber copies into each entry's
-- summary what it needs to stay readable (the note's id, title and whether it was private); the team it was in is
-- already on every entry.
alter table logs drop constraint logs_note_id_fkey;
alter table logs add constraint logs_note_id_fkey foreign key (note_id) references notes (id) on delete set null;
