// The browser views behind every `html_url` the API returns (src/http/urls.ts gives their shapes), plus the
// caller's activity and notifications, the page history list and the diff view. Reading only; see README
// "Reading in a browser". Who may read what is the API's: each view runs the API's operations (web.context.ts).
import { readFileSync } from 'node:fs';
import express from 'express';
import { HttpError, notFound } from '../../http/errors.ts';
import type { AppServices } from '../../http/handler.ts';
import { languageOf } from '../notifications/time-ago.ts';
import { createSessions } from '../sessions/sessions.ts';
import { html, type Html } from './html.ts';
import { browserLanguage, localeOf } from './i18n.ts';
import { layout, sendView, STYLESHEET_PATH } from './layout.ts';
import { activityView, notificationsView } from './views/feeds.ts';
import { noteView } from './views/note.ts';
import { diffView, historyView, pageView, versionView } from './views/page.ts';
import { teamView, userView } from './views/people.ts';
import { makeView, type View } from './views/view.ts';
import { issueView, requestView } from './views/work.ts';
import { viewAuth, viewerOf } from './web.context.ts';

const stylesheet = readFileSync(new URL('./static/web.css', import.meta.url), 'utf8');

const number = (value: unknown, pattern = /^[0-9]{1,9}$/) => {
  if (typeof value !== 'string' || !pattern.test(value)) throw notFound('page');
  return Number(value);
};
const text = (value: unknown) => String(value);

export function webRoutes(services: AppServices): express.Router {
  const router = express.Router();
  const auth = viewAuth(createSessions({ secure: services.config.publicUrl.startsWith('https:') }));
  const serve = (render: (view: View, params: Record<string, unknown>) => Promise<Html>): express.RequestHandler[] => [auth, async (req, res) => {
    const locale = localeOf(languageOf(req.caller!.user));
    sendView(res, 200, await render(makeView(services, req, res, locale), req.params));
  }];

  router.get(STYLESHEET_PATH, (_req, res) => {
    res.set({ 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' }).type('text/css; charset=utf-8').send(stylesheet);
  });
  // a NUL names nothing (and PostgreSQL text cannot hold one): 404 before any lookup
  router.use((req, _res, next) => next(/%00/i.test(req.path) ? notFound('page') : undefined));

  router.get('/', auth, (req, res) => res.redirect(303, services.urls.user(req.caller!.user.username)));
  router.get('/activity', ...serve((view) => activityView(view)));
  router.get('/notifications', ...serve((view) => notificationsView(view)));
  router.get('/users/:username', ...serve((view, p) => userView(view, text(p.username))));
  router.get('/teams/:team', ...serve((view, p) => teamView(view, text(p.team))));
  // after /users/... and /teams/..., and after the system, avatar and OAuth routes registered before this router
  router.get('/:team/:note', ...serve((view, p) => noteView(view, text(p.team), text(p.note))));
  router.get('/:team/:note/issues/:index', ...serve((view, p) => issueView(view, text(p.team), text(p.note), number(p.index))));
  router.get('/:team/:note/requests/:index', ...serve((view, p) => requestView(view, text(p.team), text(p.note), number(p.index))));
  const numericPage: express.RequestHandler = (req, _res, next) => next(/^\d{1,15}$/.test(req.params.page as string) ? undefined : 'route');
  const page = (p: Record<string, unknown>) => [text(p.team), text(p.note), number(p.page, /^[0-9]{1,15}$/)] as const;
  router.get('/:team/:note/:page', numericPage, ...serve((view, p) => pageView(view, ...page(p))));
  router.get('/:team/:note/:page/histories', numericPage, ...serve((view, p) => historyView(view, ...page(p))));
  router.get('/:team/:note/:page/histories/diff', numericPage, ...serve((view, p) => diffView(view, ...page(p))));
  router.get('/:team/:note/:page/histories/:index', numericPage, ...serve((view, p) => versionView(view, ...page(p), number(p.index))));

  // A browser gets a page for what it may not see or what does not exist (the same 404 for both); API clients,
  // which do not ask for HTML, keep the problem document.
  router.use((error: unknown, req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (!(error instanceof HttpError) || (error.status !== 404 && error.status !== 403) || req.accepts(['json', 'html']) !== 'html') return next(error);
    const locale = localeOf(req.caller ? languageOf(req.caller.user) : browserLanguage(req));
    const { t } = locale;
    sendView(res, 404, layout({ title: t.notFoundTitle, locale, urls: services.urls, viewer: viewerOf(res) }, html`<div class="card"><h1>${t.notFoundTitle}</h1><p>${t.notFoundText}</p></div>`));
  });
  return router;
}
