// Reading the activity log, scoped in the query to what the caller may read now (design.md, "States and events"):
// - entries about a note or inside it: the note is public, or the caller is in the note's team (its team now,
//   after a move);
// - the entries of a deleted note and of what was in it: it was public, or the caller is in the team it was in;
// - entries about a team: the caller is in it; a deleted team's entry: the user who deleted it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TextBudget } from '../../db/rows.ts';
import type { BudgetedPage } from '../../http/pagination.ts';
import { foldCase } from '../text/fold.ts';
import type { Log } from './log.entity.ts';
import { readableLogs } from './logs.repository.ts';

export type LogFilter = { team: string | undefined; noteId: number | undefined };

/** `textBytes`: the SQL estimating an entry's text in bytes (notifications/notifications.repository.ts). */
export async function findLogs(em: EntityManager, callerId: number, filter: LogFilter, budget: TextBudget, textBytes: (alias: string) => string): Promise<{ logs: Log[]; total: number; page: BudgetedPage }> {
  // a team name compares by its key (text/fold.ts), as everywhere names are matched
  const team = filter.team === undefined ? null : foldCase(filter.team);
  const noteId = filter.noteId ?? null;
  const { items, total, page: results } = await readableLogs(em, callerId, team, noteId, budget, textBytes);
  return { logs: items, total, page: results };
}
