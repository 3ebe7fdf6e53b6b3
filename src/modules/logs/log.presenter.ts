// Presenting activity-log entries: pure, from the row and the objects loaded for the whole list (embeds.loader.ts).
// Each `type` has its presenter, which embeds the object named by the type when it still exists (and the note it is
// in). `title` comes from the summary kept with the entry, so it also describes what is gone.
import type { Log as LogBody } from '../../../generated/client/types.gen.ts';
import type { Embeds } from '../notifications/embeds.loader.ts';
import { timeAgo, type Language } from '../notifications/time-ago.ts';
import type { Log, LogType } from './log.entity.ts';
import { presentVia } from '../oauth/oauth.presenter.ts';

type Embedded = Partial<Pick<LogBody, 'note' | 'page' | 'issue' | 'comment' | 'request' | 'attachment' | 'team'>>;
type ObjectPresenter = (log: Log, embeds: Embeds) => Embedded;

const noteOf = (log: Log, embeds: Embeds): Embedded => {
  const note = log.note ? embeds.notes.get(log.note.id) : undefined;
  return note ? { note } : {};
};

/** The objects each type of entry embeds: the changed object, and the note it is in. */
export const logObjects: Record<LogType, ObjectPresenter> = {
  note: noteOf,
  page: (log, embeds) => {
    const page = log.page ? embeds.pages.get(log.page.id) : undefined;
    return { ...noteOf(log, embeds), ...(page ? { page } : {}) };
  },
  comment: (log, embeds) => {
    const comment = log.comment ? embeds.comments.get(log.comment.id) : undefined;
    return { ...noteOf(log, embeds), ...(comment ? { comment } : {}) };
  },
  team: (log, embeds) => {
    const team = log.team ? embeds.teams.get(log.team.id) : undefined;
    return team ? { team } : {};
  },
  issue: (log, embeds) => {
    const issue = log.issue ? embeds.issues.get(log.issue.id) : undefined;
    return { ...noteOf(log, embeds), ...(issue ? { issue } : {}) };
  },
  attachment: (log, embeds) => {
    const attachment = log.attachment ? embeds.attachments.get(log.attachment.id) : undefined;
    return { ...noteOf(log, embeds), ...(attachment ? { attachment } : {}) };
  },
  request: (log, embeds) => {
    const request = log.request ? embeds.requests.get(log.request.id) : undefined;
    return { ...noteOf(log, embeds), ...(request ? { request } : {}) };
  },
};

type Action = LogBody['action'];
/** Entries written before the actions took the schema's names. */
const legacyActions: Record<string, Action> = {
  created: 'create', updated: 'update', deleted: 'delete', restored: 'restore', renamed: 'update',
  member_added: 'add_user', member_changed: 'update_user', member_removed: 'remove_user',
};
export function actionOf(log: Log): Action {
  return legacyActions[log.action] ?? (log.action as Action);
}

const verbs: Record<Language, Record<Action, string>> = {
  en: {
    create: 'created', update: 'updated', delete: 'deleted', restore: 'restored', move: 'moved', fork: 'forked', pull: 'pulled',
    open: 'opened', close: 'closed', merge: 'merged', add_user: 'added a user to', update_user: 'changed a role in', remove_user: 'removed a user from',
  },
  ja: {
    create: '作成しました', update: '更新しました', delete: '削除しました', restore: '復元しました', move: '移動しました', fork: 'フォークしました',
    pull: 'プルしました', open: 'オープンしました', close: 'クローズしました', merge: 'マージしました', add_user: 'にユーザーを追加しました',
    update_user: 'でユーザーの権限を変更しました', remove_user: 'からユーザーを削除しました',
  },
};
const nouns: Record<Language, Record<LogType, string>> = {
  en: { note: 'the note', page: 'the page', issue: 'the issue', comment: 'a comment on', request: 'the request', attachment: 'the attachment', team: 'the team' },
  ja: { note: 'ノート', page: 'ページ', issue: 'イシュー', comment: 'コメント', request: 'リクエスト', attachment: '添付ファイル', team: 'チーム' },
};

function logTitle(log: Log, action: Action, who: string, language: Language): string {
  const summary = log.summary ?? {};
  const name = String(summary.title ?? summary.name ?? summary.filename ?? '');
  const user = typeof summary.username === 'string' ? ` (${summary.username})` : '';
  if (language === 'ja') {
    const membership = action === 'add_user' || action === 'update_user' || action === 'remove_user';
    return membership ? `${who}さんがチーム「${name}」${verbs.ja[action]}${user}` : `${who}さんが${nouns.ja[log.type]}「${name}」を${verbs.ja[action]}`;
  }
  return `${who} ${verbs.en[action]} ${nouns.en[log.type]} "${name}"${user}`;
}

export type LogReader = { language: Language; now: Date };

export function presentLog(log: Log, embeds: Embeds, reader: LogReader): LogBody | undefined {
  const user = embeds.users.get(log.user.id);
  if (!user) return undefined;
  const action = actionOf(log);
  return {
    id: log.id,
    user_id: log.user.id,
    created_at: log.createdAt.toISOString(),
    updated_at: log.updatedAt.toISOString(),
    user,
    time_ago: timeAgo(log.createdAt, reader.now, reader.language),
    type: log.type,
    action,
    title: logTitle(log, action, user.name || user.username, reader.language),
    ...logObjects[log.type](log, embeds),
    via: presentVia(log),
    model: 'log',
  };
}
