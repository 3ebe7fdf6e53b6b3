// The caller's apps, authorizations and tokens (/api/v1/me/...), and the OAuth operations of the document, which
// plain routes serve (oauth.routes.ts: the library drives them, outside /api/v1).
import { defineOperation, noContent, servedByRoute } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { createOwnApp, deleteOwnApp, findAuthorizations, findOwnApps, findTokens, revokeAuthorization, revokeOwnToken } from './apps.service.ts';
import { presentApp, presentAuthorization, presentToken } from './oauth.presenter.ts';

const routes = servedByRoute('src/modules/oauth/oauth.routes.ts');

export const oauthOperations = {
  oauthAuthorize: routes,
  oauthToken: routes,
  oauthRevoke: routes,
  oauthRegister: routes,
  oauthMetadata: routes,

  listApps: defineOperation('listApps', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const page = pagination(query);
    const { apps, total } = await findOwnApps(context.em, caller.user.id, page);
    const list = listPlace(page, total);
    return answerWith(apps.map((app) => presentApp(app)), { list });
  }),

  createApp: defineOperation('createApp', { scope: 'caller', action: 'signed-in' }, async ({ body }, { caller }, context) => {
    const { client, secret } = await createOwnApp(context.em, caller.user, body.app);
    return presentApp(client, secret ?? null);
  }),

  deleteApp: defineOperation('deleteApp', { scope: 'caller', action: 'signed-in' }, async ({ path }, { caller }, context) => {
    await deleteOwnApp(context.em, caller.user.id, path.client_id);
    return noContent;
  }),

  listAuthorizations: defineOperation('listAuthorizations', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const page = pagination(query);
    const { grants, total } = await findAuthorizations(context.em, caller.user.id, page);
    const list = listPlace(page, total);
    return answerWith(grants.map((grant) => presentAuthorization(grant)), { list });
  }),

  revokeAuthorization: defineOperation('revokeAuthorization', { scope: 'caller', action: 'signed-in' }, async ({ path }, { caller }, context) => {
    await revokeAuthorization(context.em, caller.user.id, path.client_id);
    return noContent;
  }),

  listTokens: defineOperation('listTokens', { scope: 'caller', action: 'signed-in' }, async ({ query }, { caller }, context) => {
    const page = pagination(query);
    const { tokens, total, apps } = await findTokens(context.em, caller.user.id, page);
    const list = listPlace(page, total);
    return answerWith(tokens.map((token) => presentToken(token, apps, caller.tokenId)), { list });
  }),

  revokeToken: defineOperation('revokeToken', { scope: 'caller', action: 'signed-in' }, async ({ path }, { caller }, context) => {
    await revokeOwnToken(context.em, caller.user.id, path.id);
    return noContent;
  }),
};
