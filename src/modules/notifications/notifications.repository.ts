// The notifications module's SQL, where its ORM entities do not express it: the size of an entry's text in a list
// (shared with the activity log), the page of notifications a recipient may read, and marking them all read
// (notifications.service.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { budgetedPageOfEntities, type TextBudget } from '../../db/rows.ts';
import type { BudgetedPage } from '../../http/pagination.ts';
import { Notification } from './notification.entity.ts';

/**
 * The text a notification or log entry `alias` (with its note joined as `n`) carries in a list, in bytes as stored
 * (db/rows.ts, `budgetedPageOfEntities`): its note's description (as `description_html`), the body of its comment,
 * the description of its issue or its comment's issue (sent twice: `description`, `description_html`), and the diffs
 * of the pages of its request or its comment's request (an embedded request carries each page's diff): a page of
 * results ends where they reach LIMIT_LIST_TEXT_BYTES, whatever the objects embedded.
 */
export function embeddedTextBytes(alias: string): string {
  const diffs = (request: string) => `coalesce((select sum(octet_length(rp.diff)) from request_pages rp where rp.request_id = ${request}), 0)`;
  return `(coalesce(octet_length(n.description), 0)
    + coalesce((select octet_length(c.body) + coalesce((select 2 * octet_length(i.description) from issues i where i.id = c.issue_id), 0)
                  + ${diffs('c.request_id')}
                  from comments c where c.id = ${alias}.comment_id), 0)
    + coalesce((select 2 * octet_length(i.description) from issues i where i.id = ${alias}.issue_id), 0)
    + ${diffs(`${alias}.request_id`)})`;
}

/**
 * One page of the recipient's notifications about notes they may still read, newest first, narrowed to read or
 * unread (`isRead`) and to a team (by its name's key) where given; the permission is in the statement, before any limit.
 */
export async function readableNotifications(
  em: EntityManager,
  userId: number,
  isRead: boolean | null,
  teamKey: string | null,
  budget: TextBudget,
): Promise<{ items: Notification[]; total: number; page: BudgetedPage }> {
  const where = `from notifications x
      join notes n on n.id = x.note_id
      left join memberships m on m.team_id = n.team_id and m.user_id = x.user_id
     where x.user_id = ? and (not n.is_private or m.id is not null)
       and (?::boolean is null or x.is_read = ?::boolean)
       and (?::text is null or n.team_id = (select id from teams where name_key = ?::text))`;
  const parameters = [userId, isRead, isRead, teamKey, teamKey];
  return budgetedPageOfEntities(em, Notification, 'x', where, parameters, 'x.id desc', embeddedTextBytes('x'), budget);
}

/** Marks the user's unread notifications read (about notes of the team with this key, when given), in one statement; how many. */
export async function markUnreadRead(em: EntityManager, userId: number, teamKey: string | null, now: Date): Promise<number> {
  const rows = await em.execute<{ id: number }[]>(
    `update notifications x set is_read = true, updated_at = ?
      where x.user_id = ? and not x.is_read
        and (?::text is null or x.note_id in (select n.id from notes n join teams t on t.id = n.team_id where t.name_key = ?::text))
      returning x.id`,
    [now, userId, teamKey, teamKey],
  );
  return rows.length;
}
