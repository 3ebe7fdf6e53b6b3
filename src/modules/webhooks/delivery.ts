// One HTTP attempt: the message POSTed to the webhook's URL, signed as Standard Webhooks says, with a timeout, no
// redirects followed, and the address guard applied to the address actually connected to.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { addressProblem, guardedLookup, parseWebhookUrl } from './address-guard.ts';

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the secret's base64-decoded bytes after `whsec_`. */
export function sign(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`;
}

export type Attempt = { statusCode: number | null; error: string | null; durationMs: number; succeeded: boolean };

export type SendOptions = { timeoutMs: number; allowPrivate: boolean };

/** Sends the message once; never throws: a failure is an attempt with an error. */
export async function send(target: string, secret: string, messageId: string, body: string, options: SendOptions): Promise<Attempt> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null): Attempt => ({
    statusCode,
    error,
    durationMs: Math.round(performance.now() - started),
    succeeded: error === null && statusCode !== null && statusCode >= 200 && statusCode < 300,
  });
  let url: URL;
  try {
    url = parseWebhookUrl(target);
  } catch (error) {
    return done(null, (error as Error).message);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // an IP in the URL is never looked up, so guardedLookup does not see it: checked here
  const literalProblem = !options.allowPrivate && net.isIP(host) ? addressProblem(host) : undefined;
  if (literalProblem) return done(null, `refused: ${literalProblem}`);
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'notes-webhooks/1',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(secret, messageId, timestamp, body),
  };
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(statusCode, error));
    };
    const request = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers, lookup: guardedLookup(options.allowPrivate) as never, agent: false }, (response) => {
      const status = response.statusCode ?? null;
      // the answer's body is not kept: read (at most what arrives before the end or the timeout) and dropped
      response.resume();
      response.on('end', () => finish(status, status !== null && status >= 300 && status < 400 ? `redirect to ${response.headers.location ?? '?'} not followed` : status !== null && (status < 200 || status >= 300) ? `answered ${status}` : null));
      response.on('error', (error) => finish(status, error.message));
    });
    const timer = setTimeout(() => {
      finish(null, `no answer within ${options.timeoutMs} ms`);
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error) => finish(null, error.message));
    request.end(body);
  });
}
