// The user and team views.
import type { Note, Team } from '../../../../generated/client/types.gen.ts';
import { html } from '../html.ts';
import { list, logLine, pager, when, writes } from './parts.ts';
import { seg, type View } from './view.ts';

const NOTES_PER_PAGE = 20;

function noteItem(view: View, note: Note) {
  return html`<li><a href="${note.html_url}">${note.title}</a> <span class="muted">${note.team.name} / ${note.name}</span>${note.is_private ? html` <span class="badge">${view.locale.t.privateNote}</span>` : ''} <span class="meta">${view.locale.t.updated} ${when(view.locale, note.updated_at)}</span></li>`;
}

/** A user: their teams (the caller's own teams on their own page; elsewhere the teams of the notes shown), their notes and recent activity. */
export async function userView(view: View, username: string) {
  const { t } = view.locale;
  const user = (await view.run('getUser', 'caller', `/users/${seg(username)}`, { username })).body;
  const page = view.number('page', 1);
  const notes = await view.run('listUserNotes', 'caller', `/users/${seg(username)}/notes`, { username }, { page, per_page: NOTES_PER_PAGE });
  const self = user.id === view.req.caller!.user.id;
  let teams: Team[];
  if (self) teams = (await view.run('listTeams', 'caller', '/teams', {}, { per_page: 100 })).body;
  else teams = [...new Map(notes.body.map((note) => [note.team.id, note.team])).values()];
  const logs = (await view.run('listLogs', 'caller', '/logs', {}, { per_page: 50 })).body.filter((log) => log.user.id === user.id).slice(0, 10);
  return view.page({ title: user.name, crumbs: [{ label: user.username }], operation: 'getUser' }, html`
<div class="card"><h1><img class="avatar" src="${user.avatar_url}" alt="">${user.name}</h1><p class="muted">@${user.username} · ${t.language(user.lang.code)}</p></div>
<div class="card"><h2>${t.teams}</h2>${list(view.locale, teams.map((team) => html`<li><a href="${team.html_url}">${team.name}</a></li>`))}</div>
<div class="card"><h2>${t.notes}</h2>${list(view.locale, notes.body.map((note) => noteItem(view, note)))}${pager(view.locale, user.html_url, page, NOTES_PER_PAGE, notes.total)}</div>
<div class="card"><h2>${t.recentActivity}</h2>${list(view.locale, logs.map((log) => logLine(view.locale, log)))}</div>`);
}

/** A team: managers, members and its notes. */
export async function teamView(view: View, name: string) {
  const { t } = view.locale;
  const team = (await view.run('getTeam', 'team', `/teams/${seg(name)}`, { team: name })).body;
  const page = view.number('page', 1);
  const notes = await view.run('listTeamNotes', 'team', `/teams/${seg(name)}/notes`, { team: name }, { page, per_page: NOTES_PER_PAGE });
  const people = (users: typeof team.members) => list(view.locale, (users ?? []).map((user) => html`<li><a href="${user.html_url}">${user.name}</a> <span class="muted">@${user.username}</span></li>`));
  return view.page({ title: team.name, crumbs: [{ label: t.team }, { label: team.name }], operation: 'getTeam' }, html`
<div class="card"><h1><img class="avatar" src="${team.avatar_url}" alt="">${team.fullname || team.name}</h1>${team.description ? html`<p>${team.description}</p>` : ''}${team.role ? html`<p class="meta">${t.role(team.role)}</p>` : ''}</div>
<div class="card"><h2>${t.managers}</h2>${people(team.managers)}<h2>${t.members}</h2>${people(team.members)}</div>
<div class="card"><h2>${t.notes}</h2>${writes(view, team) ? html`<p><a class="button" href="${team.html_url}/notes/new">${t.newNote}</a></p>` : ''}${list(view.locale, notes.body.map((note) => noteItem(view, note)))}${pager(view.locale, team.html_url, page, NOTES_PER_PAGE, notes.total)}</div>`);
}
