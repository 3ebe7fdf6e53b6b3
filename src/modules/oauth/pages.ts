// The server-rendered pages of the OAuth flow: sign-in, consent, and errors shown before the app's redirect URI is
// known, written with the browser views' template helper (web/html.ts), which escapes every value. Small, no
// script, no inline style: the Content-Security-Policy forbids both. `form-action` names the app's redirect URI
// origin too, because a browser applies it to the redirects that follow a form's submission.
import type { Response } from 'express';
import { html, type Html } from '../web/html.ts';
import { htmlSecurityHeaders } from '../web/layout.ts';

function formActionSources(redirectUri: string | undefined): string {
  if (!redirectUri) return "'self'";
  try {
    const url = new URL(redirectUri);
    const origin = url.origin !== 'null' ? url.origin : `${url.protocol}`;
    return `'self' ${origin}`;
  } catch {
    return "'self'";
  }
}

export function sendPage(res: Response, status: number, title: string, body: Html, redirectUri?: string): void {
  const csp = htmlSecurityHeaders['Content-Security-Policy'].replace("form-action 'self'", `form-action ${formActionSources(redirectUri)}`);
  res
    .status(status)
    .set({ ...htmlSecurityHeaders, 'Content-Security-Policy': csp, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' })
    .type('text/html; charset=utf-8')
    .send(
      html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="stylesheet" href="/oauth/style.css"></head><body><main>${body}</main></body></html>`.text,
    );
}

const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

export function signInPage(options: { csrfToken: string; returnTo: string; login?: string; message?: string; appName?: string }): Html {
  return html`<h1>Sign in</h1>${options.appName ? html`<p>Sign in to continue to <strong>${options.appName}</strong>.</p>` : ''}${
    options.message ? html`<p class="error" role="alert">${options.message}</p>` : ''}<form method="post" action="/oauth/sign-in">${
    hidden('csrf_token', options.csrfToken)}${hidden('return_to', options.returnTo)}
<p><label for="login">User name</label><br><input id="login" name="login" autocomplete="username" required value="${options.login ?? ''}"></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p></form>`;
}

export function consentPage(options: { csrfToken: string; appName: string; username: string; scope: 'read' | 'write'; writes?: 'direct' | 'proposals'; parameters: Record<string, string> }): Html {
  const writes = options.writes === 'proposals'
    ? html`<li>propose changes to pages: they go to a copy of the note and a request that people review and merge; it never changes a note itself</li><li>comment and open issues as you</li>`
    : html`<li>create and change notes, pages, issues and comments as you</li>`;
  const what = options.scope === 'write'
    ? html`<li>read your notes, pages, issues and comments</li>${writes}`
    : html`<li>read your notes, pages, issues and comments</li>`;
  const fields = Object.entries(options.parameters).map(([name, value]) => hidden(name, value));
  return html`<h1>Authorize ${options.appName}</h1>
<p><strong>${options.appName}</strong> asks to act as <strong>${options.username}</strong> and:</p><ul>${what}</ul>
<form method="post" action="/oauth/authorize">${hidden('csrf_token', options.csrfToken)}${fields}
<p><button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny">Deny</button></p></form>`;
}

export function errorPage(message: string): Html {
  return html`<h1>This sign-in link does not work</h1><p>${message}</p><p>Go back to the app and start again.</p>`;
}

/** A request these pages refuse before reading it (a method they lack, a NUL, a body past the limit). */
export function refusalPage(title: string, message: string): Html {
  return html`<h1>${title}</h1><p>${message}</p><p>Go back to the app or the page you came from and start again.</p>`;
}

/** A page with a heading and, when given, one line under it. */
export function messagePage(heading: string, line?: string): Html {
  return html`<h1>${heading}</h1>${line === undefined ? '' : html`<p>${line}</p>`}`;
}

export const stylesheet = `body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:24rem;margin:4rem auto;background:#fff;padding:1.5rem 2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}button{padding:.5rem 1rem;font-size:1rem}
.error{color:#a00}`;
