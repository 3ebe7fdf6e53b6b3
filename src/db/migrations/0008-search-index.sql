-- The search index (src/modules/search, design.md "Search"): one row per searchable object (a note's title and
-- description, a page, an issue, a comment), kept by the service in the same transaction as the write (the `search`
-- subscriber of the domain events). `norm_title` and `norm_body` are the NFKC-normalized, lower-cased plain text every
-- hit is rechecked against; `title` and `body` the plain text snippets are cut from; `tokens` the hashed n-grams and
-- words (src/modules/search/text.ts) under a GIN index. Rows go with their object by foreign keys.
--
-- No backfill here: the tokens are computed by the service's own code (NFKC, CJK n-grams, hashing), which SQL cannot
-- repeat exactly. The server fills an empty index at start-up when there is anything to index, and
-- `npm run admin -- reindex` rebuilds it at any time.
create table search_documents (
  kind varchar(8) not null check (kind in ('note', 'page', 'issue', 'comment')),
  object_id int not null,
  note_id int not null references notes (id) on delete cascade,
  page_id int null references pages (id) on delete cascade,
  issue_id int null references issues (id) on delete cascade,
  comment_id int null references comments (id) on delete cascade,
  title text not null,
  body text not null,
  norm_title text not null,
  norm_body text not null,
  tokens int[] not null,
  primary key (kind, object_id),
  constraint search_documents_object check (
    (kind = 'note' and object_id = note_id and page_id is null and issue_id is null and comment_id is null)
    or (kind = 'page' and object_id = page_id and issue_id is null and comment_id is null)
    or (kind = 'issue' and object_id = issue_id and page_id is null and comment_id is null)
    or (kind = 'comment' and object_id = comment_id and page_id is null and issue_id is null)
  )
);
create index search_documents_tokens_index on search_documents using gin (tokens);
create index search_documents_note_id_index on search_documents (note_id);
create index search_documents_page_id_index on search_documents (page_id) where page_id is not null;
create index search_documents_issue_id_index on search_documents (issue_id) where issue_id is not null;
create index search_documents_comment_id_index on search_documents (comment_id) where comment_id is not null;
