// The browser views behind every `html_url` the API returns (src/http/urls.ts gives their shapes), plus the
// caller's activity and notifications, the page history list and the diff view, the forms that comment and decide
// requests (views/forms.ts), and the forms that write notes and pages (views/page-forms.ts); see
// docs/operating.md, "Reading in a browser". Who may read what is the API's: each view runs the API's operations (web.context.ts).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { HttpError } from '../../http/errors.ts';
import type { AppServices } from '../../http/handler.ts';
import { plainRouter, type Refusal } from '../../http/input-guard.ts';
import { languageOf } from '../notifications/time-ago.ts';
import { createSessions } from '../sessions/sessions.ts';
import { html, type Html } from './html.ts';
import { browserLanguage, localeOf } from './i18n.ts';
import { EDITOR_SCRIPT_PATH, layout, sendView, STYLESHEET_PATH } from './layout.ts';
import { activityView, notificationsView } from './views/feeds.ts';
import { issueListView, requestListView } from './views/lists.ts';
import { noteView } from './views/note.ts';
import { diffView, historyView, pageView, versionView } from './views/page.ts';
import { teamView, userView } from './views/people.ts';
import { makeView, type View } from './views/view.ts';
import { issueView, requestView } from './views/work.ts';
import { formAuth, viewAuth, viewerOf } from './web.context.ts';
import { commentOnIssue, commentOnPage, commentOnRequest, decideRequest, type Decided } from './views/forms.ts';
import { createNote, createPage, deletePage, editPageView, movePage, newNoteView, newPageView, restoreVersion, savePage } from './views/page-forms.ts';

const stylesheet = readFileSync(new URL('./static/web.css', import.meta.url), 'utf8');
/** The live editor's bundle, built (`npm run editor`; make run and make test build it), never committed. */
export const editorScriptFile = fileURLToPath(new URL('../../../dist/web/editor.js', import.meta.url));

// path and query parameters the guard has checked to be decimal digits in range (input-guard.ts)
const number = (value: unknown) => Number(value);
const text = (value: unknown) => String(value);

export function webRoutes(services: AppServices): express.Router {
  const sessions = createSessions({ secure: services.config.publicUrl.startsWith('https:') });
  const auth = viewAuth(sessions);
  const form = formAuth(sessions);
  // a form's POST: signed in, its CSRF token, then the operation; 303 back to the view (post/redirect/get)
  const post = (act: (view: View, params: Record<string, unknown>) => Promise<string | Decided>): express.RequestHandler[] => [auth, form, async (req, res) => {
    const locale = localeOf(languageOf(req.caller!.user));
    const done = await act(makeView(services, req, res, locale), req.params);
    if (typeof done === 'string') return void res.set('Cache-Control', 'no-store').redirect(303, done);
    if ('redirect' in done) return void res.set('Cache-Control', 'no-store').redirect(303, done.redirect);
    sendView(res, done.status, done.again);
  }];
  const serve = (render: (view: View, params: Record<string, unknown>) => Promise<Html>): express.RequestHandler[] => [auth, async (req, res) => {
    const locale = localeOf(languageOf(req.caller!.user));
    sendView(res, 200, await render(makeView(services, req, res, locale), req.params));
  }];
  const stylesheetFile: express.RequestHandler = (_req, res) => {
    res.set({ 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' }).type('text/css; charset=utf-8').send(stylesheet);
  };
  // read from disk at each request (sendFile: ETag and Last-Modified), so a bundle built while the server runs is served
  const editorScript: express.RequestHandler = (req, res) => {
    if (!existsSync(editorScriptFile)) {
      req.log.warn({ file: editorScriptFile }, 'the live editor is not built: run `npm run editor` (make run and make test build it)');
      throw new HttpError(404, 'not_found', 'the live editor is not built on this server');
    }
    res.set({ 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' }).type('text/javascript; charset=utf-8');
    res.sendFile(editorScriptFile, { cacheControl: false });
  };
  // `/:team/:note/:page` is a page only where `page` is a number: any other third segment is no view (404)
  const numericPage: express.RequestHandler = (req, _res, next) => next(/^[0-9]+$/.test(req.params.page as string) ? undefined : 'route');
  const page = (p: Record<string, unknown>) => [text(p.team), text(p.note), number(p.page)] as const;

  // A browser gets a page for what it may not see or what does not exist (the same 404 for both), and for every
  // other refusal (405, 400); API clients, which do not ask for HTML, keep the problem document.
  const refuse: Refusal = (error, req, res, next) => {
    if (req.accepts(['json', 'html']) !== 'html') return next(error);
    const locale = localeOf(req.caller ? languageOf(req.caller.user) : browserLanguage(req));
    const { t } = locale;
    const frame = { locale, urls: services.urls, viewer: viewerOf(res) };
    res.set(error.headers);
    // a view that may not be seen is the same 404 as one that does not exist; a form the reader may not send is a 403
    if (error.status === 403 && req.method === 'POST') {
      return sendView(res, 403, layout({ title: t.forbiddenTitle, ...frame }, html`<div class="card"><h1>${t.forbiddenTitle}</h1><p>${t.forbiddenText}</p><p class="muted">${error.message}</p></div>`));
    }
    if (error.status === 404 || error.status === 403) {
      return sendView(res, 404, layout({ title: t.notFoundTitle, ...frame }, html`<div class="card"><h1>${t.notFoundTitle}</h1><p>${t.notFoundText}</p></div>`));
    }
    sendView(res, error.status, layout({ title: t.errorTitle, ...frame }, html`<div class="card"><h1>${t.errorTitle}</h1><p>${error.title}: ${error.message}</p></div>`));
  };

  // the guard and 405 (input-guard.ts): every view takes GET (and HEAD) alone
  // forms: flat fields (`r[12][0]` is a name, read by forms.ts), at most the API's body limit (its edited regions
  // with them) and 2,000 fields (a decision form has two per conflicting region)
  const bodies = [express.urlencoded({ extended: false, limit: services.config.limits.requestBodyBytes, parameterLimit: 2000 })];
  return plainRouter({ refuse, bodies }, [
    { path: STYLESHEET_PATH, GET: stylesheetFile },
    { path: EDITOR_SCRIPT_PATH, GET: editorScript },
    { path: '/', GET: [auth, (req, res) => res.redirect(303, services.urls.user(req.caller!.user.username))] },
    { path: '/activity', GET: serve((view) => activityView(view)), integers: { query: ['page'] } },
    { path: '/notifications', GET: serve((view) => notificationsView(view)), integers: { query: ['page'] } },
    { path: '/users/:username', GET: serve((view, p) => userView(view, text(p.username))), integers: { query: ['page'] } },
    { path: '/teams/:team', GET: serve((view, p) => teamView(view, text(p.team))), integers: { query: ['page'] } },
    { path: '/teams/:team/notes/new', GET: serve((view, p) => newNoteView(view, text(p.team))) },
    { path: '/teams/:team/notes', POST: post((view, p) => createNote(view, text(p.team))) },
    // after /users/... and /teams/..., and after the system, avatar and OAuth routes registered before this router
    { path: '/:team/:note', GET: serve((view, p) => noteView(view, text(p.team), text(p.note))), integers: { query: ['pages'] } },
    { path: '/:team/:note/pages/new', GET: serve((view, p) => newPageView(view, text(p.team), text(p.note))), integers: { query: ['parent'] } },
    { path: '/:team/:note/pages', POST: post((view, p) => createPage(view, text(p.team), text(p.note))) },
    { path: '/:team/:note/issues', GET: serve((view, p) => issueListView(view, text(p.team), text(p.note))), integers: { query: ['page'] } },
    { path: '/:team/:note/requests', GET: serve((view, p) => requestListView(view, text(p.team), text(p.note))), integers: { query: ['page'] } },
    { path: '/:team/:note/issues/:index', GET: serve((view, p) => issueView(view, text(p.team), text(p.note), number(p.index))), integers: { path: ['index'] } },
    { path: '/:team/:note/issues/:index/comments', POST: post((view, p) => commentOnIssue(view, text(p.team), text(p.note), number(p.index))), integers: { path: ['index'] } },
    { path: '/:team/:note/requests/:index', GET: serve((view, p) => requestView(view, text(p.team), text(p.note), number(p.index))), integers: { path: ['index'] } },
    { path: '/:team/:note/requests/:index/comments', POST: post((view, p) => commentOnRequest(view, text(p.team), text(p.note), number(p.index))), integers: { path: ['index'] } },
    ...(['merge', 'close', 'open'] as const).map((action) => ({
      path: `/:team/:note/requests/:index/${action}`, POST: post((view, p) => decideRequest(view, text(p.team), text(p.note), number(p.index), action)), integers: { path: ['index'] },
    })),
    { path: '/:team/:note/:page', precondition: numericPage, GET: serve((view, p) => pageView(view, ...page(p))), integers: { path: ['page'] } },
    { path: '/:team/:note/:page/comments', precondition: numericPage, POST: post((view, p) => commentOnPage(view, ...page(p))), integers: { path: ['page'] } },
    { path: '/:team/:note/:page/edit', precondition: numericPage, GET: serve((view, p) => editPageView(view, ...page(p))), POST: post((view, p) => savePage(view, ...page(p))), integers: { path: ['page'] } },
    { path: '/:team/:note/:page/move', precondition: numericPage, POST: post((view, p) => movePage(view, ...page(p))), integers: { path: ['page'] } },
    { path: '/:team/:note/:page/delete', precondition: numericPage, POST: post((view, p) => deletePage(view, ...page(p))), integers: { path: ['page'] } },
    { path: '/:team/:note/:page/histories/:index/restore', precondition: numericPage, POST: post((view, p) => restoreVersion(view, ...page(p), number(p.index))), integers: { path: ['page', 'index'] } },
    { path: '/:team/:note/:page/histories', precondition: numericPage, GET: serve((view, p) => historyView(view, ...page(p))), integers: { path: ['page'], query: ['page'] } },
    { path: '/:team/:note/:page/histories/diff', precondition: numericPage, GET: serve((view, p) => diffView(view, ...page(p))), integers: { path: ['page'], query: ['a', 'b'] } },
    { path: '/:team/:note/:page/histories/:index', precondition: numericPage, GET: serve((view, p) => versionView(view, ...page(p), number(p.index))), integers: { path: ['page', 'index'] } },
  ]);
}
