import { defineOperation, readerOf, type HandlerContext } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listBudget, listPlace } from '../../http/pagination.ts';
import type { Caller } from '../access/caller.ts';
import { embedIds, loadEmbeds } from './embeds.loader.ts';
import type { Notification } from './notification.entity.ts';
import { presentNotification, type NotificationReader } from './notification.presenter.ts';
import { findNotifications, findOwnNotification, markAllRead, toggleNotification } from './notifications.service.ts';
import { languageOf } from './time-ago.ts';

/** Presents a list of notifications with everything they embed loaded once for all (embeds.loader.ts). */
async function present(context: HandlerContext, caller: Caller, notifications: readonly Notification[]) {
  const ids = embedIds();
  for (const notification of notifications) {
    ids.users.add(notification.fromUser.id);
    ids.notes.add(notification.note.id);
    if (notification.type === 'page' && notification.page) ids.pages.add(notification.page.id);
    if (notification.type === 'issue' && notification.issue) ids.issues.add(notification.issue.id);
    if (notification.type === 'request' && notification.request) ids.requests.add(notification.request.id);
    if (notification.type === 'comment' && notification.comment) ids.comments.add(notification.comment.id);
  }
  const embeds = await loadEmbeds(readerOf(context), ids);
  const reader: NotificationReader = { language: languageOf(caller.user), now: new Date() };
  return notifications.flatMap((notification) => presentNotification(notification, embeds, reader) ?? []);
}

async function toggle(context: HandlerContext, caller: Caller, id: number) {
  const notification = await toggleNotification(context.em, await findOwnNotification(context.em, caller.user.id, id));
  return (await present(context, caller, [notification]))[0]!;
}

export const notificationOperations = {
  listNotifications: defineOperation('listNotifications', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const { notifications, total, page } = await findNotifications(context.em, caller.user.id, { state: query.state ?? 'unread', team: query.team }, listBudget(context, query));
    const list = listPlace(page, total);
    return answerWith(await present(context, caller, notifications), { list });
  }),

  toggleNotification: defineOperation('toggleNotification', { scope: 'caller', action: 'signed-in' }, async ({ path }, { caller }, context) => toggle(context, caller, path.id)),
  toggleNotificationViaPut: defineOperation('toggleNotificationViaPut', { scope: 'caller', action: 'signed-in' }, async ({ path }, { caller }, context) => toggle(context, caller, path.id)),

  markNotificationsRead: defineOperation('markNotificationsRead', { scope: 'caller', action: 'signed-in' }, async ({ query, body }, { caller }, context) => {
    const team = query.team ?? body?.team ?? undefined;
    return { marked: await markAllRead(context.em, caller.user.id, team), model: 'notifications_read' as const };
  }),
};
