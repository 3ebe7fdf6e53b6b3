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

type ListOf<S extends string> = {
  kind: 'issues' | 'requests';
  title: string;
  operation: 'listIssues' | 'listRequests';
  tabs: readonly { state: S; label: string }[];
  state: S;
  page: number;
  answer: { scope: { note: Parameters<typeof noteName>[0] & { title: string }; team: { name: string } }; total: number | undefined };
  columns: readonly string[];
  rows: readonly Html[];
};

/** The frame both lists share: crumbs to the note, the state tabs, the table (or "nothing yet") and the pager. */
function listPage<S extends string>(view: View, list: ListOf<S>) {
  const { t } = view.locale;
  const { note, team } = list.answer.scope;
  const noteUrl = view.services.urls.note(team.name, noteName(note));
  const base = `${noteUrl}/${list.kind}`;
  const table = list.rows.length === 0 ? html`<p class="muted">${t.nothing}</p>`
    : html`<div class="scroll"><table><thead><tr>${list.columns.map((column) => html`<th scope="col">${column}</th>`)}</tr></thead><tbody>${list.rows}</tbody></table></div>`;
  return view.page({ title: `${list.title} · ${note.title}`, crumbs: [{ label: team.name, href: view.services.urls.team(team.name) }, { label: note.title, href: noteUrl }, { label: list.title }], operation: list.operation }, html`
<div class="card"><h1>${list.title}</h1>${stateTabs(view.locale, base, list.tabs, list.state)}
${table}
${pager(view.locale, `${base}?state=${list.state}`, list.page, PER_PAGE, list.answer.total)}</div>`);
}

export async function issueListView(view: View, team: string, note: string) {
  const { t } = view.locale;
  const state = stateOf(view, ['open', 'closed', 'all'] as const);
  const page = view.number('page', 1);
  const answer = await view.run('listIssues', 'note', `/${seg(team)}/${seg(note)}/issues`, { team, note }, { state, page, per_page: PER_PAGE });
  const rows = (answer.body as Issue[]).map((issue) => html`<tr><td><a href="${issue.html_url}">${issue.title}</a> <span class="muted">#${issue.index}</span></td>
<td><span class="badge ${issue.is_done ? 'ok' : ''}">${issue.is_done ? t.done : t.open}</span></td><td>${userLink(issue.from_user, view.locale)}</td><td>${when(view.locale, issue.created_at)}</td></tr>`);
  return listPage(view, {
    kind: 'issues', title: t.issues, operation: 'listIssues', state, page, answer, rows,
    tabs: [{ state: 'open', label: t.open }, { state: 'closed', label: t.done }, { state: 'all', label: t.all }],
    columns: [t.issue, t.state, t.by, t.when],
  });
}

function requestState(locale: Locale, request: Request): Html {
  const { t } = locale;
  const label = request.status === 'merged' ? t.merged : request.status === 'closed' ? t.closed : request.status === 'draft' ? t.wip : t.opened;
  return html`<span class="badge ${request.status === 'merged' ? 'ok' : ''}" data-state="${request.status}">${label}</span>`;
}

export async function requestListView(view: View, team: string, note: string) {
  const { t } = view.locale;
  const state = stateOf(view, ['open', 'merged', 'closed', 'all'] as const);
  const page = view.number('page', 1);
  const answer = await view.run('listRequests', 'note', `/${seg(team)}/${seg(note)}/requests`, { team, note }, { state, page, per_page: PER_PAGE });
  const rows = (answer.body as Request[]).map((request) => html`<tr><td><a href="${request.html_url}">${t.requestLabel(request.index)}</a></td>
<td>${request.from_note ? html`<a href="${request.from_note.html_url}">${request.from_note.team.name} / ${request.from_note.title}</a>` : '—'}</td>
<td>${requestState(view.locale, request)}</td><td>${userLink(request.user, view.locale)}</td><td>${when(view.locale, request.created_at)}</td></tr>`);
  return listPage(view, {
    kind: 'requests', title: t.requests, operation: 'listRequests', state, page, answer, rows,
    tabs: [{ state: 'open', label: t.opened }, { state: 'merged', label: t.merged }, { state: 'closed', label: t.closed }, { state: 'all', label: t.all }],
    columns: [t.request, t.fork, t.state, t.by, t.when],
  });
}
