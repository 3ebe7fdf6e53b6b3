// The frame around every browser view: the language, the site header (who is signed in, sign out, activity,
// notifications), breadcrumbs, the link to the matching operation of the API reference, and the security headers.
// No inline script or style anywhere: the Content-Security-Policy forbids both, and the stylesheet is a file. A view
// that needs script (the edit view's live editor) names this site's script file in its frame: the page loads it, and
// its policy alone allows scripts of this site and connections back to it.
import type { Response } from 'express';
import type { Urls } from '../../http/urls.ts';
import { Html, html, type Renderable } from './html.ts';
import type { Locale } from './i18n.ts';

export const STYLESHEET_PATH = '/web/style.css';
/** The live editor's bundle (scripts/build-editor.ts), for the edit view. */
export const EDITOR_SCRIPT_PATH = '/web/editor.js';

// The views show user-written text and sanitized page HTML: the browser must not sniff another type, run any
// script, load anything from elsewhere, or frame the page.
export const htmlSecurityHeaders = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'Referrer-Policy': 'same-origin',
} as const;

/** The policy of a view that runs a script file of this site: that, and its connections (the live editor's WebSocket), back to this site only. */
const SCRIPTED_POLICY = `${htmlSecurityHeaders['Content-Security-Policy']}; script-src 'self'; connect-src 'self'`;

/** A whole view, with the Content-Security-Policy it is sent under. */
export class ViewHtml extends Html {
  readonly contentSecurityPolicy: string;
  constructor(text: string, contentSecurityPolicy: string) {
    super(text);
    this.contentSecurityPolicy = contentSecurityPolicy;
  }
}

export type Viewer = { username: string; name: string; csrfToken?: string | undefined };
export type Crumb = { label: string; href?: string | undefined };

export type PageFrame = {
  title: string;
  locale: Locale;
  urls: Urls;
  viewer?: Viewer | undefined;
  crumbs?: Crumb[];
  /** The operationId whose answer this view shows: linked to its section of the API reference (Redoc anchors). */
  operation?: string;
  /** A script file of this site the view runs (EDITOR_SCRIPT_PATH), loaded deferred; its policy allows it alone. */
  script?: typeof EDITOR_SCRIPT_PATH;
};

function header(frame: PageFrame): Html {
  const { t } = frame.locale;
  const viewer = frame.viewer;
  return html`<header class="site"><a class="skip" href="#content">${t.skipToContent}</a><strong><a href="/">Notes</a></strong>
<nav aria-label="${t.main}"><ul>${viewer ? html`<li><a href="/activity">${t.activity}</a></li><li><a href="/notifications">${t.notifications}</a></li>` : ''}<li><a href="${frame.urls.docs}">${t.apiReference}</a></li></ul></nav>
${viewer ? html`<div class="who"><span>${t.signedInAs} <a href="${frame.urls.user(viewer.username)}">${viewer.username}</a></span>${viewer.csrfToken ? html`<form method="post" action="/oauth/sign-out"><input type="hidden" name="csrf_token" value="${viewer.csrfToken}"><button type="submit">${t.signOut}</button></form>` : ''}</div>` : ''}</header>`;
}

function crumbs(frame: PageFrame): Renderable {
  if (!frame.crumbs || frame.crumbs.length === 0) return '';
  const last = frame.crumbs.length - 1;
  return html`<nav class="crumbs" aria-label="${frame.locale.t.breadcrumbs}"><ol>${frame.crumbs.map((crumb, index) =>
    html`<li>${index === last ? html`<span aria-current="page">${crumb.label}</span>` : crumb.href ? html`<a href="${crumb.href}">${crumb.label}</a>` : crumb.label}</li>`)}</ol></nav>`;
}

export function layout(frame: PageFrame, body: Renderable): ViewHtml {
  const reference = frame.operation ? html`<p class="meta"><a href="${frame.urls.docs}#operation/${frame.operation}">${frame.locale.t.apiReference}: ${frame.operation}</a></p>` : '';
  const script = frame.script ? html`<script src="${frame.script}" defer></script>` : '';
  const page = html`<!doctype html>
<html lang="${frame.locale.language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title}</title><link rel="stylesheet" href="${STYLESHEET_PATH}">${script}</head>
<body>${header(frame)}<main id="content">${crumbs(frame)}${body}${reference}</main></body></html>
`;
  return new ViewHtml(page.text, frame.script ? SCRIPTED_POLICY : htmlSecurityHeaders['Content-Security-Policy']);
}

export function sendView(res: Response, status: number, page: Html): void {
  const policy = page instanceof ViewHtml ? page.contentSecurityPolicy : htmlSecurityHeaders['Content-Security-Policy'];
  res.status(status).set({ ...htmlSecurityHeaders, 'Content-Security-Policy': policy, 'Cache-Control': 'private, no-store' }).type('text/html; charset=utf-8').send(page.text);
}
