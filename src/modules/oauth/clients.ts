// Registered apps (OAuth clients): created by an administrator (admin command line, may be first-party) or by a
// user for their own apps (API, never first-party). The secret of a confidential app is returned once.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TokenScope } from '../auth/token.entity.ts';
import type { User } from '../users/user.entity.ts';
import { OAuthClient, type AppWrites } from './oauth.entity.ts';

export type NewClient = {
  name: string;
  redirectUris: string[];
  confidential: boolean;
  firstParty?: boolean;
  owner?: User | null;
  /** Registered by anyone through RFC 7591 (registration.ts): public, no owner, deleted when no user authorizes it. */
  registeredDynamically?: boolean;
  /** The scope the app is held to (`read`); null or absent: both. */
  scope?: TokenScope | null;
  /** How the app's tokens write (absent: `direct`). */
  writes?: AppWrites;
};

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * What is wrong with a redirect URI, or undefined. Absolute, no fragment (RFC 6749 section 3.1.2); https, or http on
 * a loopback host (for development and native apps), or a private scheme of a native app (`myapp://callback`).
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > 2000) return 'a redirect URI has at most 2000 characters';
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return `"${uri}" is not an absolute URI`;
  }
  if (parsed.hash || uri.includes('#')) return 'a redirect URI has no fragment';
  if (['javascript:', 'data:', 'file:', 'vbscript:'].includes(parsed.protocol)) return `the ${parsed.protocol} scheme cannot be a redirect URI`;
  return undefined;
}

/**
 * 127.0.0.0/8, ::1 or `localhost`: a redirect URI on this host reaches a native app listening on the user's own machine
 * (RFC 8252 section 7.3), whatever its port.
 */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The stricter rule for apps anyone may register (RFC 7591, registration.ts): what `redirectUriProblem` refuses, and
 * `http:` anywhere but on a loopback host (any port), where a code would cross the network in the clear.
 */
export function registeredRedirectUriProblem(uri: string): string | undefined {
  const problem = redirectUriProblem(uri);
  if (problem) return problem;
  const parsed = new URL(uri);
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) return `"${uri}" uses http on a host that is not a loopback one (127.0.0.1, [::1], localhost): use https`;
  return undefined;
}

export async function createClient(em: EntityManager, input: NewClient): Promise<{ client: OAuthClient; secret: string | undefined }> {
  const secret = input.confidential ? `ns_${randomBytes(32).toString('base64url')}` : undefined;
  const client = em.create(OAuthClient, {
    clientId: randomBytes(16).toString('hex'),
    secretHash: secret ? sha256(secret) : null,
    name: input.name,
    redirectUris: input.redirectUris,
    confidential: input.confidential,
    firstParty: input.firstParty ?? false,
    owner: input.owner ?? null,
    registeredDynamically: input.registeredDynamically ?? false,
    authorizedAt: null,
    scope: input.scope ?? null,
    writes: input.writes ?? 'direct',
  });
  await em.flush();
  return { client, secret };
}

export async function findClient(em: EntityManager, clientId: string): Promise<OAuthClient | null> {
  if (clientId.length > 64) return null;
  return em.findOne(OAuthClient, { clientId });
}

export function secretMatches(client: OAuthClient, secret: string): boolean {
  if (!client.secretHash) return false;
  const given = Buffer.from(sha256(secret));
  return timingSafeEqual(given, Buffer.from(client.secretHash));
}
