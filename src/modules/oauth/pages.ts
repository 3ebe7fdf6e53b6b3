// The server-rendered pages of the OAuth flow: sign-in, consent, and errors shown before the app's redirect URI is
// known, written with the browser views' template helper (web/html.ts), which escapes every value, in the words of
// page-text.ts (English or Japanese; the caller picks the language). Small, no script, no inline style: the
// Content-Security-Policy forbids both. `form-action` names the app's redirect URI origin too, because a browser
// applies it to the redirects that follow a form's submission.
import type { Response } from 'express';
import { html, type Html } from '../web/html.ts';
import { htmlSecurityHeaders } from '../web/layout.ts';
import { PRODUCT_NAME, type PageText } from './page-text.ts';

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

/** A whole page in `text`'s language, under the product's name (in the title too, so a tab says whose page it is). */
export function sendPage(res: Response, status: number, text: PageText, title: string, body: Html, redirectUri?: string): void {
  const csp = htmlSecurityHeaders['Content-Security-Policy'].replace("form-action 'self'", `form-action ${formActionSources(redirectUri)}`);
  res
    .status(status)
    .set({ ...htmlSecurityHeaders, 'Content-Security-Policy': csp, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'Content-Language': text.language })
    .type('text/html; charset=utf-8')
    .send(
      html`<!doctype html><html lang="${text.language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${PRODUCT_NAME}</title><link rel="stylesheet" href="/oauth/style.css"></head><body><main><p class="brand">${PRODUCT_NAME}</p>${body}</main></body></html>`.text,
    );
}

const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

export function signInPage(text: PageText, options: { csrfToken: string; returnTo: string; login?: string; message?: string; appName?: string }): Html {
  return html`<h1>${text.signIn}</h1><p class="lead">${text.signInLead(options.appName)}</p>${
    options.message ? html`<p class="error" role="alert">${options.message}</p>` : ''}<form method="post" action="/oauth/sign-in">${
    hidden('csrf_token', options.csrfToken)}${hidden('return_to', options.returnTo)}
<p><label for="login">${text.userName}</label><br><input id="login" name="login" autocomplete="username" required value="${options.login ?? ''}"></p>
<p><label for="password">${text.password}</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">${text.signIn}</button></p></form>`;
}

export function consentPage(text: PageText, options: { csrfToken: string; appName: string; username: string; scope: 'read' | 'write'; writes?: 'direct' | 'proposals'; parameters: Record<string, string> }): Html {
  const writes = options.writes === 'proposals' ? text.mayPropose : text.mayWriteDirectly;
  const what = options.scope === 'write' ? [text.mayRead, ...writes] : [text.mayRead];
  const fields = Object.entries(options.parameters).map(([name, value]) => hidden(name, value));
  return html`<h1>${text.authorizeApp(options.appName)}</h1>
<p>${text.asksToActAs(options.appName, options.username)}</p><ul>${what.map((line) => html`<li>${line}</li>`)}</ul>
<form method="post" action="/oauth/authorize">${hidden('csrf_token', options.csrfToken)}${fields}
<p><button type="submit" name="decision" value="allow">${text.allow}</button> <button type="submit" name="decision" value="deny">${text.deny}</button></p></form>`;
}

export function errorPage(text: PageText, message: string): Html {
  return html`<h1>${text.linkBroken}</h1><p>${message}</p><p>${text.backToApp}</p>`;
}

/** A request these pages refuse before reading it (a method they lack, a NUL, a body past the limit). */
export function refusalPage(text: PageText, title: string, message: string): Html {
  return html`<h1>${title}</h1><p>${message}</p><p>${text.backToAppOrPage}</p>`;
}

/** A page with a heading and, when given, one line under it. */
export function messagePage(heading: string, line?: string): Html {
  return html`<h1>${heading}</h1>${line === undefined ? '' : html`<p>${line}</p>`}`;
}

export const stylesheet = `body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:24rem;margin:4rem auto;background:#fff;padding:1.5rem 2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}button{padding:.5rem 1rem;font-size:1rem}
.error{color:#a00}
.brand{margin:0 0 .75rem;font-weight:700;font-size:1.05rem;letter-spacing:.02em;color:#1d2330}
h1{margin:0 0 .5rem;font-size:1.5rem}.lead{margin-top:0;color:#4a5263}`;
