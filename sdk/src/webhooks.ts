// verifyWebhook: the service signs each webhook delivery as Standard Webhooks do (standardwebhooks.com):
// `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of
// "id.timestamp.body">`, several separated by spaces while a secret rotates), keyed with the bytes of the secret
// after `whsec_` (base64). Verify the raw body exactly as received, before parsing it: any re-serialised JSON differs.
// Web Crypto only, so it runs in Node, Deno, Bun, workers and browsers alike.
import type { ChangeEvent } from '../../generated/client/types.gen.ts';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found[0] : found;
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Compares without stopping at the first difference, so the time taken says nothing about the expected value. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * The delivered event, once its signature is verified with the webhook's `secret` (`whsec_...`, shown when the
 * webhook was made); throws WebhookVerificationError when a header is missing, the timestamp is more than
 * `toleranceSeconds` (default 300) from now (a replay), or no signature matches.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: Date } = {},
): Promise<ChangeEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const seconds = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError('webhook-timestamp is too far from now');
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = base64ToBytes(secret.replace(/^whsec_/, ''));
  } catch {
    throw new WebhookVerificationError('the secret is not whsec_ followed by base64');
  }
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)));
  const expected = bytesToBase64(mac);
  const matches = signatures.split(' ').some((signature) => {
    const [version, value] = signature.split(',', 2);
    return version === 'v1' && value !== undefined && sameText(value, expected);
  });
  if (!matches) throw new WebhookVerificationError('no signature matches');
  return JSON.parse(body) as ChangeEvent;
}
