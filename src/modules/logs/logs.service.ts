// Reading the activity log, scoped in the query to what the caller may read now (design.md, "States and events"):
// - entries about a note or inside it: the note is public, or the caller is in the note's team (its team now,
//   after a move);
// - the entries of a deleted note and of what was in it: it was public, or the caller is in the team it was in;
// - entries about a team: the caller is in it; a deleted team's entry: the user who deleted it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { budgetedPageOfEntities, type TextBudget } from '../../db/rows.ts';
import type { BudgetedPage } from '../../http/pagination.ts';
import { foldCase } from '../text/fold.ts';
import { Log } from './log.entity.ts';

export type LogFilter = { team: string | undefined; noteId: number | undefined };

/** `textBytes`: the SQL estimating an entry's text in bytes (notifications/notifications.repository.ts). */
export async function findLogs(em: EntityManager, callerId: number, filter: LogFilter, budget: TextBudget, textBytes: (alias: string) => string): Promise<{ logs: Log[]; total: number; page: BudgetedPage }> {
  const where = `from logs l
      left join notes n on n.id = l.note_id
      left join memberships m on m.team_id = coalesce(n.team_id, l.team_id) and m.user_id = ?
     where (
             (l.note_id is not null and (not n.is_private or m.id is not null))
          or (l.note_id is null and l.team_id is not null
              and (m.id is not null or (l.summary ->> 'is_private') = 'false'))
          or (l.note_id is null and l.team_id is null and l.user_id = ?)
           )
       and (?::text is null or coalesce(n.team_id, l.team_id) = (select id from teams where name_key = ?::text))
       and (?::int is null or l.note_id = ?::int or (l.note_id is null and (l.summary ->> 'note_id')::int = ?::int))`;
  // a team name compares by its key (text/fold.ts), as everywhere names are matched
  const team = filter.team === undefined ? null : foldCase(filter.team);
  const noteId = filter.noteId ?? null;
  const parameters = [callerId, callerId, team, team, noteId, noteId, noteId];
  const { items, total, page: results } = await budgetedPageOfEntities(em, Log, 'l', where, parameters, 'l.id desc', textBytes('l'), budget);
  return { logs: items, total, page: results };
}
