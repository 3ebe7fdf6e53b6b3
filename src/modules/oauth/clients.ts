// Registered apps (OAuth clients): created by an administrator (admin command line, may be first-party) or by a
// user for their own apps (API, never first-party). The secret of a confidential app is returned once.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { User } from '../users/user.entity.ts';
import { OAuthClient } from './oauth.entity.ts';

export type NewClient = { name: string; redirectUris: string[]; confidential: boolean; firstParty?: boolean; owner?: User | null };

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
