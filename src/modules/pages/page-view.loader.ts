// The view of one page (what getPage and every write of a page answer) from one prepared statement
// (pages.repository.ts, pageViewRow): the page's ancestry, parent and children, the original of a fork (with its
// team) and whether the fork can pull; the members of the teams come from memory (teams.loader.ts) or one more
// statement. Rows come back as JSON and are mapped to the ORM's entities, so the same presenters serve them
// (pages.loader.ts loads the same for many pages in a few queries).
import type { Reader } from '../../cache/memory.ts';
import { shared } from '../../http/json.ts';
import { can } from '../access/policy.ts';
import { Note } from '../notes/note.entity.ts';
import { presentNote, type NoteView } from '../notes/note.presenter.ts';

import { Team } from '../teams/team.entity.ts';
import { membersOf, teamView } from '../teams/teams.loader.ts';
import { Page } from './page.entity.ts';
import type { PageHeading, PageView } from './page.presenter.ts';
import { pageViewRows, type HeadingRow, type PageViewRow } from './pages.repository.ts';
import { joinPath } from './tree.ts';

function heading(row: HeadingRow): PageHeading {
  return { id: row.id, title: row.title, createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at) };
}

/** Where the page sits (its path) and its parent and children, placed, from its row (pageViewRows). */
export function placed(page: Page, row: PageViewRow | undefined): Pick<PageView, 'path' | 'ancestors' | 'parent' | 'children'> {
  const titles = row?.titles ?? [page.title];
  const ids = row?.ids ?? [page.id];
  const parent = row?.parent ? heading(row.parent) : undefined;
  return {
    path: joinPath(titles),
    ancestors: ids.slice(0, -1).map((id, index) => ({ id, title: titles[index]! })),
    parent: parent ? { page: parent, path: joinPath(titles.slice(0, -1)) } : undefined,
    children: (row?.children ?? []).map((child) => ({ page: heading(child), path: joinPath([...titles, child.title]) })),
  };
}

/** Everything presenting the page needs, for this caller; `note` must have its team loaded. */
export async function loadOnePageView(reader: Reader, note: Note, page: Page): Promise<PageView> {
  const { em, callerId, urls } = reader;
  const originalId = note.forkedFrom?.id ?? null;
  // a page deleted since its scope was read has no row: it is presented as read, without relatives
  const row = (await pageViewRows(em, [page.id], note.id, originalId)).get(page.id);
  const originalTeamEntity = row?.original_team ? em.map(Team, row.original_team as never) : undefined;
  // the members of both teams: from memory, or one more statement
  const members = await membersOf(reader, [note.team.id, ...(originalTeamEntity ? [originalTeamEntity.id] : [])]);
  const team = teamView(note.team, members, callerId);
  const originalTeam = originalTeamEntity ? teamView(originalTeamEntity, members, callerId) : undefined;
  const original = row?.original ? em.map(Note, row.original as never) : undefined;
  const view: NoteView = {
    note,
    team,
    original: original && originalTeam && can('note.read', originalTeam, original) ? { note: original, team: originalTeam } : undefined,
    pullable: row?.pullable === true && original !== undefined && can('note.edit', team),
  };
  const noteBody = shared(presentNote(view, urls, 'read'));
  return { page, note: noteBody, coverPageId: note.coverPageId ?? null, ...placed(page, row) };
}
