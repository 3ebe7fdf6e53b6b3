// A page (content, breadcrumbs, children, comments), its history, any version, and the diff between two versions.
import type { Page, PageSummary, PageVersion } from '../../../../generated/client/types.gen.ts';
import { noteName } from '../../notes/note.presenter.ts';
import { html, trusted, type Renderable } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { atMoment, noteCrumbs, pastBanner } from './note.ts';
import { list, pager, stored, userLink, viaBadge, when } from './parts.ts';
import { seg } from './view.ts';
import type { View } from './view.ts';

const VERSIONS_PER_PAGE = 20;

/** Team / note / the page's ancestors (the path's titles; the parent linked where the page carries it) / the page. */
function pageCrumbs(page: Page | PageSummary, last?: { label: string }) {
  const titles = page.path.split(' / ');
  const parentUrl = 'parent' in page ? page.parent?.html_url : undefined;
  const ancestors = titles.slice(0, -1).map((label, index, all) => ({ label, href: index === all.length - 1 ? parentUrl : undefined }));
  return [...noteCrumbs(page.note), ...ancestors, last ? { label: page.title, href: page.html_url } : { label: page.title }, ...(last ? [last] : [])];
}

/** A version's author: the user, or for an imported version whose author has no user here the name the export gave. */
const versionAuthor = (version: { user: Parameters<typeof userLink>[0]; imported_author?: { username: string; name: string } | null }, view: View) =>
  version.imported_author ? html`<span class="imported-author">${version.imported_author.name || version.imported_author.username} (${version.imported_author.username})</span>` : userLink(version.user, view.locale);

const historyUrl = (page: Page | PageSummary) => `${page.html_url}/histories`;

/** " merged with version N" beside a version merge-on-write saved from base N; nothing for any other version. */
function mergedBadge(locale: Locale, version: Pick<PageVersion, 'merged_from_base' | 'via'>): Renderable {
  const merged = version.merged_from_base === null ? '' : html` <span class="badge">${locale.t.mergedWith(version.merged_from_base)}</span>`;
  return html`${merged}${viaBadge(locale, version.via)}`;
}

export async function pageView(view: View, team: string, note: string, pageId: number) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/${pageId}`;
  const path = { team, note, page: pageId };
  const at = view.moment();
  const page = (await view.run('getPage', 'page', apiPath, path, at === undefined ? {} : { at })).body;
  // as it was: the page then, its place then, no comments (they are today's, and a page deleted since has none)
  if (at !== undefined) {
    return view.page({ title: page.title, crumbs: pageCrumbs(page), operation: 'getPage' }, html`${pastBanner(view.locale, at, page.html_url)}
<article class="card"><h1>${page.title}</h1><p class="meta">${t.version} #${page.version} · ${t.updated} ${when(view.locale, page.updated_at)}</p>
<div class="content">${stored(page.content)}</div></article>
<nav class="card" aria-label="${t.children}"><h2>${t.children}</h2>${list(view.locale, (page.children ?? []).map((child) => html`<li><a href="${atMoment(child.html_url, at)}">${child.title}</a></li>`))}</nav>`);
  }
  const comments = (await view.run('listPageComments', 'page', `${apiPath}/comments`, path, { per_page: 100 })).body;
  return view.page({ title: page.title, crumbs: pageCrumbs(page), operation: 'getPage' }, html`
<article class="card"><h1>${page.title}</h1><p class="meta">${t.updated} ${when(view.locale, page.updated_at)} · <a href="${historyUrl(page)}">${t.history}</a></p>
<div class="content">${stored(page.content)}</div></article>
<nav class="card" aria-label="${t.children}"><h2>${t.children}</h2>${list(view.locale, (page.children ?? []).map((child) => html`<li><a href="${child.html_url}">${child.title}</a></li>`))}</nav>
<section class="card"><h2>${t.comments}</h2>${comments.length === 0 ? html`<p class="muted">${t.nothing}</p>` : comments.map((comment) =>
    html`<div class="comment"><p class="meta">${userLink(comment.user, view.locale)} · ${when(view.locale, comment.created_at)}${viaBadge(view.locale, comment.via)}</p><div class="content">${stored(comment.comment)}</div></div>`)}</section>`);
}

export async function historyView(view: View, team: string, note: string, pageId: number) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/${pageId}/histories`;
  const number = view.number('page', 1);
  const answer = await view.run('listPageVersions', 'page', apiPath, { team, note, page: pageId }, { page: number, per_page: VERSIONS_PER_PAGE });
  const versions = answer.body;
  const page = versions[0]?.page;
  const title = page?.title ?? answer.scope.page.title;
  const rows = versions.map((version, index) => {
    const previous = versions[index + 1];
    const diff = previous ? `${historyUrl(version.page)}/diff?a=${previous.id}&b=${version.id}` : version.index === 1 ? undefined : `${historyUrl(version.page)}/diff?b=${version.id}`;
    return html`<tr><td><a href="${version.html_url}">#${version.index}</a>${mergedBadge(view.locale, version)}</td><td>${version.title}</td><td>${versionAuthor(version, view)}</td><td>${when(view.locale, version.created_at)}</td><td>${diff ? html`<a href="${diff}">${t.compareWithPrevious}</a>` : ''}</td></tr>`;
  });
  const crumbs = page ? pageCrumbs(page, { label: t.history }) : [{ label: t.history }];
  return view.page({ title: `${title} · ${t.history}`, crumbs, operation: 'listPageVersions' }, html`
<div class="card"><h1>${title}: ${t.history}</h1>
<table><thead><tr><th scope="col">${t.version}</th><th scope="col">${t.page}</th><th scope="col">${t.author}</th><th scope="col">${t.when}</th><th scope="col">${t.compare}</th></tr></thead><tbody>${rows}</tbody></table>
${pager(view.locale, page ? historyUrl(page) : '', number, VERSIONS_PER_PAGE, answer.total)}</div>`);
}

export async function versionView(view: View, team: string, note: string, pageId: number, index: number) {
  const { t } = view.locale;
  const version = (await view.run('getPageVersion', 'page', `/${seg(team)}/${seg(note)}/${pageId}/histories/${index}`, { team, note, page: pageId, index })).body;
  return view.page({ title: `${version.title} · ${t.version} #${version.index}`, crumbs: pageCrumbs(version.page, { label: `${t.version} #${version.index}` }), operation: 'getPageVersion' }, html`
<div class="card"><h1>${version.title} <span class="badge">${t.version} #${version.index}</span></h1>
<p class="meta">${versionAuthor(version, view)} · ${when(view.locale, version.created_at)}${mergedBadge(view.locale, version)} · <a href="${historyUrl(version.page)}">${t.history}</a> · <a href="${version.page.html_url}">${t.current}</a></p></div>
<section class="card"><h2>${t.compareWithPrevious}</h2>${trusted(version.diff)}</section>
<article class="card"><div class="content">${stored(version.content)}</div></article>`);
}

/** `?a=<version id>&b=<version id>` as diffPageVersions takes them (b: the newest, a: the one before b, by default). */
export async function diffView(view: View, team: string, note: string, pageId: number) {
  const { t } = view.locale;
  const query: Record<string, number> = {};
  for (const name of ['a', 'b']) {
    const value = view.req.query[name];
    if (typeof value === 'string' && /^[0-9]{1,9}$/.test(value)) query[name] = Number(value);
  }
  const answer = await view.run('diffPageVersions', 'page', `/${seg(team)}/${seg(note)}/${pageId}/histories/diff`, { team, note, page: pageId }, query);
  const { page, note: noteEntity, team: teamEntity } = answer.scope;
  const urls = view.services.urls;
  const name = noteName(noteEntity);
  const pageUrl = urls.page(teamEntity.name, name, page.id);
  const crumbs = [{ label: teamEntity.name, href: urls.team(teamEntity.name) }, { label: noteEntity.title, href: urls.note(teamEntity.name, name) },
    { label: page.title, href: pageUrl }, { label: t.history, href: `${pageUrl}/histories` }, { label: t.diff }];
  const empty = answer.body.html === '<div class="diff"></div>';
  return view.page({ title: `${page.title} · ${t.diff}`, crumbs, operation: 'diffPageVersions' }, html`
<section class="card"><h1>${page.title}: ${t.diff}</h1>${empty ? html`<p class="muted">${t.noDiff}</p>` : trusted(answer.body.html)}</section>`);
}
