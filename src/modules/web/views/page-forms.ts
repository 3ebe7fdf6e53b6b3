// Writing without script: the forms that create a note and a page, edit a page's title and content, move it under
// another parent, delete it, and restore one of its versions. Each is a POST from a signed-in browser with the
// session's CSRF token (formAuth), runs the API's own operation through the same wrapper (runWrite: the body schema,
// the scope, the authorization; a reader's write is the API's 403), and answers 303 to what it made or changed, or
// the form again with what went wrong and everything that was typed in it.
//
// A save carries `base_version`, the version the editor was opened on: a save over a newer version is merged three
// ways as the API merges it (merge-on-write, updatePage). Where both changed the same text, nothing is saved and the
// form comes back with each conflicting region (the text it started from, the page now, the text sent) and a choice
// for each: the page's, the sent text's, or the text typed in the region's box. Saved again, the choices decide the
// merge of the same three texts (decideEdit) and the result is written over the version the choices were made on:
// a page that moved on again meanwhile is merged again, never overwritten unseen.
//
// The edit view also offers the live editor (editor/editor.client.ts) for a page it keeps whole (live/content.ts
// liveFormOf): its mount, hidden until the script has the live document, over the same form, which it folds away
// then; without script, or refused, the form is the editor. A page the editor would change opens in the form alone,
// saying why.
import type { Page } from '../../../../generated/client/types.gen.ts';
import { HttpError } from '../../../http/errors.ts';
import { toHttpError } from '../../../http/problem-details.ts';
import { forbidden } from '../../errors.ts';
import { decideEdit } from '../../pages/edit-merge.ts';
import type { RegionChoice } from '../../text/merge3.ts';
import { html, trusted, type Html, type Renderable } from '../html.ts';
import { EDITOR_SCRIPT_PATH } from '../layout.ts';
import { runWrite, viewerOf } from '../web.context.ts';
import { field, typedText } from './forms.ts';
import { noteCrumbs } from './note.ts';
import { stored, writes } from './parts.ts';
import { seg, type View } from './view.ts';

type Form = Record<string, unknown>;
/** Where a form went: the view to go to (303), or the form again with its status. */
export type Written = string | { again: Html; status: number };

/** Text as a browser sends it back from a text area (CRLF), as it was typed. */
const typed = (text: string | undefined) => typedText(text ?? '');

/** The problem of a write refused for its input or its moment (400, 409, 413, 422): shown in the form again. */
function refusal(error: unknown): HttpError | undefined {
  const known = toHttpError(error);
  return known && [400, 409, 412, 413, 422].includes(known.status) ? known : undefined;
}

function csrfField(view: View): Renderable {
  return html`<input type="hidden" name="csrf_token" value="${viewerOf(view.res)?.csrfToken ?? ''}">`;
}

/** A form's view is for whoever may send it: a member of the team, signed in through the browser (else 403: a 404 page). */
function mayWrite(view: View, team: { role?: string | null | undefined }): void {
  if (!writes(view, team)) throw forbidden('only a member of the team, signed in through the browser, writes here');
}

const problemNotice = (problem: string | undefined) => (problem ? html`<p class="card notice" role="alert">${problem}</p>` : '');

/** The pages a parent select offers at most (listPages' pages of results of 20); past them, a page's number is typed. */
const PARENT_CHOICES_LISTS = 10;

/**
 * A select of the note's pages (tree order, indented by depth) with the top level first, `chosen` selected; in a
 * note of more pages than it offers, also a box for the number of any page (its address ends with it).
 */
async function parentSelect(view: View, team: string, note: string, chosen: number | null, skip?: Page): Promise<Renderable> {
  const { t } = view.locale;
  const pages: Page[] = [];
  let more = true;
  for (let list = 1; more && list <= PARENT_CHOICES_LISTS; list += 1) {
    const answer = (await view.run('listPages', 'note', `/${seg(team)}/${seg(note)}/pages`, { team, note }, { parent: 'all', page: list })).body;
    pages.push(...(answer.pages as Page[]));
    more = !answer.last_page;
  }
  // a page cannot go under itself or below it (the API's 422 page_cycle): those are not offered
  const below = (page: Page) => skip !== undefined && (page.id === skip.id || page.ancestors.some((ancestor) => ancestor.id === skip.id));
  const options = pages.filter((page) => !below(page)).map((page) =>
    html`<option value="${page.id}"${page.id === chosen ? trusted(' selected') : ''}>${'— '.repeat(page.ancestors.length)}${page.title}</option>`);
  const typedNumber = more ? html`<label for="parent-id">${t.parentNumber}</label><input id="parent-id" name="parent_id" inputmode="numeric" pattern="[0-9]{1,10}">` : '';
  return html`<label for="parent">${t.parentPage}</label><select id="parent" name="parent"><option value=""${chosen === null ? trusted(' selected') : ''}>${t.topLevel}</option>${options}</select>${typedNumber}`;
}

/** `parent` of a form (`parent_id` when typed): null for the top level, a page id, or 400. */
function parentOf(form: Form): number | null {
  const value = (field(form, 'parent_id')?.trim() || field(form, 'parent')) ?? '';
  if (value === '') return null;
  if (!/^[1-9][0-9]{0,9}$/.test(value)) throw new HttpError(400, 'validation_failed', 'the parent must be a page of this note', { errors: [{ pointer: '/page/parent', detail: 'is not a page id' }] });
  return Number(value);
}

// ---------------------------------------------------------------- a new note

export async function newNoteView(view: View, team: string, sent: Form = {}, problem?: string): Promise<Html> {
  const { t } = view.locale;
  const found = (await view.run('getTeam', 'team', `/teams/${seg(team)}`, { team })).body;
  mayWrite(view, found);
  return view.page({ title: `${t.newNote} · ${found.name}`, crumbs: [{ label: t.team }, { label: found.name, href: found.html_url }, { label: t.newNote }], operation: 'createNote' }, html`${problemNotice(problem)}
<form method="post" action="${found.html_url}/notes" class="card editor">${csrfField(view)}<h1>${t.newNote}</h1>
<label for="title">${t.title}</label><input id="title" name="title" required maxlength="255" value="${field(sent, 'title') ?? ''}">
<label for="slug">${t.slug}</label><input id="slug" name="slug" maxlength="64" pattern="[a-z0-9_\\-]{1,64}" value="${field(sent, 'slug') ?? ''}">
<label><input type="checkbox" name="is_private" value="true"${field(sent, 'is_private') === 'true' ? trusted(' checked') : ''}> ${t.privateOnly}</label>
<button type="submit" class="primary">${t.create}</button></form>`);
}

export async function createNote(view: View, team: string): Promise<Written> {
  const form = view.req.body as Form;
  const slug = field(form, 'slug')?.trim();
  const body = { note: { title: field(form, 'title')?.trim() ?? '', team, ...(slug ? { slug } : {}), is_private: field(form, 'is_private') === 'true' } };
  try {
    const made = await runWrite(view.services, view.req, view.res, 'createNote', 'caller', 'POST', '/api/v1/notes', {}, body);
    return made.body.html_url;
  } catch (error) {
    const problem = refusal(error);
    if (!problem) throw error;
    return { again: await newNoteView(view, team, form, problem.message), status: problem.status };
  }
}

// ---------------------------------------------------------------- a new page

export async function newPageView(view: View, team: string, note: string, sent: Form = {}, problem?: string): Promise<Html> {
  const { t } = view.locale;
  const found = (await view.run('getNote', 'note', `/${seg(team)}/${seg(note)}`, { team, note })).body;
  mayWrite(view, found.team);
  const asked = field(sent, 'parent') ?? (typeof view.req.query.parent === 'string' ? view.req.query.parent : '');
  const parent = /^[1-9][0-9]{0,9}$/.test(asked) ? Number(asked) : null;
  return view.page({ title: `${t.newPage} · ${found.title}`, crumbs: [...noteCrumbs(found), { label: t.newPage }], operation: 'createPage' }, html`${problemNotice(problem)}
<form method="post" action="${found.html_url}/pages" class="card editor">${csrfField(view)}<h1>${t.newPage}</h1>
<label for="title">${t.title}</label><input id="title" name="title" required maxlength="255" value="${field(sent, 'title') ?? ''}">
${await parentSelect(view, team, note, parent)}
<label for="page-content">${t.contentHtml}</label><textarea id="page-content" name="content" rows="16">
${typed(field(sent, 'content'))}</textarea>
<button type="submit" class="primary">${t.create}</button></form>`);
}

export async function createPage(view: View, team: string, note: string): Promise<Written> {
  const form = view.req.body as Form;
  try {
    const parent = parentOf(form);
    const page = { title: field(form, 'title')?.trim() ?? '', content: typed(field(form, 'content')), ...(parent === null ? {} : { parent }) };
    const made = await runWrite(view.services, view.req, view.res, 'createPage', 'note', 'POST', `/api/v1/${seg(team)}/${seg(note)}/pages`, { team, note }, { page });
    return made.body.html_url;
  } catch (error) {
    const problem = refusal(error);
    if (!problem) throw error;
    return { again: await newPageView(view, team, note, form, problem.message), status: problem.status };
  }
}

// ---------------------------------------------------------------- editing a page

/** A conflict to decide: the save's base, the version it conflicts with, and its regions (EditConflict[]). */
type EditConflicts = { latest: number; conflicts: { kind: string; regions: { base: string; ours: string; theirs: string }[] }[] };
type EditOptions = { sent?: Form; problem?: string; conflicts?: EditConflicts; overwrite?: boolean };

function conflictRegions(view: View, conflicts: EditConflicts, sent: Form): Renderable {
  const { t } = view.locale;
  let number = 0;
  return conflicts.conflicts.map((item) => html`<div class="conflict" data-kind="${item.kind}"><h2>${t.conflicts}: ${item.kind === 'title' ? t.title : t.contentHtml}</h2>${item.regions.map((region) => {
    const at = number++;
    const name = `r[${at}]`;
    const box = `t[${at}]`;
    const chosen = field(sent, name) ?? 'ours';
    const choice = (value: string, label: string) => html`<label><input type="radio" name="${name}" value="${value}"${value === chosen ? trusted(' checked') : ''}> ${label}</label> `;
    const side = (label: string, markup: string) => html`<section><h4>${label}</h4>${item.kind === 'title' ? html`<p>${markup}</p>` : html`<div class="content">${stored(markup)}</div>`}</section>`;
    return html`<h3>${t.region} ${at + 1}</h3><div class="regions">${side(t.base, region.base)}${side(t.pageNow, region.ours)}${side(t.yourText, region.theirs)}</div>
<fieldset class="decision"><legend>${t.decisionFor(at + 1)}</legend>${choice('ours', t.keepPageNow)}${choice('theirs', t.takeMine)}${choice('edit', t.useEdited)}
<label class="edited" for="t-${at}">${t.editedText}</label><textarea id="t-${at}" name="${box}" rows="4">
${field(sent, box) === undefined ? region.theirs : typed(field(sent, box))}</textarea></fieldset>`;
  })}</div>`);
}

/**
 * A colour of the user's own, the same for everyone on every page (carets, the presence list): a hue from the
 * username's hash, as light as it may be while white text on it keeps a contrast of 4.5:1 (WCAG AA).
 */
export function userColor(username: string): string {
  let hash = 0x811c9dc5;
  for (const character of username) hash = Math.imul(hash ^ character.codePointAt(0)!, 0x01000193) >>> 0;
  const hue = hash % 360;
  for (let lightness = 50; ; lightness -= 2) {
    const color = hslColor(hue, 75, lightness);
    if (contrastWithWhite(color) >= 4.5) return `#${color.map((channel) => channel.toString(16).padStart(2, '0')).join('')}`;
  }
}

function hslColor(hue: number, saturation: number, lightness: number): [number, number, number] {
  const s = saturation / 100;
  const l = lightness / 100;
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [channel(0), channel(8), channel(4)];
}

function contrastWithWhite(rgb: [number, number, number]): number {
  const linear = rgb.map((value) => (value / 255 <= 0.04045 ? value / 255 / 12.92 : ((value / 255 + 0.055) / 1.055) ** 2.4));
  const luminance = 0.2126 * linear[0]! + 0.7152 * linear[1]! + 0.0722 * linear[2]!;
  return 1.05 / (luminance + 0.05);
}

/**
 * The live editor over the form, for a page it keeps whole; else a note that the page opens in the text area, and
 * why. Its parts stay hidden until the script shows them: without script the view is the form alone.
 */
async function liveEditor(view: View, page: { content: string; id: number; note: { name: string; team: { name: string } } }): Promise<{ part: Renderable; script: boolean }> {
  const { t } = view.locale;
  // the editor's schema and a DOM to try the page in: loaded by the first edit view, not at the server's start
  const { editabilityOf } = await import('../../live/content.ts');
  const form = editabilityOf(page.content);
  if (!form.editable) return { part: html`<p class="card notice">${t.liveOpensInTextArea(form.reason)}</p>`, script: false };
  const viewer = viewerOf(view.res)!;
  const strings = {
    connecting: t.liveConnecting, saved: t.liveSaved, offline: t.liveOffline, refused: t.liveRefused, readOnly: t.liveReadOnly,
    editHtml: t.liveEditHtml, handedOver: t.liveHandedOver, you: t.liveYou, linkPrompt: t.liveLinkPrompt,
  };
  const button = (command: string, label: string) => html`<button type="button" data-command="${command}" aria-pressed="false">${label}</button>`;
  return {
    script: true,
    part: html`<p id="live-status" class="card live-status" role="status" aria-live="polite" hidden>${t.liveConnecting}</p>
<section id="live" class="card live" aria-labelledby="live-label" hidden><p id="live-label" class="live-label">${t.liveContent}</p>
<div class="live-toolbar" role="toolbar" aria-label="${t.liveFormatting}" aria-controls="live-editor">${button('bold', t.liveBold)}${button('italic', t.liveItalic)}${button('heading', t.liveHeading)}${button('bulletList', t.liveBulletList)}${button('orderedList', t.liveOrderedList)}${button('link', t.liveLink)}</div>
<div id="live-editor" class="live-editor" data-document="${`${page.note.team.name}/${page.note.name}/${page.id}`}" data-user-name="${viewer.name || viewer.username}" data-user-color="${userColor(viewer.username)}" data-strings="${JSON.stringify(strings)}"></div>
<p id="live-presence-label" class="live-presence-label">${t.liveOnPage}</p><ul id="live-presence" class="live-presence" aria-labelledby="live-presence-label"></ul></section>`,
  };
}

export async function editPageView(view: View, team: string, note: string, pageId: number, options: EditOptions = {}): Promise<Html> {
  const { t } = view.locale;
  const path = { team, note, page: pageId };
  const page = (await view.run('getPage', 'page', `/${seg(team)}/${seg(note)}/${pageId}`, path)).body;
  mayWrite(view, page.note.team);
  const sent = options.sent ?? {};
  const base = field(sent, 'base_version') ?? String(page.version);
  const title = field(sent, 'title') ?? page.title;
  const content = field(sent, 'content') === undefined ? page.content : typed(field(sent, 'content'));
  const conflicts = options.conflicts;
  // deciding a conflict: the text sent stays as it was sent (hidden), the choices decide the regions
  const editor = conflicts
    ? html`<p class="card notice" role="alert">${t.editConflict(conflicts.latest)}</p>
<input type="hidden" name="base_version" value="${base}"><input type="hidden" name="decided_over" value="${conflicts.latest}">
<input type="hidden" name="title" value="${title}"><input type="hidden" name="content" value="${content}">
${conflictRegions(view, conflicts, sent)}`
    : html`<input type="hidden" name="base_version" value="${base}">
<label for="title">${t.title}</label><input id="title" name="title" required maxlength="255" value="${title}">
<label for="page-content">${t.contentHtml}</label><textarea id="page-content" name="content" rows="20">
${content}</textarea>${options.overwrite ? html`<label><input type="checkbox" name="overwrite" value="true"> ${t.overwrite}</label>` : ''}`;
  // the live editor on a fresh view; not over a form that comes back with what was typed in it, or with conflicts
  const live = options.sent === undefined && !conflicts ? await liveEditor(view, page) : { part: '', script: false };
  return view.page({ title: `${t.editPage} · ${page.title}`, crumbs: [...noteCrumbs(page.note), { label: page.title, href: page.html_url }, { label: t.editPage }], operation: 'updatePage', ...(live.script ? { script: EDITOR_SCRIPT_PATH } : {}) }, html`${problemNotice(options.problem)}${live.part}
<form method="post" action="${page.html_url}/edit" class="card editor" id="page-edit">${csrfField(view)}<h1>${t.editPage}: ${page.title}</h1>
<p class="meta">${t.version} #${base}</p>${editor}
<button type="submit" class="primary">${t.save}</button> <a href="${page.html_url}">${t.cancel}</a></form>
<form method="post" action="${page.html_url}/move" class="card editor">${csrfField(view)}<h2>${t.movePage}</h2>
${await parentSelect(view, team, note, page.parent?.id ?? null, page)}<button type="submit">${t.move}</button></form>
<form method="post" action="${page.html_url}/delete" class="card editor">${csrfField(view)}<h2>${t.deletePage}</h2>
<label><input type="checkbox" name="confirm" value="yes" required> ${t.confirmDelete}</label><button type="submit" class="danger">${t.delete}</button></form>`);
}

/** The region choices of a conflict form, `r[i]` and `t[i]`, in order; `count` regions. */
function choicesOf(form: Form, count: number): RegionChoice[] {
  return Array.from({ length: count }, (_, at): RegionChoice => {
    const choice = field(form, `r[${at}]`);
    if (choice === 'edit') return { content: typed(field(form, `t[${at}]`)) };
    return choice === 'theirs' ? 'theirs' : 'ours';
  });
}

/** A version's title and content, read as the API reads it. */
async function versionText(view: View, team: string, note: string, pageId: number, index: number) {
  const version = (await view.run('getPageVersion', 'page', `/${seg(team)}/${seg(note)}/${pageId}/histories/${index}`, { team, note, page: pageId, index })).body;
  return { title: version.title, content: version.content };
}

const versionField = (form: Form, name: string): number | undefined => {
  const value = field(form, name);
  return value !== undefined && /^[0-9]{1,9}$/.test(value) ? Number(value) : undefined;
};

export async function savePage(view: View, team: string, note: string, pageId: number): Promise<Written> {
  const form = view.req.body as Form;
  const apiPath = `/api/v1/${seg(team)}/${seg(note)}/${pageId}`;
  const path = { team, note, page: pageId };
  const base = versionField(form, 'base_version');
  if (base === undefined) throw new HttpError(400, 'validation_failed', 'the form carries no base_version: open the editor again', { errors: [{ pointer: '/page/base_version', detail: 'is missing' }] });
  let text = { title: field(form, 'title')?.trim() ?? '', content: typed(field(form, 'content')) };
  let over = base;
  const again = async (status: number, options: EditOptions) => ({ again: await editPageView(view, team, note, pageId, { sent: form, ...options }), status });
  try {
    // a conflict decided: the same three texts merged with the choices, written over the version they were made on
    const decidedOver = versionField(form, 'decided_over');
    if (decidedOver !== undefined) {
      const [from, now] = [await versionText(view, team, note, pageId, base), await versionText(view, team, note, pageId, decidedOver)];
      const count = Object.keys(form).filter((name) => /^r\[[0-9]+\]$/.test(name)).length;
      const decided = decideEdit(from, now, text, choicesOf(form, count));
      if (decided === 'stale' || 'unknown' in decided) return again(409, { problem: view.locale.t.decideAgain });
      text = decided;
      over = decidedOver;
    }
    const onConflict = field(form, 'overwrite') === 'true' ? 'overwrite' : 'merge';
    const saved = await runWrite(view.services, view.req, view.res, 'updatePage', 'page', 'PUT', apiPath, path, { page: { ...text, base_version: over }, on_conflict: onConflict });
    return saved.body.html_url;
  } catch (error) {
    const problem = refusal(error);
    if (!problem) throw error;
    const conflicts = problem.extensions?.conflicts as EditConflicts['conflicts'] | undefined;
    const latest = problem.extensions?.latest_version as number | undefined;
    if (problem.code === 'edit_conflict' && latest !== undefined && conflicts && conflicts.length > 0) {
      // the regions are of the text as sent over `over`: decided, they are merged over `latest`
      const fresh = Object.fromEntries(Object.entries(form).filter(([name]) => !/^[rt]\[/.test(name)));
      return again(409, { sent: { ...fresh, base_version: String(over), title: text.title, content: text.content }, conflicts: { latest, conflicts } });
    }
    // past the merge's bounds: said so, the text kept, and the choice to save over the newer version
    if (problem.code === 'edit_conflict') return again(409, { problem: view.locale.t.editMergeUnknown(problem.message), overwrite: true });
    return again(problem.status, { problem: problem.message });
  }
}

// ---------------------------------------------------------------- moving, deleting, restoring

export async function movePage(view: View, team: string, note: string, pageId: number): Promise<Written> {
  const form = view.req.body as Form;
  const path = { team, note, page: pageId };
  try {
    const moved = await runWrite(view.services, view.req, view.res, 'updatePage', 'page', 'PUT', `/api/v1/${seg(team)}/${seg(note)}/${pageId}`, path, { page: { parent: parentOf(form) } });
    return moved.body.html_url;
  } catch (error) {
    const problem = refusal(error);
    if (!problem) throw error;
    return { again: await editPageView(view, team, note, pageId, { problem: problem.message }), status: problem.status };
  }
}

export async function deletePage(view: View, team: string, note: string, pageId: number): Promise<Written> {
  const form = view.req.body as Form;
  const path = { team, note, page: pageId };
  if (field(form, 'confirm') !== 'yes') {
    return { again: await editPageView(view, team, note, pageId, { problem: view.locale.t.confirmFirst }), status: 400 };
  }
  const page = (await view.run('getPage', 'page', `/${seg(team)}/${seg(note)}/${pageId}`, path)).body;
  await runWrite(view.services, view.req, view.res, 'deletePage', 'page', 'DELETE', `/api/v1/${seg(team)}/${seg(note)}/${pageId}`, path, undefined);
  return page.note.html_url;
}

export async function restoreVersion(view: View, team: string, note: string, pageId: number, index: number): Promise<Written> {
  const path = { team, note, page: pageId, index };
  const restored = await runWrite(view.services, view.req, view.res, 'restorePageVersion', 'page', 'POST', `/api/v1/${seg(team)}/${seg(note)}/${pageId}/histories/${index}/restore`, path, undefined);
  return restored.body.html_url;
}
