// The words of the OAuth pages (pages.ts) in English and Japanese, chosen by the browser views' rule (web/i18n.ts):
// the signed-in user's `lang` setting where the route knows a session (consent, "signed in", signing out), and the
// browser's Accept-Language otherwise (the sign-in page and its failures, a link that does not work, a refusal).
// What goes back to an app's redirect URI (RFC 6749 `error_description`) is for the app's developer, not a page:
// it stays English, in authorize.routes.ts.
import type { Request } from 'express';
import { languageOf, type Language } from '../notifications/time-ago.ts';
import { html, type Html } from '../web/html.ts';
import { browserLanguage } from '../web/i18n.ts';

/** The product's name, as the browser views' header shows it: a name, the same in every language. */
export const PRODUCT_NAME = 'Notes';

/** Why an authorization link cannot be followed (a page, not a redirect: the URI to report it to is not known). */
export type LinkProblem =
  | { problem: 'repeatedParameter' | 'longParameter'; parameter: string }
  | { problem: 'noApp' | 'unknownApp' | 'unregisteredRedirectUri' | 'noRedirectUri' };

/** What a refused request (input-guard.ts) says: its status, and the English title and detail of the HTTP error. */
type Refused = { status: number; title: string; message: string };

const en = {
  language: 'en' as Language,
  signIn: 'Sign in',
  /** Under the sign-in heading: the app the flow returns to, when there is one. */
  signInLead: (app: string | undefined): Html =>
    app ? html`Sign in to continue to <strong>${app}</strong>.` : html`Use your ${PRODUCT_NAME} account to continue.`,
  userName: 'User name',
  password: 'Password',
  signInExpired: 'The form had expired. Please sign in again.',
  signInWrong: 'The user name or the password is wrong.',
  signInTooOften: (seconds: number) => `Too many sign-in attempts. Try again in ${seconds} seconds.`,
  authorizeApp: (app: string) => `Authorize ${app}`,
  asksToActAs: (app: string, username: string): Html => html`<strong>${app}</strong> asks to act as <strong>${username}</strong> and:`,
  /** What each scope lets the app do: `read`, then what `write` adds for an app that writes directly or proposes. */
  mayRead: 'read your notes, pages, issues and comments',
  mayWriteDirectly: ['create and change notes, pages, issues and comments as you'],
  mayPropose: [
    'propose changes to pages: they go to a copy of the note and a request that people review and merge; it never changes a note itself',
    'comment and open issues as you',
  ],
  allow: 'Allow',
  deny: 'Deny',
  cannotAuthorize: 'Cannot authorize',
  linkBroken: 'This sign-in link does not work',
  backToApp: 'Go back to the app and start again.',
  linkProblem: (link: LinkProblem): string => {
    switch (link.problem) {
      case 'repeatedParameter': return `the parameter ${link.parameter} was given more than once`;
      case 'longParameter': return `the parameter ${link.parameter} is too long`;
      case 'noApp': return 'the link names no app (client_id is missing)';
      case 'unknownApp': return 'the app this link names is not registered here';
      case 'unregisteredRedirectUri': return 'the redirect URI of this link is not registered for the app';
      case 'noRedirectUri': return 'the link names no redirect URI (redirect_uri is missing)';
    }
  },
  formExpired: 'the form has expired or did not come from this site',
  signedIn: 'Signed in',
  signedInAs: (username: string) => `You are signed in as ${username}.`,
  nowSignedIn: 'You are signed in.',
  signOut: 'Sign out',
  signedOut: 'Signed out',
  /** English keeps the error's own words: the detail names the parameter or method at fault. */
  refusal: (error: Refused) => ({ title: error.title, message: error.message }),
  backToAppOrPage: 'Go back to the app or the page you came from and start again.',
};
export type PageText = typeof en;

const refusalsJa: Record<number, { title: string; message: string }> = {
  400: { title: '不正なリクエスト', message: 'リクエストの内容を受け付けられませんでした。' },
  403: { title: '禁止されています', message: 'このリクエストは許可されていません。' },
  404: { title: '見つかりません', message: 'ここには何もありません。' },
  405: { title: '使えないメソッド', message: 'このページはこのメソッドのリクエストを受け付けません。' },
  413: { title: 'リクエストが大きすぎます', message: 'リクエストが大きすぎるか、項目が多すぎます。' },
  415: { title: '対応していない形式', message: 'このリクエストの形式には対応していません。' },
  429: { title: 'リクエストが多すぎます', message: 'しばらく待ってから、もう一度お試しください。' },
  500: { title: 'サーバーのエラー', message: 'サーバーが応答できませんでした。ログではリクエスト ID で特定できます。' },
  503: { title: '一時的に利用できません', message: 'しばらく待ってから、もう一度お試しください。' },
};

const ja: PageText = {
  language: 'ja',
  signIn: 'サインイン',
  signInLead: (app) =>
    app ? html`<strong>${app}</strong> の利用を続けるには、サインインしてください。` : html`${PRODUCT_NAME} のアカウントでサインインしてください。`,
  userName: 'ユーザー名',
  password: 'パスワード',
  signInExpired: 'フォームの有効期限が切れました。もう一度サインインしてください。',
  signInWrong: 'ユーザー名またはパスワードが違います。',
  signInTooOften: (seconds) => `サインインの試行回数が多すぎます。${seconds} 秒後にもう一度お試しください。`,
  authorizeApp: (app) => `${app} を承認`,
  asksToActAs: (app, username) => html`<strong>${app}</strong> が <strong>${username}</strong> として次のことを行う許可を求めています:`,
  mayRead: 'あなたのノート、ページ、課題、コメントを読む',
  mayWriteDirectly: ['あなたとしてノート、ページ、課題、コメントを作成・変更する'],
  mayPropose: [
    'ページへの変更を提案する: 変更はノートのコピーと、人がレビューしてマージするリクエストになり、ノートそのものを変更することはありません',
    'あなたとしてコメントし、課題を作成する',
  ],
  allow: '許可',
  deny: '拒否',
  cannotAuthorize: '承認できません',
  linkBroken: 'このサインインのリンクは使えません',
  backToApp: 'アプリに戻って、最初からやり直してください。',
  linkProblem: (link) => {
    switch (link.problem) {
      case 'repeatedParameter': return `パラメーター ${link.parameter} が複数回指定されています`;
      case 'longParameter': return `パラメーター ${link.parameter} が長すぎます`;
      case 'noApp': return 'リンクにアプリが指定されていません (client_id がありません)';
      case 'unknownApp': return 'このリンクのアプリはここに登録されていません';
      case 'unregisteredRedirectUri': return 'このリンクのリダイレクト URI はアプリに登録されていません';
      case 'noRedirectUri': return 'リンクにリダイレクト URI が指定されていません (redirect_uri がありません)';
    }
  },
  formExpired: 'フォームの有効期限が切れたか、このサイトから送信されたものではありません',
  signedIn: 'サインインしました',
  signedInAs: (username) => `${username} としてサインインしています。`,
  nowSignedIn: 'サインインが完了しました。',
  signOut: 'サインアウト',
  signedOut: 'サインアウトしました',
  refusal: (error) => refusalsJa[error.status] ?? { title: 'エラー', message: 'このリクエストには応答できません。' },
  backToAppOrPage: 'アプリか元のページに戻って、最初からやり直してください。',
};

const tables: Record<Language, PageText> = { en, ja };

/** The words for this reader: the signed-in `user`'s `lang` when there is one, the browser's Accept-Language otherwise. */
export function pageText(req: Request, user?: { lang: string }): PageText {
  return tables[user ? languageOf(user) : browserLanguage(req)];
}
