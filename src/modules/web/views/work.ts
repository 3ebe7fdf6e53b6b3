// An issue with its comments; a request with its pages, their diffs, its merge state and its conflicts.
import type { MergeConflict, Request } from '../../../../generated/client/types.gen.ts';
import { html, trusted } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { noteCrumbs } from './note.ts';
import { stored, userLink, viaBadge, when } from './parts.ts';
import { seg, type View } from './view.ts';

export async function issueView(view: View, team: string, note: string, index: number) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/issues/${index}`;
  const path = { team, note, index };
  const issue = (await view.run('getIssue', 'note', apiPath, path)).body;
  const comments = (await view.run('listIssueComments', 'note', `${apiPath}/comments`, path, { per_page: 100 })).body;
  return view.page({ title: `${issue.title} · ${issue.label}`, crumbs: [...noteCrumbs(issue.note), { label: issue.label }], operation: 'getIssue' }, html`
<article class="card"><h1>${issue.title} <span class="muted">#${issue.index}</span></h1>
<p class="meta"><span class="badge ${issue.is_done ? 'ok' : ''}">${issue.is_done ? t.done : t.open}</span> ${t.by} ${userLink(issue.from_user, view.locale)}${viaBadge(view.locale, issue.via)} · ${when(view.locale, issue.created_at)} · ${t.assignee}: ${userLink(issue.to_user, view.locale)}${issue.tags.length ? html` · ${issue.tags.map((tag) => html`<span class="badge">${tag}</span> `)}` : ''}</p>
<div class="content">${trusted(issue.description_html)}</div></article>
<section class="card"><h2>${t.comments}</h2>${comments.length === 0 ? html`<p class="muted">${t.nothing}</p>` : comments.map((comment) =>
    html`<div class="comment"><p class="meta">${userLink(comment.user, view.locale)}${viaBadge(view.locale, comment.via)} · ${when(view.locale, comment.created_at)}</p><div class="content">${stored(comment.comment)}</div></div>`)}</section>`);
}

function state(locale: Locale, request: Request) {
  const { t } = locale;
  const status = request.is_merged ? t.merged : request.is_closed ? t.closed : t.opened;
  const merge = request.is_merged || request.is_closed || request.mergeable === null ? ''
    : request.mergeable ? html`<span class="badge ok">${t.mergeable}</span>` : html`<span class="badge bad">${t.notMergeable}</span>`;
  return html`<span class="badge" data-state="${request.status}">${status}</span>${request.is_wip ? html` <span class="badge">${t.wip}</span>` : ''} ${merge}${request.mergeable_state ? html` <span class="meta">${request.mergeable_state}${request.mergeable_reason ? html`: ${request.mergeable_reason}` : ''}</span>` : ''}`;
}

/** The disputed stretches, region by region: the base and both sides, each shown through the sanitizer. */
function conflict(locale: Locale, item: MergeConflict) {
  const { t } = locale;
  const side = (label: string, markup: string) => html`<section><h4>${label}</h4>${item.kind === 'tree' ? html`<code>${markup || '—'}</code>` : html`<div class="content">${stored(markup)}</div>`}</section>`;
  return html`<div class="conflict" data-kind="${item.kind}"><h3>${t.conflicts}: ${item.kind}</h3>${item.regions.map((region, index) =>
    html`<h4>${t.region} ${index + 1}</h4><div class="regions">${side(t.base, region.base)}${side(t.ours, region.ours)}${side(t.theirs, region.theirs)}</div>`)}</div>`;
}

export async function requestView(view: View, team: string, note: string, index: number) {
  const { t } = view.locale;
  const request = (await view.run('getRequest', 'note', `/${seg(team)}/${seg(note)}/requests/${index}`, { team, note, index })).body;
  const pages = request.pages.map((page) => html`<section class="card request-page"><h2>${page.path} <span class="badge">${page.type}</span>${page.classification ? html` <span class="badge">${t.classification}: ${page.classification}</span>` : ''}${page.merged ? html` <span class="badge ok">${t.merged}</span>` : ''}</h2>
${trusted(page.diff)}${page.conflicts.map((item) => conflict(view.locale, item))}</section>`);
  return view.page({ title: `${request.label} · ${request.to_note.title}`, crumbs: [...noteCrumbs(request.to_note), { label: request.label }], operation: 'getRequest' }, html`
<div class="card"><h1>${request.label}: ${request.from_note ? request.from_note.title : '—'} → ${request.to_note.title}</h1>
<p class="meta">${t.by} ${userLink(request.user, view.locale)}${viaBadge(view.locale, request.via)} · ${when(view.locale, request.created_at)} · ${t.fork}: ${request.from_note ? html`<a href="${request.from_note.html_url}">${request.from_note.team.name} / ${request.from_note.title}</a>` : '—'} · ${t.into}: <a href="${request.to_note.html_url}">${request.to_note.team.name} / ${request.to_note.title}</a></p>
<p>${t.state}: ${state(view.locale, request)}</p></div>
${pages}`);
}
