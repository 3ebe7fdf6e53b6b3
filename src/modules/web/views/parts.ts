// Pieces several views share: a time with its time_ago, a user, a list pager, a log entry or notification line.
import type { Comment, Log, Notification, User, Via } from '../../../../generated/client/types.gen.ts';
import { sanitizeHtml } from '../../notes/description.ts';
import { html, trusted, type Html, type Renderable } from '../html.ts';
import type { Locale } from '../i18n.ts';
import type { Response } from 'express';
import { viewerOf } from '../web.context.ts';

export function when(locale: Locale, iso: string, ago?: string): Html {
  return html`<time datetime="${iso}" title="${locale.date(iso)}">${ago ?? locale.ago(iso)}</time>`;
}

export function userLink(user: Pick<User, 'html_url' | 'username' | 'name'> | null | undefined, locale: Locale): Renderable {
  if (!user) return locale.t.nobody;
  return html`<a href="${user.html_url}">${user.name}</a> <span class="muted">@${user.username}</span>`;
}

/** Previous/next links for a list shown `perPage` at a time, with `parameter` naming the page in the view's query. */
export function pager(locale: Locale, base: string, page: number, perPage: number, total: number | undefined, parameter = 'page'): Renderable {
  if (total === undefined || total <= perPage) return '';
  const last = Math.max(1, Math.ceil(total / perPage));
  const link = (target: number) => `${base}${base.includes('?') ? '&' : '?'}${parameter}=${target}`;
  return html`<nav class="pager" aria-label="${locale.t.page}">${page > 1 ? html`<a href="${link(page - 1)}" rel="prev">${locale.t.previous}</a>` : ''}<span>${locale.t.page} ${page} / ${last}</span>${page < last ? html`<a href="${link(page + 1)}" rel="next">${locale.t.next}</a>` : ''}</nav>`;
}

type Linked = { html_url: string } | null | undefined;
const target = (item: { request?: Linked; issue?: Linked; page?: Linked; note?: Linked }) => item.request ?? item.issue ?? item.page ?? item.note ?? undefined;

export function logLine(locale: Locale, log: Log): Html {
  const link = target(log as never);
  return html`<li>${when(locale, log.created_at, log.time_ago)} · <a href="${log.user.html_url}">${log.user.username}</a>${viaBadge(locale, log.via)} <span class="badge">${locale.t.logEvent(log.type, log.action)}</span> ${link ? html`<a href="${link.html_url}">${log.title}</a>` : log.title}</li>`;
}

export function notificationLine(locale: Locale, notification: Notification): Html {
  const link = target(notification as never);
  return html`<li>${when(locale, notification.created_at, notification.time_ago)} · ${notification.is_read ? '' : html`<span class="badge ok">${locale.t.unread}</span> `}<a href="${notification.from_user.html_url}">${notification.from_user.username}</a> <span class="badge">${locale.t.notificationEvent(notification.event)}</span> ${link ? html`<a href="${link.html_url}">${notification.title}</a>` : notification.title}</li>`;
}

export function list(locale: Locale, items: Html[], className = ''): Renderable {
  return items.length === 0 ? html`<p class="muted">${locale.t.nothing}</p>` : html`<ul class="${className}">${items}</ul>`;
}

/**
 * Safe markup (the sanitizer's output, the API's rendered HTML, a rendered diff) with every <pre> a stop of the
 * keyboard: a line wider than the screen scrolls inside its block (web.css), and a reader without a mouse scrolls it
 * with the arrow keys once Tab has reached it (axe's scrollable-region-focusable). The view adds it when it renders;
 * the HTML the API stores and answers never carries it. Safe markup has `<pre` only where a tag starts: the sanitizer
 * escapes `<` in text and in attribute values.
 */
export function keyboardScrollable(markup: string): string {
  return markup.replace(/<pre(?=[\s>])/g, '<pre tabindex="0"');
}

/**
 * Stored HTML (page content, comments, conflict regions) as shown: through the sanitizer every rendered field goes
 * through, then its headings one level down (h1 -> h2, ..., h6 stays), under the view's own <h1>, and its <pre>
 * blocks reached by keyboard.
 */
export function stored(markup: string): Html {
  return trusted(keyboardScrollable(sanitizeHtml(markup).replace(/<(\/?)h([1-6])>/g, (_tag, slash: string, level: string) => `<${slash}h${Math.min(6, Number(level) + 1)}>`)));
}

/** " via <app>" after who made something through an app (Via); nothing otherwise. */
export function viaBadge(locale: Locale, via: Via | undefined): Renderable {
  return via ? html` <span class="badge">${locale.t.via(via.name)}</span>` : '';
}

/** A comment's form (a signed-in browser's; none for a bearer token's reading): `@name` mentions and notifies. */
/** The comments on a page, an issue or a request, oldest first, and the form to add one (`action`: where it posts). */
export function commentSection(view: { res: Response; locale: Locale }, comments: readonly Comment[], action: string): Html {
  const { t } = view.locale;
  return html`<section class="card"><h2>${t.comments}</h2>${comments.length === 0 ? html`<p class="muted">${t.nothing}</p>` : comments.map((comment) =>
    html`<div class="comment" id="comment-${comment.id}"><p class="meta">${userLink(comment.user, view.locale)} · ${when(view.locale, comment.created_at)}${viaBadge(view.locale, comment.via)}</p><div class="content">${stored(comment.comment)}</div></div>`)}
${commentForm(view, action)}</section>`;
}

export function commentForm(view: { res: Response; locale: Locale }, action: string): Renderable {
  const csrf = viewerOf(view.res)?.csrfToken;
  if (csrf === undefined) return '';
  const { t } = view.locale;
  const id = 'comment-text';
  return html`<form method="post" action="${action}" class="comment-form"><input type="hidden" name="csrf_token" value="${csrf}">
<label for="${id}">${t.addComment}</label><textarea id="${id}" name="comment" rows="3" required></textarea>
<p class="muted">${t.mentionHint}</p><button type="submit">${t.postComment}</button></form>`;
}

/** Whether the views offer writing (the forms of page-forms.ts): to a member of the team, signed in through the browser. */
export function writes(view: { res: Response }, team: { role?: string | null | undefined }): boolean {
  return viewerOf(view.res)?.csrfToken !== undefined && (team.role === 'member' || team.role === 'manager');
}
