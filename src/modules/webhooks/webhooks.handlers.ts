// A team's webhooks and their delivery log (/api/v1/teams/{team}/webhooks...). Managers only (team.manage): a
// webhook is the team's configuration and its URL may be confidential, so members and outsiders get 403 (the team
// itself is public: 404 only for a team or webhook that does not exist).
import { defineOperation, noContent } from '../../http/handler.ts';
import { answerWith } from '../../http/answer.ts';
import { listPlace, pagination } from '../../http/pagination.ts';
import { presentDelivery, presentWebhook } from './webhook.presenter.ts';
import { createWebhook, deleteWebhook, findDeliveries, findWebhook, findWebhooks, updateWebhook } from './webhooks.service.ts';

export const webhookOperations = {
  listWebhooks: defineOperation('listWebhooks', { scope: 'team', action: 'team.manage' }, async ({ query }, scope, context) => {
    const page = pagination(query);
    const { webhooks, total } = await findWebhooks(context.em, scope.team, page);
    const list = listPlace(page, total);
    return answerWith(webhooks.map((webhook) => presentWebhook(webhook)), { list });
  }),

  createWebhook: defineOperation('createWebhook', { scope: 'team', action: 'team.manage' }, async ({ body }, scope, context) => {
    const { webhook, secret } = await createWebhook(context.em, scope.caller.user, scope.team, body.webhook, context.config.webhooks.allowPrivate);
    return presentWebhook(webhook, secret);
  }),

  getWebhook: defineOperation('getWebhook', { scope: 'team', action: 'team.manage' }, async ({ path }, scope, context) => {
    return presentWebhook(await findWebhook(context.em, scope.team, path.id));
  }),

  updateWebhook: defineOperation('updateWebhook', { scope: 'team', action: 'team.manage' }, async ({ path, body }, scope, context) => {
    const { webhook, secret } = await updateWebhook(context.em, scope.team, path.id, body.webhook, context.config.webhooks.allowPrivate);
    return presentWebhook(webhook, secret);
  }),

  deleteWebhook: defineOperation('deleteWebhook', { scope: 'team', action: 'team.manage' }, async ({ path }, scope, context) => {
    await deleteWebhook(context.em, scope.team, path.id);
    return noContent;
  }),

  listWebhookDeliveries: defineOperation('listWebhookDeliveries', { scope: 'team', action: 'team.manage' }, async ({ path, query }, scope, context) => {
    const page = pagination(query);
    const { deliveries, total } = await findDeliveries(context.em, scope.team, path.id, page);
    const list = listPlace(page, total);
    return answerWith(deliveries.map(presentDelivery), { list });
  }),
};
