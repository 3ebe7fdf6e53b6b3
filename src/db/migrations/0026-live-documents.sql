-- The live editor's Yjs state of each page that was opened live (src/modules/live/live.server.ts).
--
-- The page's HTML stays the truth of its history; this row keeps the identity of the document's Yjs items. A
-- browser that was connected keeps its copy of the document and, reconnecting, sends what it has: when the server
-- built the document again from the HTML, every paragraph of that copy was new to it, and the page held its text
-- twice. So the server builds a page's document from this state when there is one, and brings it up to the page as
-- stored now by a three-way merge from `content`: the editor's HTML of `version`, the version the state stands on.
-- A cache of identity only: deleting a row loses no text (the next opening builds from the page's HTML).
create table live_documents (
  page_id int primary key references pages (id) on delete cascade,
  version int not null,
  content text not null,
  state bytea not null,
  updated_at timestamptz(0) not null default now()
);
