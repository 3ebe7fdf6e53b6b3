// The note view: description, the page tree as navigation, issue and request counts, the fork it came from.
import type { Note, Page } from '../../../../generated/client/types.gen.ts';
import { html, trusted, type Html, type Renderable } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { keyboardScrollable, writes } from './parts.ts';
import { seg } from './view.ts';
import type { View } from './view.ts';

/** The pages in tree order as nested lists (a page whose parent is not among them starts a top-level item). */
export function pageTree(locale: Locale, pages: Page[], current?: number, at?: string): Renderable {
  if (pages.length === 0) return html`<p class="muted">${locale.t.nothing}</p>`;
  const shown = new Set(pages.map((page) => page.id));
  const children = new Map<number | null, Page[]>();
  for (const page of pages) {
    const parent = page.parent && shown.has(page.parent.id) ? page.parent.id : null;
    children.set(parent, [...(children.get(parent) ?? []), page]);
  }
  const branch = (parent: number | null): Html => html`<ul>${(children.get(parent) ?? []).map((page) =>
    html`<li><a href="${atMoment(page.html_url, at)}"${page.id === current ? trusted(' aria-current="page"') : ''}>${page.title}</a>${children.has(page.id) ? branch(page.id) : ''}</li>`)}</ul>`;
  return branch(null);
}

/** A view's URL at the moment shown (`?at=`), or as it is. */
export function atMoment(url: string, at: string | undefined): string {
  return at === undefined ? url : `${url}?at=${encodeURIComponent(at)}`;
}

/** The banner of a view of the past: which moment it shows, and the way back to now. */
export function pastBanner(locale: Locale, at: string | undefined, now: string): Renderable {
  if (at === undefined) return '';
  return html`<p class="card notice" role="status">${locale.t.asItWas(locale.date(new Date(at).toISOString()))} · <a href="${now}">${locale.t.showNow}</a></p>`;
}

export function noteCrumbs(note: Note) {
  return [{ label: note.team.name, href: note.team.html_url }, { label: note.title, href: note.html_url }];
}

export async function noteView(view: View, team: string, ref: string) {
  const { t } = view.locale;
  const base = `/${seg(team)}/${seg(ref)}`;
  const path = { team, note: ref };
  const at = view.moment();
  const moment = at === undefined ? {} : { at };
  const note = (await view.run('getNote', 'note', base, path, moment)).body;
  const page = view.number('pages', 1);
  const pages = (await view.run('listPages', 'note', `${base}/pages`, path, { parent: 'all', page, ...moment })).body;
  const issues = await view.run('listIssues', 'note', `${base}/issues`, path, { per_page: 1 });
  const requests = await view.run('listRequests', 'note', `${base}/requests`, path, { per_page: 1 });
  const forked = note.forked ? html`<p>${t.forkedFrom} <a href="${note.forked.html_url}">${note.forked.team.name} / ${note.forked.title}</a></p>` : '';
  const more = page > 1 || !pages.last_page
    ? html`<nav class="pager" aria-label="${t.morePages}">${page > 1 ? html`<a rel="prev" href="?pages=${page - 1}${at === undefined ? '' : `&at=${encodeURIComponent(at)}`}">${t.previous}</a>` : ''}${pages.last_page ? '' : html`<a rel="next" href="?pages=${page + 1}${at === undefined ? '' : `&at=${encodeURIComponent(at)}`}">${t.next}</a>`}</nav>`
    : '';
  return view.page({ title: note.title, crumbs: [{ label: note.team.name, href: note.team.html_url }, { label: note.title }], operation: 'getNote' }, html`
<h1><img class="avatar" src="${note.avatar_url}" alt="">${note.title}</h1>${pastBanner(view.locale, at, note.html_url)}
<div class="layout"><nav class="card tree" aria-label="${t.pageTree}"><h2>${t.pages}</h2>${pageTree(view.locale, pages.pages, undefined, at)}${more}${at === undefined && writes(view, note.team) ? html`<p><a class="button" href="${note.html_url}/pages/new">${t.newPage}</a></p>` : ''}</nav>
<div><div class="card"><p class="meta"><span class="badge">${note.is_private ? t.privateNote : t.publicNote}</span> ${note.team.name} / ${note.name}</p>${forked}
<div class="content">${trusted(keyboardScrollable(note.description_html))}</div></div>
<div class="card"><ul class="counts"><li><a href="${note.html_url}/issues">${t.openIssues}: <span data-count="issues">${issues.total ?? 0}</span></a></li><li><a href="${note.html_url}/requests">${t.openRequests}: <span data-count="requests">${requests.total ?? 0}</span></a></li></ul></div></div></div>`);
}
