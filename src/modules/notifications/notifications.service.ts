// Reading and marking the caller's notifications. A notification about a note the recipient may no longer read
// (it became private, or they left its team) is not listed; it comes back if they may read the note again.
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import { notFound } from '../errors.ts';
import type { TextBudget } from '../../db/rows.ts';
import type { BudgetedPage } from '../../http/pagination.ts';
import { markUnreadRead, readableNotifications } from './notifications.repository.ts';
import { foldCase } from '../text/fold.ts';
import { Notification } from './notification.entity.ts';

export type NotificationFilter = { state: 'unread' | 'read' | 'all'; team: string | undefined };

const LARGEST_ID = 2_147_483_647;

/** The key a team filter is compared by (`teams.name_key`, text/fold.ts), or null for no filter. */
const teamKey = (team: string | undefined) => (team === undefined ? null : foldCase(team));

const readState = (state: NotificationFilter['state']) => (state === 'all' ? null : state === 'read');

/** One page of the recipient's notifications, newest first, with the total: one statement (two past the end). */
export async function findNotifications(em: EntityManager, userId: number, filter: NotificationFilter, budget: TextBudget): Promise<{ notifications: Notification[]; total: number; page: BudgetedPage }> {
  const state = readState(filter.state);
  const team = teamKey(filter.team);
  const { items, total, page: results } = await readableNotifications(em, userId, state, team, budget);
  return { notifications: items, total, page: results };
}

/** The caller's own notification `id`; anyone else's answers 404, as if it did not exist. */
export async function findOwnNotification(em: EntityManager, userId: number, id: number): Promise<Notification> {
  const notification = Number.isSafeInteger(id) && id > 0 && id <= LARGEST_ID ? await em.findOne(Notification, { id, user: userId }) : null;
  if (!notification) throw notFound('notification');
  return notification;
}

/** Read becomes unread and unread read. */
export async function toggleNotification(em: EntityManager, notification: Notification): Promise<Notification> {
  notification.isRead = !notification.isRead;
  await em.flush();
  return notification;
}

/** Marks every unread notification of the user read (only those about notes of `team`, when given): one statement. */
export async function markAllRead(em: EntityManager, userId: number, team: string | undefined): Promise<number> {
  return markUnreadRead(em, userId, teamKey(team), currentTime());
}
