// The caller's activity log and notifications.
import { html } from '../html.ts';
import { list, logLine, notificationLine, pager } from './parts.ts';
import type { View } from './view.ts';

const PER_PAGE = 50;

export async function activityView(view: View) {
  const { t } = view.locale;
  const page = view.number('page', 1);
  const answer = await view.run('listLogs', 'caller', '/logs', {}, { page, per_page: PER_PAGE });
  return view.page({ title: t.activity, crumbs: [{ label: t.activity }], operation: 'listLogs' }, html`
<div class="card"><h1>${t.activity}</h1>${list(view.locale, answer.body.map((log) => logLine(view.locale, log)), 'feed')}${pager(view.locale, '/activity', page, PER_PAGE, answer.total)}</div>`);
}

export async function notificationsView(view: View) {
  const { t } = view.locale;
  const page = view.number('page', 1);
  const answer = await view.run('listNotifications', 'caller', '/notifications', {}, { page, per_page: PER_PAGE });
  return view.page({ title: t.notifications, crumbs: [{ label: t.notifications }], operation: 'listNotifications' }, html`
<div class="card"><h1>${t.notifications}</h1>${list(view.locale, answer.body.map((item) => notificationLine(view.locale, item)), 'feed')}${pager(view.locale, '/notifications', page, PER_PAGE, answer.total)}</div>`);
}
