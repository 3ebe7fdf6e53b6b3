// An issue with its comments; a request with its pages, their diffs, its merge state, its conflicts and its comments.
import type { MergeConflict, Request } from '../../../../generated/client/types.gen.ts';
import { html, trusted } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { noteCrumbs } from './note.ts';
import { changes } from './changes.ts';
import { commentSection, keyboardScrollable, stored, userLink, viaBadge, when } from './parts.ts';
import { seg, type View } from './view.ts';
import { viewerOf } from '../web.context.ts';
import { requestSeen, type RequestSeen } from '../../requests/request-seen.ts';

export async function issueView(view: View, team: string, note: string, index: number) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/issues/${index}`;
  const path = { team, note, index };
  const issue = (await view.run('getIssue', 'note', apiPath, path)).body;
  const comments = (await view.run('listIssueComments', 'note', `${apiPath}/comments`, path, { per_page: 100 })).body;
  return view.page({ title: `${issue.title} · ${t.issueLabel(issue.index)}`, crumbs: [...noteCrumbs(issue.note), { label: t.issues, href: `${issue.note.html_url}/issues` }, { label: t.issueLabel(issue.index) }], operation: 'getIssue' }, html`
<article class="card"><h1>${issue.title} <span class="muted">#${issue.index}</span></h1>
<p class="meta"><span class="badge ${issue.is_done ? 'ok' : ''}">${issue.is_done ? t.done : t.open}</span> ${t.by} ${userLink(issue.from_user, view.locale)}${viaBadge(view.locale, issue.via)} · ${when(view.locale, issue.created_at)} · ${t.assignee}: ${userLink(issue.to_user, view.locale)}${issue.tags.length ? html` · ${issue.tags.map((tag) => html`<span class="badge">${tag}</span> `)}` : ''}</p>
<div class="content">${trusted(keyboardScrollable(issue.description_html))}</div></article>
${commentSection(view, comments, `${issue.html_url}/comments`)}`);
}

function state(locale: Locale, request: Request) {
  const { t } = locale;
  const status = request.is_merged ? t.merged : request.is_closed ? t.closed : t.opened;
  // a merge not known yet (too large for the bounds, or still being computed): said in the reader's words, not the
  // API's `mergeable_reason`, which is English
  const merge = request.is_merged || request.is_closed ? ''
    : request.from_note === null ? html`<span class="badge bad">${t.noFork}</span>`
    : request.mergeable === null ? html`<span class="badge">${t.mergeUnknown}</span>`
    : request.mergeable ? html`<span class="badge ok">${t.mergeable}</span>` : html`<span class="badge bad">${t.notMergeable}</span>`;
  return html`<span class="badge" data-state="${request.status}">${status}</span>${request.is_wip ? html` <span class="badge">${t.wip}</span>` : ''} ${merge}${request.mergeable_state ? html` <span class="meta">${t.mergeState(request.mergeable_state)}</span>` : ''}`;
}

/** A decision form as it was sent back, to show again with the choices and the texts it carried. */
export type SentDecisions = Record<string, unknown>;

/**
 * The disputed stretches, region by region: the base and both sides, each shown through the sanitizer, and for a
 * manager a choice per region (the original's, the fork's, or the text in its box, which comes with the original's
 * text: typing in it is a choice too, forms.ts) as they come, or as `sent` had them.
 */
function conflict(locale: Locale, item: MergeConflict, decide: boolean, sent: SentDecisions | undefined) {
  const { t } = locale;
  const side = (label: string, markup: string) => html`<section><h4>${label}</h4>${item.kind === 'tree' ? html`<code>${markup || '—'}</code>` : html`<div class="content">${stored(markup)}</div>`}</section>`;
  const given = (name: string) => (typeof sent?.[name] === 'string' ? (sent[name] as string) : undefined);
  const choices = (name: string, values: [string, string][]) => {
    const chosen = values.some(([value]) => value === given(name)) ? given(name) : 'ours';
    return values.map(([value, label]) => html`<label><input type="radio" name="${name}" value="${value}"${value === chosen ? trusted(' checked') : ''}> ${label}</label> `);
  };
  const decision = (index: number, region: MergeConflict['regions'][number]) => {
    if (!decide) return '';
    if (item.kind === 'tree') {
      return html`<fieldset class="decision"><legend>${t.decisionFor(index + 1)}</legend>${choices(`tree[${item.page_id}]`, [['ours', t.keepOurs], ['theirs', t.takeTheirs]])}</fieldset>`;
    }
    const name = `r[${item.page_id}][${index}]`;
    const box = `t[${item.page_id}][${index}]`;
    const id = `t-${item.page_id}-${index}`;
    // the newline after <textarea> is the parser's to drop: the text's own first newline, if any, stays
    return html`<fieldset class="decision"><legend>${t.decisionFor(index + 1)}</legend>${choices(name, [['ours', t.keepOurs], ['theirs', t.takeTheirs], ['edit', t.useEdited]])}
<label class="edited" for="${id}">${t.editedText}</label><textarea id="${id}" name="${box}" rows="4">
${given(box)?.replace(/\r\n?/g, '\n') ?? region.ours}</textarea></fieldset>`;
  };
  return html`<div class="conflict" data-kind="${item.kind}"><h3>${t.conflicts}: ${t.conflictKind(item.kind)}</h3>${item.regions.map((region, index) =>
    html`<h4>${t.region} ${index + 1}</h4><div class="regions">${side(t.base, region.base)}${side(t.ours, region.ours)}${side(t.theirs, region.theirs)}</div>${decision(index, region)}`)}</div>`;
}

/**
 * What the decision form was made from, exactly (requests/request-seen.ts: the versions of every side of every page,
 * as ids): a form sent from a view whose request has changed since (the fork wrote again, even only a title; the
 * original moved; it was closed) is shown again with the request as it is now, never merged on a decision taken over
 * what was.
 */
export function seenOf(view: View, request: Request): Promise<RequestSeen> {
  return requestSeen(view.req.em, request.id, { status: request.status, isWip: request.is_wip });
}

/** `stale`: the form sent was made from the request as it was; `asked`: what to decide again, with the form as sent. */
export type RequestViewOptions = { stale?: boolean; asked?: { message: string; sent: SentDecisions } };

export async function requestView(view: View, team: string, note: string, index: number, options: RequestViewOptions = {}) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/requests/${index}`;
  const request = (await view.run('getRequest', 'note', apiPath, { team, note, index })).body;
  const comments = (await view.run('listRequestComments', 'note', `${apiPath}/comments`, { team, note, index }, { per_page: 100 })).body;
  const csrf = viewerOf(view.res)?.csrfToken;
  const viewerName = viewerOf(view.res)?.username;
  // the forms are shown to whoever the API lets decide: a manager of the original merges; the author may close too
  const manages = csrf !== undefined && request.to_note.can_manage;
  const decide = manages && request.status === 'opened';
  const mayClose = csrf !== undefined && (manages || request.user.username === viewerName);
  const action = (name: 'merge' | 'close' | 'open') => `${request.html_url}/${name}`;
  // read for a signed-in browser only: a bearer token's reading shows no form
  const seen = csrf === undefined ? undefined : await seenOf(view, request);
  const hidden = html`<input type="hidden" name="csrf_token" value="${csrf ?? ''}"><input type="hidden" name="seen" value="${seen?.token ?? ''}">`;
  const pages = request.pages.map((page) => html`<section class="card request-page"><h2>${page.path} <span class="badge">${t.pageType(page.type)}</span>${page.classification ? html` <span class="badge">${t.classification}: ${t.standing(page.classification)}</span>` : ''}${page.merged ? html` <span class="badge ok">${t.merged}</span>` : ''}</h2>
${changes(view.locale, page.diff)}${page.conflicts.map((item) => conflict(view.locale, item, decide, options.asked?.sent))}</section>`);
  const stale = options.stale ? html`<p class="card notice" role="alert">${t.requestChanged}</p>`
    : options.asked ? html`<p class="card notice" role="alert">${options.asked.message}</p>` : '';
  const closeForm = mayClose && (request.status === 'opened' || request.status === 'draft')
    ? html`<form method="post" action="${action('close')}" class="inline">${hidden}<button type="submit">${t.closeRequest}</button></form>`
    : mayClose && request.status === 'closed' ? html`<form method="post" action="${action('open')}" class="inline">${hidden}<button type="submit">${t.reopenRequest}</button></form>` : '';
  const body = html`${pages}${decide ? html`<div class="card"><p>${request.mergeable === false ? t.decideEachRegion : t.readyToMerge}</p><button type="submit" class="primary">${t.mergeRequest}</button></div>` : ''}`;
  const label = t.requestLabel(request.index);
  return view.page({ title: `${label} · ${request.to_note.title}`, crumbs: [...noteCrumbs(request.to_note), { label: t.requests, href: `${request.to_note.html_url}/requests` }, { label }], operation: 'getRequest' }, html`${stale}
<div class="card"><h1>${label}: ${request.from_note ? request.from_note.title : '—'} → ${request.to_note.title}</h1>
<p class="meta">${t.by} ${userLink(request.user, view.locale)}${viaBadge(view.locale, request.via)} · ${when(view.locale, request.created_at)} · ${t.fork}: ${request.from_note ? html`<a href="${request.from_note.html_url}">${request.from_note.team.name} / ${request.from_note.title}</a>` : '—'} · ${t.into}: <a href="${request.to_note.html_url}">${request.to_note.team.name} / ${request.to_note.title}</a></p>
<p>${t.state}: ${state(view.locale, request)}</p>${closeForm}</div>
${decide ? html`<form method="post" action="${action('merge')}">${hidden}${body}</form>` : body}
${commentSection(view, comments, `${request.html_url}/comments`)}`);
}
