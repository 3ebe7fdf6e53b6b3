// The view of one page (what getPage and every write of a page answer) in one prepared statement: the page's
// ancestry, parent and children, the original of a fork (with its team) and whether the fork can pull; the members
// of the teams come from memory (teams.loader.ts) or one more statement. Rows come back as JSON and are mapped to the ORM's
// entities, so the same presenters serve them (pages.loader.ts loads the same for many pages in a few queries).
import type { Reader } from '../../cache/memory.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { jsonColumns, preparedQuery } from '../../db/rows.ts';
import { shared } from '../../http/json.ts';
import { can } from '../access/policy.ts';
import { Note } from '../notes/note.entity.ts';
import { originalChangedSql } from '../notes/notes.loader.ts';
import { presentNote, type NoteView } from '../notes/note.presenter.ts';

import { Team } from '../teams/team.entity.ts';
import { membersOf, teamView } from '../teams/teams.loader.ts';
import { Page } from './page.entity.ts';
import type { PageHeading, PageView } from './page.presenter.ts';
import { joinPath } from './tree.ts';

type HeadingRow = { id: number; title: string; created_at: string; updated_at: string };
type Row = {
  titles: string[];
  parent: HeadingRow | null;
  children: HeadingRow[];
  original: Record<string, unknown> | null;
  original_team: Record<string, unknown> | null;
  pullable: boolean;
};

/** A relative's heading (what a summary shows), never its content: a page with many large children stays small. */
const headingColumns = (alias: string) =>
  `json_build_object('id', ${alias}.id, 'title', ${alias}.title, 'created_at', ${alias}.created_at, 'updated_at', ${alias}.updated_at)`;

function heading(row: HeadingRow): PageHeading {
  return { id: row.id, title: row.title, createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at) };
}

function statement(em: EntityManager): string {
  return `with recursive up as (
       select id, parent_id, title, 0 as level from pages where id = $1
       union all
       select p.id, p.parent_id, p.title, up.level + 1 from pages p join up on p.id = up.parent_id where up.level < 1000
     )
     select
       (select json_agg(title order by level desc) from up) as "titles",
       (select ${headingColumns('pp')} from pages pp where pp.id = (select parent_id from pages where id = $1)) as "parent",
       (select coalesce(json_agg(${headingColumns('c')} order by c.position, c.id), '[]'::json)
          from pages c where c.parent_id = $1) as "children",
       case when o.id is null then null else ${jsonColumns(em, Note, 'o')} end as "original",
       case when ot.id is null then null else ${jsonColumns(em, Team, 'ot')} end as "original_team",
       o.id is not null and ${originalChangedSql('fork', 'o.id')} as "pullable"
     from (select 1) one
     left join notes fork on fork.id = $2
     left join notes o on o.id = $3
     left join teams ot on ot.id = o.team_id`;
}

/** Everything presenting the page needs, for this caller; `note` must have its team loaded. */
export async function loadOnePageView(reader: Reader, note: Note, page: Page): Promise<PageView> {
  const { em, callerId, urls } = reader;
  const originalId = note.forkedFrom?.id ?? null;
  const [row] = await preparedQuery<Row>(em, 'page_view', statement(em), [page.id, note.id, originalId]);
  const originalTeamEntity = row!.original_team ? em.map(Team, row!.original_team as never) : undefined;
  // the members of both teams: from memory, or one more statement
  const members = await membersOf(reader, [note.team.id, ...(originalTeamEntity ? [originalTeamEntity.id] : [])]);
  const team = teamView(note.team, members, callerId);
  const originalTeam = originalTeamEntity ? teamView(originalTeamEntity, members, callerId) : undefined;
  const original = row!.original ? em.map(Note, row!.original as never) : undefined;
  const view: NoteView = {
    note,
    team,
    original: original && originalTeam && can('note.read', originalTeam, original) ? { note: original, team: originalTeam } : undefined,
    pullable: row!.pullable && original !== undefined && can('note.edit', team),
  };
  const noteBody = shared(presentNote(view, urls, 'read'));
  const titles = row!.titles ?? [page.title];
  const parent = row!.parent ? heading(row!.parent) : undefined;
  return {
    page,
    path: joinPath(titles),
    note: noteBody,
    coverPageId: note.coverPageId ?? null,
    parent: parent ? { page: parent, path: joinPath(titles.slice(0, -1)) } : undefined,
    children: row!.children.map((child) => ({ page: heading(child), path: joinPath([...titles, child.title]) })),
  };
}
