// A user's own apps, authorizations and tokens, for the /api/v1/me/{apps,authorizations,tokens} operations. Every
// query is bounded to the caller; lists are one count and one page (plus one batch load of the apps they embed).
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, notFound, unprocessable } from '../errors.ts';
import type { Pagination } from '../../http/pagination.ts';
import { Token } from '../auth/token.entity.ts';
import type { User } from '../users/user.entity.ts';
import { createClient, redirectUriProblem } from './clients.ts';
import { OAuthClient, OAuthGrant, type AppWrites } from './oauth.entity.ts';
import { revokeAppForUser, revokeClient, revokeTokenById } from './revocation.ts';

export const APPS_PER_USER = 50;

export async function findOwnApps(em: EntityManager, userId: number, page: Pagination) {
  const [apps, total] = await em.findAndCount(OAuthClient, { owner: userId }, { orderBy: { id: 'asc' }, limit: page.perPage, offset: page.offset });
  return { apps, total };
}

export async function createOwnApp(em: EntityManager, owner: User, input: { name: string; redirect_uris: string[]; confidential?: boolean | undefined; writes?: AppWrites | undefined }) {
  const errors = input.redirect_uris.flatMap((uri, index) => {
    const problem = redirectUriProblem(uri);
    return problem ? [{ pointer: `/app/redirect_uris/${index}`, detail: problem }] : [];
  });
  if (errors.length > 0) throw unprocessable('invalid_redirect_uri', errors[0]!.detail, errors);
  if ((await em.count(OAuthClient, { owner: owner.id })) >= APPS_PER_USER) {
    throw conflict('already_exists', `a user may register at most ${APPS_PER_USER} apps; delete one first`);
  }
  return createClient(em, { name: input.name.trim() || input.name, redirectUris: [...new Set(input.redirect_uris)], confidential: input.confidential ?? true, owner, writes: input.writes ?? 'direct' });
}

export async function deleteOwnApp(em: EntityManager, userId: number, clientId: string): Promise<void> {
  const app = await em.findOne(OAuthClient, { clientId, owner: userId });
  if (!app) throw notFound('app');
  await revokeClient(em, app.id);
}

export async function findAuthorizations(em: EntityManager, userId: number, page: Pagination) {
  const [grants, total] = await em.findAndCount(OAuthGrant, { user: userId }, { populate: ['client'], orderBy: { updatedAt: 'desc', id: 'desc' }, limit: page.perPage, offset: page.offset });
  return { grants, total };
}

export async function revokeAuthorization(em: EntityManager, userId: number, clientId: string): Promise<void> {
  const app = await em.findOne(OAuthClient, { clientId });
  const held = app && ((await em.count(OAuthGrant, { user: userId, client: app.id })) > 0 || (await em.count(Token, { user: userId, clientId: app.id })) > 0);
  if (!app || !held) throw notFound('authorization');
  await revokeAppForUser(em, userId, app.id);
}

export async function findTokens(em: EntityManager, userId: number, page: Pagination) {
  const where = { user: userId, $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date() } }] };
  const [tokens, total] = await em.findAndCount(Token, where, { orderBy: { id: 'desc' }, limit: page.perPage, offset: page.offset });
  const clientIds = [...new Set(tokens.flatMap((token) => (token.clientId === null || token.clientId === undefined ? [] : [token.clientId])))];
  const apps = clientIds.length > 0 ? await em.find(OAuthClient, { id: { $in: clientIds } }) : [];
  return { tokens, total, apps: new Map(apps.map((app) => [app.id, app])) };
}

export async function revokeOwnToken(em: EntityManager, userId: number, tokenId: number): Promise<void> {
  if (!(await revokeTokenById(em, userId, tokenId))) throw notFound('token');
}
