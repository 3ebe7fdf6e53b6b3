// The activity log's SQL: the page of entries a caller may read (logs.service.ts; the rules are at its top) and the
// summaries a deleted note's entries keep (logs.subscriber.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { budgetedPageOfEntities, type TextBudget } from '../../db/rows.ts';
import type { BudgetedPage } from '../../http/pagination.ts';
import { Log } from './log.entity.ts';

/**
 * One page of the entries the caller may read now, newest first, narrowed to a team (by its name's key) and a note
 * where given; the permissions are in the statement, before any limit, so a page is never short. `textBytes`: the
 * SQL estimating an entry's text in bytes (notifications/notifications.repository.ts).
 */
export async function readableLogs(
  em: EntityManager,
  callerId: number,
  teamKey: string | null,
  noteId: number | null,
  budget: TextBudget,
  textBytes: (alias: string) => string,
): Promise<{ items: Log[]; total: number; page: BudgetedPage }> {
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
  const parameters = [callerId, callerId, teamKey, teamKey, noteId, noteId, noteId];
  return budgetedPageOfEntities(em, Log, 'l', where, parameters, 'l.id desc', textBytes('l'), budget);
}

/**
 * The entries about a note and what was inside it outlive the note (their `note_id` becomes null when it goes):
 * before it goes, each keeps in its summary the note's id, title and privacy, who may still read it and what it was about.
 */
export async function keepEntriesOfDeletedNote(em: EntityManager, note: { id: number; title: string; isPrivate: boolean }): Promise<void> {
  await em.execute(
    `update logs set summary = coalesce(summary, '{}'::jsonb) || jsonb_build_object('note_id', ?::int, 'note_title', ?::text, 'is_private', ?::boolean)
      where note_id = ?`,
    [note.id, note.title, note.isPrivate, note.id],
  );
}
