// Driving the OAuth pages without a browser: a cookie jar, the forms' hidden fields, PKCE pairs, and clients and
// passwords made directly in the database.
import { createHash, randomBytes } from 'node:crypto';
import { setPassword } from '../../src/modules/auth/passwords.ts';
import { createClient, type NewClient } from '../../src/modules/oauth/clients.ts';
import { User } from '../../src/modules/users/user.entity.ts';
import type { TestApp } from './app.ts';

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function makeClient(app: TestApp, input: Partial<NewClient> = {}): Promise<{ clientId: string; secret: string | undefined; rowId: number; redirectUri: string }> {
  const redirectUris = input.redirectUris ?? ['http://127.0.0.1:9/callback'];
  const { client, secret } = await createClient(app.em(), { name: 'Test App', confidential: false, ...input, redirectUris });
  return { clientId: client.clientId, secret, rowId: client.id, redirectUri: redirectUris[0]! };
}

export async function givePassword(app: TestApp, user: User, password = 'correct horse battery'): Promise<string> {
  const em = app.em();
  await setPassword(em, await em.findOneOrFail(User, { id: user.id }), password);
  return password;
}

const unescapeHtml = (text: string) => text.replace(/&#(\d+);/g, (_match, code: string) => String.fromCharCode(Number(code)));

export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescapeHtml(match[1]!)] = unescapeHtml(match[2]!);
  return fields;
}

export type Page = { status: number; headers: Headers; text: string; location: string | null };

/** A browser as far as the flow needs one: cookies, forms, redirects not followed. */
export class CookieBrowser {
  readonly baseUrl: string;
  readonly cookies = new Map<string, string>();
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  private async send(method: string, path: string, form?: Record<string, string>): Promise<Page> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.Cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (form) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    const url = path.startsWith('http') ? path : this.baseUrl + path;
    const response = await fetch(url, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /Expires=Thu, 01 Jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get('location') };
  }

  get(path: string) {
    return this.send('GET', path);
  }
  post(path: string, form: Record<string, string>) {
    return this.send('POST', path, form);
  }

  /** From the authorize URL through the sign-in page: the answer of the authorize request once signed in. */
  async signIn(authorizePath: string, login: string, password: string): Promise<Page> {
    const signInPage = await this.get(authorizePath);
    if (!signInPage.text.includes('action="/oauth/sign-in"')) return signInPage;
    const signedIn = await this.post('/oauth/sign-in', { ...hiddenFields(signInPage.text), login, password });
    if (signedIn.status !== 303) return signedIn;
    return this.get(signedIn.location!);
  }

  /** Submits the consent page's form with Allow or Deny. */
  async decide(consentPage: Page, decision: 'allow' | 'deny'): Promise<Page> {
    return this.post('/oauth/authorize', { ...hiddenFields(consentPage.text), decision });
  }
}

export function authorizePath(parameters: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams(parameters).toString()}`;
}

export async function tokenRequest(app: TestApp, form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as Record<string, any>, text };
}

/** A browser signed in through the sign-in page as `login` (a password given with givePassword). */
export async function signInBrowser(app: TestApp, login: string, password: string): Promise<CookieBrowser> {
  const browser = new CookieBrowser(app.baseUrl);
  const form = await browser.get('/oauth/sign-in?return_to=%2F');
  const back = await browser.post('/oauth/sign-in', { ...hiddenFields(form.text), login, password });
  if (back.status !== 303) throw new Error(`signing in as ${login} answered ${back.status}`);
  return browser;
}
