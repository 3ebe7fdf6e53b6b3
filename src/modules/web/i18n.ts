// The interface text of the browser views in the reader's language: the signed-in user's `lang` setting, and for
// a browser that is not signed in (the 404 page, the sign-in redirect) its Accept-Language. Dates are formatted by
// Intl; `time_ago` is the notifications module's (one wording for the API and the views).
import type { Request } from 'express';
import { timeAgo, type Language } from '../notifications/time-ago.ts';

/** The word for `key` in `words`, or the key itself (a value the API adds later shows as sent, never as nothing). */
const pick = (words: Record<string, string>, key: string): string => words[key] ?? key;

// Log.type and Log.action in words (the API's values are identifiers: `team add_user`)
const enTypes = { note: 'Note', page: 'Page', issue: 'Issue', comment: 'Comment', request: 'Request', attachment: 'Attachment', team: 'Team' };
const enActions = {
  create: 'created', update: 'updated', delete: 'deleted', restore: 'restored', move: 'moved', fork: 'forked', pull: 'updated from its original',
  open: 'opened', close: 'closed', merge: 'merged', add_user: 'member added', update_user: 'role changed', remove_user: 'member removed',
};
const jaTypes = { note: 'ノート', page: 'ページ', issue: '課題', comment: 'コメント', request: 'リクエスト', attachment: '添付ファイル', team: 'チーム' };
const jaActions = {
  create: '作成', update: '更新', delete: '削除', restore: '復元', move: '移動', fork: 'フォーク', pull: '元のノートから取り込み',
  open: 'オープン', close: 'クローズ', merge: 'マージ', add_user: 'メンバー追加', update_user: 'ロール変更', remove_user: 'メンバー削除',
};

const en = {
  signOut: 'Sign out', signedInAs: 'Signed in as', activity: 'Activity', notifications: 'Notifications', apiReference: 'API reference',
  teams: 'Teams', notes: 'Notes', members: 'Members', managers: 'Managers', recentActivity: 'Recent activity', nothing: 'Nothing yet.',
  pages: 'Pages', morePages: 'More pages', issues: 'Issues', requests: 'Requests', forkedFrom: 'Forked from', privateNote: 'Private',
  publicNote: 'Public', children: 'Pages below', comments: 'Comments', history: 'History', version: 'Version', author: 'Author',
  when: 'When', compare: 'Changes', compareWithPrevious: 'Changes from the version before', current: 'Current page',
  diff: 'Changes', from: 'from', to: 'to', issue: 'Issue', done: 'Done', open: 'Open', assignee: 'Assigned to', nobody: 'nobody',
  request: 'Request', state: 'State', mergeable: 'Can be merged', notMergeable: 'Cannot be merged without a decision', mergeUnknown: 'Whether it merges is not known yet: read it again in a moment', noFork: 'Imported without its fork: it cannot be merged',
  conflicts: 'Conflicts', region: 'Region', base: 'Base', ours: 'Original (ours)', theirs: 'Fork (theirs)', merged: 'Merged',
  closed: 'Closed', opened: 'Open', wip: 'Work in progress', unread: 'unread', previous: 'Previous', next: 'Next', page: 'Page',
  notFoundTitle: 'Not found', notFoundText: 'There is nothing here, or you may not see it.', errorTitle: 'Something went wrong',
  home: 'Home', by: 'by', updated: 'updated', team: 'Team', note: 'Note', fork: 'Fork', classification: 'Standing', kind: 'Kind',
  into: 'into', noDiff: 'No change.', deleted: 'deleted', skipToContent: 'Skip to the content', breadcrumbs: 'Breadcrumbs',
  pageTree: 'Page tree', main: 'Site', showNow: 'Show it as it is now',
  allPages: 'All pages…', all: 'All', openIssues: 'Open issues', openRequests: 'Open requests',
  keepOurs: 'Keep the original', takeTheirs: 'Take the fork\'s', useEdited: 'Use my text', editedText: 'My text for this region (HTML): a change here uses it',
  requestChanged: 'This request changed since you loaded it. Nothing was merged: look at it again as it is now and decide again.',
  closeRequest: 'Close the request', reopenRequest: 'Reopen the request', mergeRequest: 'Merge',
  decideEachRegion: 'Choose for each region above, then merge. What is not in a region is merged as it is.', readyToMerge: 'No conflicts: the changes can be merged as they are.',
  sourceDiff: 'Source (HTML, line by line)', tooLargeToRender: 'This change is too large to show as the page reads; here is its source, line by line.',
  addComment: 'Add a comment', mentionHint: 'Write @username to mention someone: they are notified.', postComment: 'Comment',
  forbiddenTitle: 'Not allowed', forbiddenText: 'You may see this, but not do that.',
  newNote: 'New note', newPage: 'New page', editPage: 'Edit', title: 'Title', contentHtml: 'Content (HTML)', parentPage: 'Under the page',
  topLevel: '(top level)', parentNumber: 'or the number of any page of this note (the last part of its address)',
  slug: 'Short name in addresses (optional: a-z, 0-9, _ and -)', privateOnly: 'Private: only the team sees it', create: 'Create',
  save: 'Save', cancel: 'Cancel', move: 'Move', movePage: 'Move this page', deletePage: 'Delete this page', delete: 'Delete',
  confirmDelete: 'Delete this page and every page below it, with their histories and comments',
  confirmFirst: 'Nothing was deleted: tick the box to confirm, then delete.',
  restoreVersion: 'Restore this version', restoreHint: 'The page gets this version\'s title and content as a new version: nothing in the history is lost.',
  keepPageNow: 'Keep the page as it is now', takeMine: 'Take mine', pageNow: 'The page now', yourText: 'Your text',
  overwrite: 'Save my text over the newer version (it stays in the history)',
  decideAgain: 'The page changed again while you decided. Nothing was saved: your text is below, save it again to merge it with the page as it is now.',
  editConflict: (version: number) => `Someone saved this page since you opened it (it is now version ${version}) and changed some of the same text. Nothing was saved: choose for each region below, then save again. What is not in a region is merged as it is.`,
  editMergeUnknown: (reason: string) => `Your changes could not be merged with the page as it is now (${reason}). Nothing was saved; your text is below.`,
  decisionFor: (region: number) => `Your decision for region ${region}`,
  chooseEveryRegion: (regions: string) => `Nothing was merged: choose for every region (${regions}).`,
  typedButTheirs: (regions: string) => `Nothing was merged: in ${regions} you chose the fork's text and also changed the text in the box. Choose "Use my text" to use yours, or the fork's with the box as it came.`,
  issueLabel: (index: number) => `issue #${index}`,
  requestLabel: (index: number) => `request #${index}`,
  /** RequestPage.type, RequestPage.classification, Request.mergeable_state, MergeConflict.kind. */
  pageType: (type: string) => pick({ create: 'new page', update: 'changed page', delete: 'page deleted' }, type),
  standing: (standing: string) => pick({ unchanged: 'unchanged', fork_only: 'changed in the fork only', upstream_only: 'changed in the original only', identical: 'the same on both sides', diverged: 'changed on both sides' }, standing),
  mergeState: (state: string) => pick({ clean: 'clean', conflicting: 'conflicting', outdated: 'the original changed since, merges cleanly', merged: 'merged', closed: 'closed' }, state),
  conflictKind: (kind: string) => pick({ content: 'the same text changed on both sides', delete_modify: 'deleted on one side, changed on the other', tree: 'moved to different places' }, kind),
  /** A log entry's kind and action (Log.type, Log.action). */
  logEvent: (type: string, action: string) => `${pick(enTypes, type)} ${pick(enActions, action)}`,
  /** What a notification is about (Notification.event). */
  notificationEvent: (event: string) => pick({ new_note: 'new note', mention: 'mentioned you', assign: 'assigned to you', comment: 'comment', request: 'request', merge: 'merged', close: 'closed' }, event),
  /** The caller's role in a team (Team.role). */
  role: (role: string) => pick({ manager: 'You manage this team', member: 'You are a member' }, role),
  language: (code: string) => pick({ en: 'English', ja: 'Japanese' }, code),
  /** The banner of a view of the note as it was (`?at=`). */
  asItWas: (date: string) => `As it was on ${date}`,
  /** On a version saved by merge-on-write (PageVersion.merged_from_base). */
  mergedWith: (base: number) => `merged with version ${base}`,
  /** On a version a merged request wrote (PageVersion.merged_request). */
  fromRequest: (index: number) => `merged from request #${index}`,
  /** On what was made through an app (Via). */
  via: (app: string) => `via ${app}`,
  /** Before the other authors of a version a live save wrote (PageVersion.co_authors). */
  withCoAuthors: 'with',
  /** The live editor of the edit view (views/page-forms.ts, editor/editor.client.ts). */
  liveConnecting: 'Connecting to the live editor… Until it opens, the form below works as it always does.',
  liveSaved: 'Live: your changes are saved automatically.',
  liveOffline: 'Offline: your changes are kept and sent when the connection is back.',
  liveRefused: 'The live editor is not available: ',
  liveReadOnly: 'You may read this page here, but not change it.',
  liveEditHtml: 'Edit the HTML (and the title) instead',
  liveHandedOver: 'While you were offline, the page changed elsewhere: the editor shows it as it is now, and your text is in the form below. Save the form to merge your text with the page.',
  liveYou: '(you)',
  liveLinkPrompt: 'Link address (leave it empty for no link)',
  liveFormatting: 'Formatting', liveBold: 'Bold', liveItalic: 'Italic', liveHeading: 'Heading', liveBulletList: 'Bulleted list',
  liveOrderedList: 'Numbered list', liveLink: 'Link', liveContent: 'Page content', liveOnPage: 'On this page now',
  liveOpensInTextArea: (reason: string) => `This page opens in the HTML text area: ${reason}`,
};
export type Strings = typeof en;

const ja: Strings = {
  signOut: 'サインアウト', signedInAs: 'サインイン中:', activity: 'アクティビティ', notifications: '通知', apiReference: 'APIリファレンス',
  teams: 'チーム', notes: 'ノート', members: 'メンバー', managers: '管理者', recentActivity: '最近のアクティビティ', nothing: 'まだありません。',
  pages: 'ページ', morePages: '続きのページ', issues: '課題', requests: 'リクエスト', forkedFrom: 'フォーク元', privateNote: '非公開',
  publicNote: '公開', children: '子ページ', comments: 'コメント', history: '履歴', version: 'バージョン', author: '作成者',
  when: '日時', compare: '差分', compareWithPrevious: '前のバージョンとの差分', current: '現在のページ',
  diff: '差分', from: '比較元', to: '比較先', issue: '課題', done: '完了', open: '未完了', assignee: '担当者', nobody: 'なし',
  request: 'リクエスト', state: '状態', mergeable: 'マージできます', notMergeable: '判断なしではマージできません', mergeUnknown: 'マージできるかはまだ分かりません。少し待ってから開き直してください', noFork: 'フォークなしでインポートされたため、マージできません',
  conflicts: '競合', region: '箇所', base: '共通の元', ours: '元のノート (ours)', theirs: 'フォーク (theirs)', merged: 'マージ済み',
  closed: 'クローズ', opened: 'オープン', wip: '作業中', unread: '未読', previous: '前へ', next: '次へ', page: 'ページ',
  notFoundTitle: '見つかりません', notFoundText: 'ここには何もないか、見る権限がありません。', errorTitle: 'エラーが発生しました',
  home: 'ホーム', by: '作成者', updated: '更新', team: 'チーム', note: 'ノート', fork: 'フォーク', classification: '状況', kind: '種類',
  into: 'マージ先', noDiff: '変更はありません。', deleted: '削除', skipToContent: '本文へ移動', breadcrumbs: 'パンくずリスト',
  pageTree: 'ページツリー', main: 'サイト', showNow: '現在の内容を表示',
  allPages: 'すべてのページ…', all: 'すべて', openIssues: '未完了の課題', openRequests: 'オープンのリクエスト',
  keepOurs: '元のノートの内容を残す', takeTheirs: 'フォークの内容を採用', useEdited: '自分で書いた内容を使う', editedText: 'この箇所の内容 (HTML): 書き換えるとその内容が使われます',
  requestChanged: 'このリクエストは表示後に変更されました。マージはしていません。現在の内容を確認して、もう一度選んでください。',
  closeRequest: 'リクエストをクローズ', reopenRequest: 'リクエストを再オープン', mergeRequest: 'マージ',
  decideEachRegion: '上の各箇所について選んでからマージしてください。箇所以外の変更はそのままマージされます。', readyToMerge: '競合はありません。このままマージできます。',
  sourceDiff: 'ソース (HTML、行ごと)', tooLargeToRender: '変更が大きすぎるため、ページの表示どおりには示せません。行ごとのソースを表示します。',
  addComment: 'コメントを追加', mentionHint: '@ユーザー名 と書くとその人に通知されます。', postComment: 'コメントする',
  forbiddenTitle: '許可されていません', forbiddenText: '閲覧はできますが、この操作はできません。',
  newNote: '新しいノート', newPage: '新しいページ', editPage: '編集', title: 'タイトル', contentHtml: '内容 (HTML)', parentPage: '親ページ',
  topLevel: '(最上位)', parentNumber: 'またはこのノートのページ番号 (アドレスの最後の部分)',
  slug: 'アドレスに使う短い名前 (任意: a-z, 0-9, _ と -)', privateOnly: '非公開: チームのみが見られます', create: '作成',
  save: '保存', cancel: 'キャンセル', move: '移動', movePage: 'このページを移動', deletePage: 'このページを削除', delete: '削除',
  confirmDelete: 'このページと下にあるすべてのページを、履歴とコメントごと削除します',
  confirmFirst: '削除していません。確認の欄にチェックを入れてから削除してください。',
  restoreVersion: 'このバージョンに戻す', restoreHint: 'このバージョンのタイトルと内容が新しいバージョンとして保存されます。履歴は失われません。',
  keepPageNow: '今のページのままにする', takeMine: '自分の内容にする', pageNow: '今のページ', yourText: '自分の内容',
  overwrite: '新しいバージョンの上に自分の内容を保存する (履歴には残ります)',
  decideAgain: '選んでいる間にページがまた変わりました。保存していません。下の内容をもう一度保存すると、今のページとマージします。',
  editConflict: (version: number) => `開いた後に誰かがこのページを保存し (現在バージョン ${version})、同じ箇所を変更しています。保存していません。下の箇所ごとに選んでから、もう一度保存してください。箇所以外はそのままマージします。`,
  editMergeUnknown: (reason: string) => `今のページと変更をマージできませんでした (${reason})。保存していません。内容は下に残っています。`,
  decisionFor: (region: number) => `箇所 ${region} の選択`,
  chooseEveryRegion: (regions: string) => `マージはしていません。すべての箇所について選んでください (${regions})。`,
  typedButTheirs: (regions: string) => `マージはしていません。${regions} でフォークの内容を選び、欄の内容も書き換えています。自分の内容を使うなら「自分で書いた内容を使う」を、フォークの内容なら欄を元に戻して選んでください。`,
  issueLabel: (index: number) => `課題 #${index}`,
  requestLabel: (index: number) => `リクエスト #${index}`,
  pageType: (type: string) => pick({ create: '新しいページ', update: '変更されたページ', delete: 'ページの削除' }, type),
  standing: (standing: string) => pick({ unchanged: '変更なし', fork_only: 'フォークのみ変更', upstream_only: '元のノートのみ変更', identical: '両方で同じ変更', diverged: '両方で異なる変更' }, standing),
  mergeState: (state: string) => pick({ clean: '問題なし', conflicting: '競合あり', outdated: '元のノートが更新済み (競合なし)', merged: 'マージ済み', closed: 'クローズ' }, state),
  conflictKind: (kind: string) => pick({ content: '両方で同じ箇所を変更', delete_modify: '一方で削除、他方で変更', tree: '異なる場所へ移動' }, kind),
  logEvent: (type: string, action: string) => `${pick(jaTypes, type)}: ${pick(jaActions, action)}`,
  notificationEvent: (event: string) => pick({ new_note: '新しいノート', mention: 'メンション', assign: '担当の割り当て', comment: 'コメント', request: 'リクエスト', merge: 'マージ', close: 'クローズ' }, event),
  role: (role: string) => pick({ manager: 'このチームの管理者です', member: 'このチームのメンバーです' }, role),
  language: (code: string) => pick({ en: '英語', ja: '日本語' }, code),
  asItWas: (date: string) => `${date} 時点の内容`,
  mergedWith: (base: number) => `バージョン ${base} とマージ`,
  fromRequest: (index: number) => `リクエスト #${index} からマージ`,
  via: (app: string) => `${app} 経由`,
  withCoAuthors: '共同編集:',
  liveConnecting: 'ライブエディターに接続しています… 開くまでは、下のフォームでいつもどおり編集できます。',
  liveSaved: 'ライブ編集中: 変更は自動で保存されます。',
  liveOffline: 'オフライン: 変更は保持され、接続が戻ると送信されます。',
  liveRefused: 'ライブエディターは使えません: ',
  liveReadOnly: 'このページは閲覧のみで、変更はできません。',
  liveEditHtml: '代わりに HTML (とタイトル) を編集する',
  liveHandedOver: 'オフラインの間にページが別の場所で変更されました。エディターには今のページを表示し、あなたの内容は下のフォームに入っています。フォームを保存すると、あなたの内容がページとマージされます。',
  liveYou: '(あなた)',
  liveLinkPrompt: 'リンク先のアドレス (空欄にするとリンクなし)',
  liveFormatting: '書式', liveBold: '太字', liveItalic: '斜体', liveHeading: '見出し', liveBulletList: '箇条書き',
  liveOrderedList: '番号付きリスト', liveLink: 'リンク', liveContent: 'ページの内容', liveOnPage: '今このページを開いている人',
  liveOpensInTextArea: (reason: string) => `このページは HTML のテキスト欄で開きます: ${reason}`,
};

const tables: Record<Language, Strings> = { en, ja };

export type Locale = { language: Language; t: Strings; ago(iso: string): string; date(iso: string): string };

const dateFormats: Record<Language, Intl.DateTimeFormat> = {
  en: new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
  ja: new Intl.DateTimeFormat('ja', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
};

export function localeOf(language: Language): Locale {
  const now = new Date();
  return {
    language,
    t: tables[language],
    ago: (iso) => timeAgo(new Date(iso), now, language),
    date: (iso) => `${dateFormats[language].format(new Date(iso))} UTC`,
  };
}

/** The first of `en`/`ja` the browser's Accept-Language prefers; `en` otherwise. */
export function browserLanguage(req: Request): Language {
  return req.acceptsLanguages('en', 'ja') === 'ja' ? 'ja' : 'en';
}
