// A page (content, breadcrumbs, children, comments), its history, any version, and the diff between two versions.
import type { Page, PageSummary, PageVersion } from '../../../../generated/client/types.gen.ts';
import { html, trusted, type Renderable } from '../html.ts';
import type { Locale } from '../i18n.ts';
import type { Crumb } from '../layout.ts';
import { atMoment, noteCrumbs, pastBanner } from './note.ts';
import { changes } from './changes.ts';
import { commentSection, pager, stored, userLink, viaBadge, when, writes } from './parts.ts';
import { viewerOf } from '../web.context.ts';
import { besideTree, pageTreeNav } from './tree.ts';
import { seg } from './view.ts';
import type { View } from './view.ts';

const VERSIONS_PER_PAGE = 20;

/** Team / note / each of the page's ancestors, linked (as the API lists them, never split from `path`) / the page. */
function pageCrumbs(page: Page | PageSummary, last?: { label: string }, at?: string): Crumb[] {
  const ancestors = page.ancestors.map((ancestor) => ({ label: ancestor.title, href: atMoment(ancestor.html_url, at) }));
  return [...noteCrumbs(page.note), ...ancestors, last ? { label: page.title, href: page.html_url } : { label: page.title }, ...(last ? [last] : [])];
}

/**
 * A version's author: the user, or for an imported version whose author has no user here the name the export gave;
 * then the others whose changes a live save holds (its co-authors).
 */
function versionAuthor(version: Pick<PageVersion, 'user' | 'imported_author' | 'co_authors'>, view: View): Renderable {
  const author = version.imported_author
    ? html`<span class="imported-author">${version.imported_author.name || version.imported_author.username} (${version.imported_author.username})</span>`
    : userLink(version.user, view.locale);
  if (version.co_authors.length === 0) return author;
  const others = version.co_authors.map((user, at) => html`${at === 0 ? '' : ', '}${userLink(user, view.locale)}`);
  return html`${author} <span class="co-authors">${view.locale.t.withCoAuthors} ${others}</span>`;
}

const historyUrl = (page: Page | PageSummary) => `${page.html_url}/histories`;

/**
 * What a version was merged with: " merged with version N" beside a version merge-on-write saved from base N, "from
 * request #N" (linked) beside one a merged request wrote; then " via <app>" for one an app wrote.
 */
function mergedBadge(locale: Locale, version: Pick<PageVersion, 'merged_from_base' | 'merged_request' | 'via'>): Renderable {
  const merged = version.merged_from_base === null ? '' : html` <span class="badge">${locale.t.mergedWith(version.merged_from_base)}</span>`;
  const request = version.merged_request ? html` <a class="badge" href="${version.merged_request.html_url}">${locale.t.fromRequest(version.merged_request.index)}</a>` : '';
  return html`${merged}${request}${viaBadge(locale, version.via)}`;
}

export async function pageView(view: View, team: string, note: string, pageId: number) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/${pageId}`;
  const path = { team, note, page: pageId };
  const at = view.moment();
  const page = (await view.run('getPage', 'page', apiPath, path, at === undefined ? {} : { at })).body;
  const tree = await pageTreeNav(view, team, note, page, at);
  // as it was: the page then, its place then, no comments (they are today's, and a page deleted since has none)
  if (at !== undefined) {
    return view.page({ title: page.title, crumbs: pageCrumbs(page, undefined, at), operation: 'getPage' }, html`${pastBanner(view.locale, at, page.html_url)}
${besideTree(tree, html`<article class="card"><h1>${page.title}</h1><p class="meta">${t.version} #${page.version} · ${t.updated} ${when(view.locale, page.updated_at)}</p>
<div class="content">${stored(page.content)}</div></article>`)}`);
  }
  const comments = (await view.run('listPageComments', 'page', `${apiPath}/comments`, path, { per_page: 100 })).body;
  return view.page({ title: page.title, crumbs: pageCrumbs(page), operation: 'getPage' }, besideTree(tree, html`
<article class="card"><h1>${page.title}</h1><p class="meta">${t.updated} ${when(view.locale, page.updated_at)} · <a href="${historyUrl(page)}">${t.history}</a>${writes(view, page.note.team) ? html` · <a href="${page.html_url}/edit">${t.editPage}</a> · <a href="${page.note.html_url}/pages/new?parent=${page.id}">${t.newPage}</a>` : ''}</p>
<div class="content">${stored(page.content)}</div></article>
${commentSection(view, comments, `${page.html_url}/comments`)}`));
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
  const card = html`<div class="card"><h1>${title}: ${t.history}</h1>
<div class="scroll"><table><thead><tr><th scope="col">${t.version}</th><th scope="col">${t.page}</th><th scope="col">${t.author}</th><th scope="col">${t.when}</th><th scope="col">${t.compare}</th></tr></thead><tbody>${rows}</tbody></table></div>
${pager(view.locale, page ? historyUrl(page) : '', number, VERSIONS_PER_PAGE, answer.total)}</div>`;
  return view.page({ title: `${title} · ${t.history}`, crumbs, operation: 'listPageVersions' }, page ? besideTree(await pageTreeNav(view, team, note, page), card) : card);
}

export async function versionView(view: View, team: string, note: string, pageId: number, index: number) {
  const { t } = view.locale;
  const version = (await view.run('getPageVersion', 'page', `/${seg(team)}/${seg(note)}/${pageId}/histories/${index}`, { team, note, page: pageId, index })).body;
  const tree = await pageTreeNav(view, team, note, version.page);
  return view.page({ title: `${version.title} · ${t.version} #${version.index}`, crumbs: pageCrumbs(version.page, { label: `${t.version} #${version.index}` }), operation: 'getPageVersion' }, besideTree(tree, html`
<div class="card"><h1>${version.title} <span class="badge">${t.version} #${version.index}</span></h1>
<p class="meta">${versionAuthor(version, view)} · ${when(view.locale, version.created_at)}${mergedBadge(view.locale, version)} · <a href="${historyUrl(version.page)}">${t.history}</a> · <a href="${version.page.html_url}">${t.current}</a></p>${writes(view, version.page.note.team) ? restoreForm(view, version.html_url) : ''}</div>
<section class="card"><h2>${t.compareWithPrevious}</h2>${changes(view.locale, version.diff)}</section>
<article class="card"><div class="content">${stored(version.content)}</div></article>`));
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
  // the page as it is now, for its place (crumbs, tree): the versions compared may carry older titles
  const page = (await view.run('getPage', 'page', `/${seg(team)}/${seg(note)}/${pageId}`, { team, note, page: pageId })).body;
  const crumbs = pageCrumbs(page, { label: t.history });
  crumbs[crumbs.length - 1] = { label: t.history, href: historyUrl(page) };
  crumbs.push({ label: t.diff });
  return view.page({ title: `${page.title} · ${t.diff}`, crumbs, operation: 'diffPageVersions' }, besideTree(await pageTreeNav(view, team, note, page), html`
<section class="card"><h1>${page.title}: ${t.diff}</h1>${changes(view.locale, answer.body.html)}</section>`));
}

/** The restore button of a version view (restoreVersion, page-forms.ts). */
function restoreForm(view: View, versionUrl: string): Renderable {
  const { t } = view.locale;
  return html`<form method="post" action="${versionUrl}/restore" class="inline"><input type="hidden" name="csrf_token" value="${viewerOf(view.res)?.csrfToken ?? ''}"><button type="submit">${t.restoreVersion}</button> <span class="muted">${t.restoreHint}</span></form>`;
}
