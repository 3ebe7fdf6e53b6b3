// A note's issues (open / closed) and requests (open / merged / closed), linked from the note view: the API's
// listIssues and listRequests with their `state`, 20 to a page, each row linking to its view.
import type { Issue, Request } from '../../../../generated/client/types.gen.ts';
import { HttpError } from '../../../http/errors.ts';
import { html, trusted, type Html } from '../html.ts';
import type { Locale } from '../i18n.ts';
import { noteName } from '../../notes/note.presenter.ts';
import { pager, userLink, when } from './parts.ts';
import { seg, type View } from './view.ts';

const PER_PAGE = 20;

/** `?state=` among `states` (the first when absent): anything else is a 400, as the API answers it. */
function stateOf<S extends string>(view: View, states: readonly S[]): S {
  const value = view.req.query.state;
  if (value === undefined || value === '') return states[0]!;
  if (typeof value === 'string' && (states as readonly string[]).includes(value)) return value as S;
  throw new HttpError(400, 'validation_failed', `\`state\` must be one of ${states.join(', ')}`);
}

/** The tabs of the states: each a link, the one shown marked. */
function stateTabs<S extends string>(locale: Locale, base: string, states: readonly { state: S; label: string }[], shown: S): Html {
  return html`<nav class="tabs" aria-label="${locale.t.state}"><ul>${states.map(({ state, label }) =>
    html`<li><a href="${base}?state=${state}"${state === shown ? trusted(' aria-current="page"') : ''}>${label}</a></li>`)}</ul></nav>`;
}

export async function issueListView(view: View, team: string, note: string) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/issues`;
  const state = stateOf(view, ['open', 'closed', 'all'] as const);
  const page = view.number('page', 1);
  const answer = await view.run('listIssues', 'note', apiPath, { team, note }, { state, page, per_page: PER_PAGE });
  const issues = answer.body as Issue[];
  const { note: noteEntity, team: teamEntity } = answer.scope;
  const noteUrl = view.services.urls.note(teamEntity.name, noteName(noteEntity));
  const base = `${noteUrl}/issues`;
  const rows = issues.map((issue) => html`<tr><td><a href="${issue.html_url}">${issue.title}</a> <span class="muted">#${issue.index}</span></td>
<td><span class="badge ${issue.is_done ? 'ok' : ''}">${issue.is_done ? t.done : t.open}</span></td><td>${userLink(issue.from_user, view.locale)}</td><td>${when(view.locale, issue.created_at)}</td></tr>`);
  return view.page({ title: `${t.issues} · ${noteEntity.title}`, crumbs: [{ label: teamEntity.name, href: view.services.urls.team(teamEntity.name) }, { label: noteEntity.title, href: noteUrl }, { label: t.issues }], operation: 'listIssues' }, html`
<div class="card"><h1>${t.issues}</h1>${stateTabs(view.locale, base, [{ state: 'open', label: t.open }, { state: 'closed', label: t.done }, { state: 'all', label: t.all }], state)}
${issues.length === 0 ? html`<p class="muted">${t.nothing}</p>` : html`<div class="scroll"><table><thead><tr><th scope="col">${t.issue}</th><th scope="col">${t.state}</th><th scope="col">${t.by}</th><th scope="col">${t.when}</th></tr></thead><tbody>${rows}</tbody></table></div>`}
${pager(view.locale, `${base}?state=${state}`, page, PER_PAGE, answer.total)}</div>`);
}

function requestState(locale: Locale, request: Request): Html {
  const { t } = locale;
  const label = request.status === 'merged' ? t.merged : request.status === 'closed' ? t.closed : request.status === 'draft' ? t.wip : t.opened;
  return html`<span class="badge ${request.status === 'merged' ? 'ok' : ''}" data-state="${request.status}">${label}</span>`;
}

export async function requestListView(view: View, team: string, note: string) {
  const { t } = view.locale;
  const apiPath = `/${seg(team)}/${seg(note)}/requests`;
  const state = stateOf(view, ['open', 'merged', 'closed', 'all'] as const);
  const page = view.number('page', 1);
  const answer = await view.run('listRequests', 'note', apiPath, { team, note }, { state, page, per_page: PER_PAGE });
  const requests = answer.body as Request[];
  const { note: noteEntity, team: teamEntity } = answer.scope;
  const noteUrl = view.services.urls.note(teamEntity.name, noteName(noteEntity));
  const base = `${noteUrl}/requests`;
  const rows = requests.map((request) => html`<tr><td><a href="${request.html_url}">${t.requestLabel(request.index)}</a></td>
<td>${request.from_note ? html`<a href="${request.from_note.html_url}">${request.from_note.team.name} / ${request.from_note.title}</a>` : '—'}</td>
<td>${requestState(view.locale, request)}</td><td>${userLink(request.user, view.locale)}</td><td>${when(view.locale, request.created_at)}</td></tr>`);
  return view.page({ title: `${t.requests} · ${noteEntity.title}`, crumbs: [{ label: teamEntity.name, href: view.services.urls.team(teamEntity.name) }, { label: noteEntity.title, href: noteUrl }, { label: t.requests }], operation: 'listRequests' }, html`
<div class="card"><h1>${t.requests}</h1>${stateTabs(view.locale, base, [{ state: 'open', label: t.opened }, { state: 'merged', label: t.merged }, { state: 'closed', label: t.closed }, { state: 'all', label: t.all }], state)}
${requests.length === 0 ? html`<p class="muted">${t.nothing}</p>` : html`<div class="scroll"><table><thead><tr><th scope="col">${t.request}</th><th scope="col">${t.fork}</th><th scope="col">${t.state}</th><th scope="col">${t.by}</th><th scope="col">${t.when}</th></tr></thead><tbody>${rows}</tbody></table></div>`}
${pager(view.locale, `${base}?state=${state}`, page, PER_PAGE, answer.total)}</div>`);
}
