// Presenting notifications: pure, from the row and the objects loaded for the whole list (embeds.loader.ts).
// Each `type` has its presenter, which embeds the object named by the type; the types whose objects cannot be
// presented (none today) would only carry the note until their module adds its presenter here.
import type { Notification as NotificationBody } from '../../../generated/client/types.gen.ts';
import type { Embeds } from './embeds.loader.ts';
import type { Notification, NotificationEvent, NotificationType } from './notification.entity.ts';
import { timeAgo, type Language } from './time-ago.ts';

type Embedded = Partial<Pick<NotificationBody, 'page' | 'issue' | 'request' | 'comment'>>;
type ObjectPresenter = (notification: Notification, embeds: Embeds) => Embedded;

/** The object each type of notification embeds besides its note (the note itself for `note`). */
export const notificationObjects: Record<NotificationType, ObjectPresenter> = {
  note: () => ({}),
  page: (notification, embeds) => {
    const page = notification.page ? embeds.pages.get(notification.page.id) : undefined;
    return page ? { page } : {};
  },
  comment: (notification, embeds) => {
    const comment = notification.comment ? embeds.comments.get(notification.comment.id) : undefined;
    return comment ? { comment } : {};
  },
  issue: (notification, embeds) => {
    const issue = notification.issue ? embeds.issues.get(notification.issue.id) : undefined;
    return issue ? { issue } : {};
  },
  request: (notification, embeds) => {
    const request = notification.request ? embeds.requests.get(notification.request.id) : undefined;
    return request ? { request } : {};
  },
};

type TitleParts = { who: string; note: string; object: string };
/** Titles in the reader's language, per event; an event without one here shows the title stored when it was made. */
const titles: Record<Language, Partial<Record<NotificationEvent, (parts: TitleParts) => string>>> = {
  en: {
    new_note: ({ who, note }) => `${who} created the note "${note}"`,
    mention: ({ who, object }) => `${who} mentioned you in a comment on "${object}"`,
    comment: ({ who, object }) => `${who} commented on "${object}"`,
    assign: ({ who, object }) => `${who} assigned you "${object}"`,
  },
  ja: {
    new_note: ({ who, note }) => `${who}さんがノート「${note}」を作成しました`,
    mention: ({ who, object }) => `${who}さんが「${object}」へのコメントであなたをメンションしました`,
    comment: ({ who, object }) => `${who}さんが「${object}」にコメントしました`,
    assign: ({ who, object }) => `${who}さんが「${object}」をあなたに割り当てました`,
  },
};

export type NotificationReader = { language: Language; now: Date };

/** The notification, or undefined when its note is not loaded (it is filtered out of lists before this). */
export function presentNotification(notification: Notification, embeds: Embeds, reader: NotificationReader): NotificationBody | undefined {
  const note = embeds.notes.get(notification.note.id);
  const fromUser = embeds.users.get(notification.fromUser.id);
  if (!note || !fromUser) return undefined;
  const objects = notificationObjects[notification.type](notification, embeds);
  const objectTitle = objects.page?.title ?? objects.issue?.label ?? objects.request?.label ?? note.title;
  const title = titles[reader.language][notification.event]?.({ who: fromUser.name || fromUser.username, note: note.title, object: objectTitle }) ?? notification.title;
  return {
    id: notification.id,
    event: notification.event,
    is_read: notification.isRead,
    created_at: notification.createdAt.toISOString(),
    updated_at: notification.updatedAt.toISOString(),
    from_user: fromUser,
    note,
    title,
    time_ago: timeAgo(notification.createdAt, reader.now, reader.language),
    type: notification.type,
    ...objects,
    model: 'notification',
  };
}
