// OAuth for command-line apps (RFC 8252, "OAuth 2.0 for Native Apps"): the authorization code grant with PKCE
// (S256) through a loopback redirect. The app listens on 127.0.0.1 for the one redirect, the user signs in and
// consents in their browser, and the code comes back to the app, which exchanges it for tokens. No secret is kept
// in the app (a public client). Then `refreshingToken` gives createClient a token that is refreshed before it expires.
// Node only (it listens with node:http).
import { createServer } from 'node:http';

export type OAuthTokens = {
  access_token: string;
  token_type: string;
  /** Seconds the access token lives, from when it was issued. */
  expires_in?: number;
  refresh_token?: string;
  scope?: string;
  /** When the access token expires (ms since the epoch), worked out when it was received. */
  expires_at?: number;
};

export type LoopbackOptions = {
  baseUrl: string;
  /** The app's client id (registered with `POST /oauth/register`, or by an administrator). */
  clientId: string;
  /**
   * The redirect URI registered for the app, on the loopback address: `http://127.0.0.1:<port>/<path>`. The app
   * listens there for the redirect. The service matches the registered URI exactly, port included, so register one
   * with a fixed port.
   */
  redirectUri: string;
  /** `read`, or `read write` (the default). */
  scope?: string;
  /** Opens the authorization page for the user (a browser); by default the URL is printed to standard error. */
  openBrowser?: (url: string) => void | Promise<void>;
  /** How long to wait for the user, in ms (default 5 minutes). */
  timeoutMs?: number;
  signal?: AbortSignal;
};

function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A PKCE verifier (43 characters of 32 random bytes) and its S256 challenge. */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64Url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  return { verifier, challenge: base64Url(digest) };
}

/** Runs the authorization: listens on the redirect URI, sends the user to consent, and exchanges the code. */
export async function authorizeWithLoopback(options: LoopbackOptions): Promise<OAuthTokens> {
  const redirect = new URL(options.redirectUri);
  if (redirect.protocol !== 'http:' || !['127.0.0.1', '[::1]', 'localhost'].includes(redirect.hostname) || redirect.port === '') {
    throw new Error('redirectUri must be http://127.0.0.1:<port>/... (a loopback address with the registered port)');
  }
  const { verifier, challenge } = await pkce();
  const state = base64Url(crypto.getRandomValues(new Uint8Array(16)));
  const authorize = new URL(`${options.baseUrl.replace(/\/+$/, '')}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code', client_id: options.clientId, redirect_uri: options.redirectUri, scope: options.scope ?? 'read write',
    state, code_challenge: challenge, code_challenge_method: 'S256',
  })) authorize.searchParams.set(name, value);

  const code = await new Promise<string>((resolve, reject) => {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', options.redirectUri);
      if (url.pathname !== redirect.pathname) {
        res.writeHead(404).end();
        return;
      }
      const error = url.searchParams.get('error');
      const ok = error === null && url.searchParams.get('state') === state && url.searchParams.get('code');
      res.writeHead(ok ? 200 : 400, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(ok ? '<!doctype html><title>Signed in</title><p>Signed in. You can close this window.</p>' : '<!doctype html><title>Not signed in</title><p>The authorization did not complete. You can close this window.</p>');
      finish(ok ? undefined : new Error(error ? `authorization refused: ${error}` : 'the redirect did not carry this request\'s state and a code'), url.searchParams.get('code') ?? '');
    });
    const timer = setTimeout(() => finish(new Error('no authorization within the time allowed')), options.timeoutMs ?? 5 * 60_000);
    const onAbort = () => finish(new Error('aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    function finish(error: Error | undefined, value = ''): void {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      server.close();
      server.closeAllConnections();
      if (error) reject(error);
      else resolve(value);
    }
    server.on('error', (error) => finish(error));
    server.listen(Number(redirect.port), redirect.hostname.replace(/^\[|\]$/g, ''), () => {
      void Promise.resolve(options.openBrowser ? options.openBrowser(authorize.toString()) : process.stderr.write(`Open this address to sign in:\n${authorize}\n`)).catch((error: Error) => finish(error));
    });
  });

  return tokenRequest(options.baseUrl, {
    grant_type: 'authorization_code', code, redirect_uri: options.redirectUri, client_id: options.clientId, code_verifier: verifier,
  });
}

/** POST /oauth/token with a form; the tokens, or an Error with the RFC 6749 error and its description. */
export async function tokenRequest(baseUrl: string, form: Record<string, string>): Promise<OAuthTokens> {
  const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams(form),
  });
  const body = await response.json().catch(() => ({})) as OAuthTokens & { error?: string; error_description?: string };
  if (!response.ok || !body.access_token) throw new Error(`token request failed: ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`.trim());
  return { ...body, ...(body.expires_in ? { expires_at: Date.now() + body.expires_in * 1000 } : {}) };
}

/**
 * A token source for createClient that refreshes the access token with the refresh token a minute before it
 * expires (one refresh at a time); `onRefresh` receives the new tokens to store.
 */
export function refreshingToken(
  tokens: OAuthTokens,
  options: { baseUrl: string; clientId: string; onRefresh?: (tokens: OAuthTokens) => void | Promise<void> },
): () => Promise<string> {
  let current = tokens;
  let refreshing: Promise<OAuthTokens> | undefined;
  return async () => {
    const expiring = current.expires_at !== undefined && current.expires_at - Date.now() < 60_000;
    if (!expiring || !current.refresh_token) return current.access_token;
    refreshing ??= tokenRequest(options.baseUrl, { grant_type: 'refresh_token', refresh_token: current.refresh_token, client_id: options.clientId })
      .then(async (fresh) => {
        current = { ...fresh, refresh_token: fresh.refresh_token ?? current.refresh_token };
        await options.onRefresh?.(current);
        return current;
      })
      .finally(() => (refreshing = undefined));
    return (await refreshing).access_token;
  };
}
