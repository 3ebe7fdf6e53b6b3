-- A note's cover is one column on the note, not a flag on each page kept in step by hand (and a unique index to
-- catch the slips). `format` and `share` are constants of the contract (`html`, `none`): not stored.
alter table notes add column cover_page_id int null references pages (id) on delete set null;
update notes set cover_page_id = (select p.id from pages p where p.note_id = notes.id and p.is_cover limit 1);
drop index pages_one_cover_per_note;
alter table pages drop column is_cover;
alter table notes drop column format;
alter table notes drop column share;
