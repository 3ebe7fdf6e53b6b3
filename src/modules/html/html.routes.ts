// Plain HTML views behind the `html_url` of users, teams and notes, so every link the API hands out resolves. They
// take the same credentials as the API (bearer header or access_token) and show only what the caller may read.
import express from 'express';
import { authenticate } from '../../http/auth.ts';
import { notFound } from '../../http/errors.ts';
import type { AppServices } from '../../http/handler.ts';
import { renderDescription, sanitizeHtml } from '../notes/description.ts';
import { loadNoteScope, loadPageScope, loadTeamScope } from '../access/scope.ts';
import { PageVersion } from '../pages/page.entity.ts';
import { noteName } from '../notes/note.presenter.ts';
import { findUserByUsername } from '../users/users.service.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
}

// The views show user-written text and sanitized page HTML: the browser must not sniff another type, run any
// script, load anything from elsewhere, or frame the page.
export const htmlSecurityHeaders = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
} as const;

export function htmlRoutes({ urls }: AppServices): express.Router {
  const router = express.Router();
  const send = (res: express.Response, title: string, body: string) => {
    res.set(htmlSecurityHeaders).type('text/html; charset=utf-8').send(page(title, body));
  };

  // a NUL names nothing (and PostgreSQL text cannot hold one): 404 before any lookup
  router.use((req, _res, next) => next(/%00/i.test(req.path) ? notFound('page') : undefined));

  router.get('/users/:username', authenticate({ cache: false }), async (req, res) => {
    const user = await findUserByUsername(req.em, req.params.username as string);
    if (!user) throw notFound('user');
    send(res, user.username, `<h1>${escapeHtml(user.name)}</h1><p>@${escapeHtml(user.username)}</p><img src="${urls.userAvatar(user.id)}" alt="">`);
  });

  router.get('/teams/:team', authenticate({ cache: false }), async (req, res) => {
    const { team } = await loadTeamScope(req.em, req.caller!, req.params.team as string);
    send(res, team.name, `<h1>${escapeHtml(team.name)}</h1><img src="${urls.teamAvatar(team.id)}" alt="">`);
  });

  // after /users/... and /teams/..., and after the system and avatar routes registered before this router
  router.get('/:team/:note', authenticate({ cache: false }), async (req, res) => {
    const { note } = await loadNoteScope(req.em, req.caller!, req.params.team as string, req.params.note as string);
    const teamLink = `<a href="${urls.team(note.team.name)}">${escapeHtml(note.team.name)}</a>`;
    send(res, note.title, `<h1>${escapeHtml(note.title)}</h1><p>${teamLink} / ${escapeHtml(noteName(note))}</p><div>${renderDescription(note.description)}</div>`);
  });
  const numericPage: express.RequestHandler = (req, _res, next) => next(/^\d{1,15}$/.test(req.params.page as string) ? undefined : 'route');
  router.get('/:team/:note/:page', numericPage, authenticate({ cache: false }), async (req, res) => {
    const { note, page } = await loadPageScope(req.em, req.caller!, req.params.team as string, req.params.note as string, Number(req.params.page));
    const noteLink = `<a href="${urls.note(note.team.name, noteName(note))}">${escapeHtml(note.title)}</a>`;
    send(res, page.title, `<p>${noteLink}</p><h1>${escapeHtml(page.title)}</h1><div>${sanitizeHtml(page.content)}</div>`);
  });
  router.get('/:team/:note/:page/histories/:index', numericPage, authenticate({ cache: false }), async (req, res) => {
    const { page } = await loadPageScope(req.em, req.caller!, req.params.team as string, req.params.note as string, Number(req.params.page));
    const index = /^\d{1,9}$/.test(req.params.index as string) ? Number(req.params.index) : 0;
    const version = await req.em.findOne(PageVersion, { page: page.id, index });
    if (!version) throw notFound('page version');
    send(res, `${version.title} (Version #${version.index})`, `<h1>${escapeHtml(version.title)}</h1><p>Version #${version.index}</p>${version.diff}<div>${sanitizeHtml(version.content)}</div>`);
  });
  return router;
}
