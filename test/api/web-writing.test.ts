// Writing without script, over plain HTTP as a browser without JavaScript sends its forms (views/page-forms.ts):
// a note and a page created, a page edited (a plain save, a stale save merged three ways, a conflict decided region
// by region: the page's text, mine, or text typed in the box), moved, deleted and restored; each checked in what is
// stored. What a form may not do: an outsider's write (403), another team's private note (404), no CSRF token or a
// bearer token instead of a session (403), bad input (400/422, the form again with what was typed, nothing stored).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, notePath, type Actor } from '../support/factories.ts';
import { givePassword, signInBrowser, type CookieBrowser } from '../support/oauth.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'secret'>;
const passwords = new Map<Actor, string>();

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'writers', usernames: { manager: 'wmona', member: 'wmilo', outsider: 'wotto', reader: 'writa' }, notes: { secret: { isPrivate: true, slug: 'secret' } } });
  for (const actor of [cast.manager, cast.member, cast.outsider]) passwords.set(actor, await givePassword(app, actor.user, `${actor.user.username} password`));
});
afterAll(async () => app?.close());

function signIn(actor: Actor): Promise<CookieBrowser> {
  return signInBrowser(app, actor.user.username, passwords.get(actor)!);
}

const decode = (text: string) => text.replace(/&#(\d+);/g, (_match, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');

/**
 * The form whose action ends in `action` as a browser without JavaScript sends it untouched: inputs with their
 * values (checkboxes only when checked), the radio buttons checked, the selected option, the text areas as filled
 * (the parser drops one newline after <textarea>; a browser sends CRLF).
 */
function formFields(page: string, action: string): Record<string, string> {
  const match = page.match(new RegExp(`<form method="post" action="[^"]*${action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>([^]*?)</form>`));
  if (!match) throw new Error(`no form posting to ${action} in:\n${page.slice(0, 2000)}`);
  const form = match[1]!;
  const fields: Record<string, string> = {};
  for (const [tag] of form.matchAll(/<input [^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(tag!)?.[1];
    if (name === undefined) continue;
    const type = /type="([^"]*)"/.exec(tag!)?.[1] ?? 'text';
    if ((type === 'radio' || type === 'checkbox') && !tag!.includes(' checked')) continue;
    fields[decode(name)] = decode(/value="([^"]*)"/.exec(tag!)?.[1] ?? '');
  }
  for (const [, name, options] of form.matchAll(/<select [^>]*name="([^"]*)"[^>]*>([^]*?)<\/select>/g)) {
    fields[decode(name!)] = decode(/<option value="([^"]*)" selected>/.exec(options!)?.[1] ?? /<option value="([^"]*)"/.exec(options!)?.[1] ?? '');
  }
  for (const [, name, text] of form.matchAll(/<textarea [^>]*name="([^"]*)"[^>]*>([^]*?)<\/textarea>/g)) fields[decode(name!)] = decode(text!).replace(/^\n/, '').replace(/\n/g, '\r\n');
  return fields;
}

type PageBody = { id: number; title: string; content: string; version: number; parent: { id: number } | null; html_url: string };

async function pageNow(path: string): Promise<PageBody> {
  const answer = await cast.manager.client.get(path);
  expect(answer.status).toBe(200);
  return answer.body as PageBody;
}

async function versionsOf(path: string): Promise<{ index: number; content: string; merged_from_base: number | null; user: { username: string } }[]> {
  return (await cast.manager.client.get(`${path}/histories`)).body;
}

const PARAGRAPHS = '<p>One: deploy from a clean checkout.</p>\n<p>Two: check the dashboard.</p>\n<p>Three: page the on-call.</p>\n';

async function aPage(content = PARAGRAPHS) {
  const note = await makeNote(app, cast.team, cast.manager.user, {});
  const page = await makePage(app, note, cast.member, { title: 'Runbook', content });
  const base = await notePath(app, note);
  return { note, page, apiPath: `${base}/${page.id}`, view: `/${cast.team.name}/${note.id}/${page.id}`, notePath: base, noteView: `/${cast.team.name}/${note.id}` };
}

describe('creating from the browser', () => {
  it('a member creates a note in their team, then a page under another: stored as the API stores them', async () => {
    const browser = await signIn(cast.member);
    const team = await browser.get(`/teams/${cast.team.name}`);
    expect(team.text).toContain(`/teams/${cast.team.name}/notes/new"`);
    const form = await browser.get(`/teams/${cast.team.name}/notes/new`);
    const made = await browser.post(`/teams/${cast.team.name}/notes`, { ...formFields(form.text, '/notes'), title: 'Field guide', slug: 'field-guide', is_private: 'true' });
    expect(made.status).toBe(303);
    expect(made.location).toBe(`${app.baseUrl}/${cast.team.name}/field-guide`);
    const note = (await cast.member.client.get(`/api/v1/${cast.team.name}/field-guide`)).body;
    expect(note).toMatchObject({ title: 'Field guide', is_private: true, name: 'field-guide' });

    const noteView = await browser.get(`/${cast.team.name}/field-guide`);
    expect(noteView.text).toContain(`/${cast.team.name}/field-guide/pages/new"`);
    const first = await browser.post(`/${cast.team.name}/field-guide/pages`, { ...formFields((await browser.get(`/${cast.team.name}/field-guide/pages/new`)).text, '/pages'), title: 'Setup', content: '<p>Install it.</p>' });
    expect(first.status).toBe(303);
    const setupId = Number(first.location!.split('/').pop());
    const newForm = await browser.get(`/${cast.team.name}/field-guide/pages/new?parent=${setupId}`);
    const fields = formFields(newForm.text, '/pages');
    expect(fields.parent).toBe(String(setupId));
    const second = await browser.post(`/${cast.team.name}/field-guide/pages`, { ...fields, title: 'Linux', content: '<p>apt install it.</p>\r\n<p>Done.</p>' });
    expect(second.status).toBe(303);
    const linux = await pageNow(`/api/v1/${cast.team.name}/field-guide/${second.location!.split('/').pop()}`);
    expect(linux).toMatchObject({ title: 'Linux', content: '<p>apt install it.</p>\n<p>Done.</p>', parent: { id: setupId } });
    expect((await versionsOf(`/api/v1/${cast.team.name}/field-guide/${linux.id}`)).map((version) => version.user.username)).toEqual(['wmilo']);
  });

  it('bad input shows the form again with what was typed, and stores nothing', async () => {
    const { notePath: base, noteView } = await aPage();
    const browser = await signIn(cast.member);
    const fields = formFields((await browser.get(`${noteView}/pages/new`)).text, '/pages');
    const before = (await cast.manager.client.get(`${base}/pages`)).body.pages.length;
    const empty = await browser.post(`${noteView}/pages`, { ...fields, title: '   ', content: '<p>kept text</p>' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('role="alert"');
    expect(empty.text).toContain('&#60;p&#62;kept text&#60;/p&#62;');
    const badParent = await browser.post(`${noteView}/pages`, { ...fields, title: 'Orphan', parent: 'x1' });
    expect(badParent.status).toBe(400);
    const missingParent = await browser.post(`${noteView}/pages`, { ...fields, title: 'Orphan', parent: '2147483000' });
    expect(missingParent.status).toBe(422);
    const badSlug = await browser.post(`/teams/${cast.team.name}/notes`, { ...formFields((await browser.get(`/teams/${cast.team.name}/notes/new`)).text, '/notes'), title: 'Bad', slug: 'Not A Slug' });
    expect(badSlug.status).toBe(400);
    expect(badSlug.text).toContain('value="Not A Slug"');
    expect((await cast.manager.client.get(`${base}/pages`)).body.pages.length).toBe(before);
  });
});

describe('editing a page from the browser', () => {
  it('a plain save writes a version of the member who saved it', async () => {
    const { apiPath, view } = await aPage();
    const browser = await signIn(cast.manager);
    const page = await browser.get(view);
    expect(page.text).toContain(`${view}/edit"`);
    const fields = formFields((await browser.get(`${view}/edit`)).text, '/edit');
    expect(fields).toMatchObject({ base_version: '1', title: 'Runbook', content: PARAGRAPHS.replace(/\n/g, '\r\n') });
    const saved = await browser.post(`${view}/edit`, { ...fields, title: 'Runbook v2', content: fields.content!.replace('clean checkout', 'tagged release') });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${app.baseUrl}${view}`);
    const now = await pageNow(apiPath);
    expect(now).toMatchObject({ title: 'Runbook v2', version: 2, content: PARAGRAPHS.replace('clean checkout', 'tagged release') });
    expect((await versionsOf(apiPath))[0]).toMatchObject({ index: 2, merged_from_base: null, user: { username: 'wmona' } });
  });

  it('a stale save is merged with what was saved since, as the API merges it', async () => {
    const { apiPath, view } = await aPage();
    const browser = await signIn(cast.manager);
    const fields = formFields((await browser.get(`${view}/edit`)).text, '/edit');
    expect((await cast.member.client.put(apiPath, { json: { page: { content: PARAGRAPHS.replace('the on-call', 'the on-call engineer') } } })).status).toBe(200);
    const saved = await browser.post(`${view}/edit`, { ...fields, content: fields.content!.replace('clean checkout', 'tagged release') });
    expect(saved.status).toBe(303);
    const now = await pageNow(apiPath);
    expect(now.content).toBe(PARAGRAPHS.replace('clean checkout', 'tagged release').replace('the on-call', 'the on-call engineer'));
    expect(now.version).toBe(3);
    expect((await versionsOf(apiPath))[0]).toMatchObject({ index: 3, merged_from_base: 1 });
  });

  it('a conflict is shown region by region, nothing saved; decided, each region is as chosen', async () => {
    for (const [choice, expected] of [
      ['theirs', 'deploy from a tagged release'],
      ['ours', 'deploy from a fresh clone'],
      ['edit', 'deploy from the release branch'],
    ] as const) {
      const { apiPath, view } = await aPage();
      const browser = await signIn(cast.manager);
      const fields = formFields((await browser.get(`${view}/edit`)).text, '/edit');
      expect((await cast.member.client.put(apiPath, { json: { page: { content: PARAGRAPHS.replace('a clean checkout', 'a fresh clone') } } })).status).toBe(200);
      const mine = fields.content!.replace('a clean checkout', 'a tagged release').replace('the dashboard', 'the graphs');
      const conflicted = await browser.post(`${view}/edit`, { ...fields, content: mine });
      expect(conflicted.status).toBe(409);
      expect(conflicted.text).toContain('now version 2');
      expect((await pageNow(apiPath)).version).toBe(2);
      const decision = formFields(conflicted.text, '/edit');
      expect(decision).toMatchObject({ base_version: '1', decided_over: '2', 'r[0]': 'ours' });
      expect(decision['t[0]']).toContain('tagged release');
      const typed: Record<string, string> = choice === 'edit' ? { 't[0]': decision['t[0]']!.replace(/a tagged release/, 'the release branch') } : {};
      const decided = await browser.post(`${view}/edit`, { ...decision, 'r[0]': choice, ...typed });
      expect(decided.status, choice).toBe(303);
      const now = await pageNow(apiPath);
      expect(now.content, choice).toContain(expected);
      // what was not in a region is merged as it is: mine in paragraph two
      expect(now.content).toContain('check the graphs');
      expect(now.version).toBe(3);
    }
  });

  it('a conflict decided while the page moved on again is merged over the newer page, never over it unseen', async () => {
    const { apiPath, view } = await aPage();
    const browser = await signIn(cast.manager);
    const fields = formFields((await browser.get(`${view}/edit`)).text, '/edit');
    expect((await cast.member.client.put(apiPath, { json: { page: { content: PARAGRAPHS.replace('a clean checkout', 'a fresh clone') } } })).status).toBe(200);
    const conflicted = await browser.post(`${view}/edit`, { ...fields, content: fields.content!.replace('a clean checkout', 'a tagged release') });
    const decision = formFields(conflicted.text, '/edit');
    // meanwhile the member changes paragraph three, then paragraph one again
    const v2 = (await pageNow(apiPath)).content;
    expect((await cast.member.client.put(apiPath, { json: { page: { content: v2.replace('the on-call', 'the on-call engineer') } } })).status).toBe(200);
    const decided = await browser.post(`${view}/edit`, { ...decision, 'r[0]': 'theirs' });
    expect(decided.status).toBe(303);
    const now = await pageNow(apiPath);
    expect(now.content).toBe(PARAGRAPHS.replace('a clean checkout', 'a tagged release').replace('the on-call', 'the on-call engineer'));
    expect((await versionsOf(apiPath))[0]).toMatchObject({ index: 4, merged_from_base: 2 });
    // paragraph one changed again by the member after the choice: asked again, nothing saved
    const second = await browser.post(`${view}/edit`, { ...formFields((await browser.get(`${view}/edit`)).text, '/edit'), content: now.content.replace('a tagged release', 'main') });
    expect(second.status).toBe(303);
    const again = formFields((await browser.get(`${view}/edit`)).text, '/edit');
    expect((await cast.member.client.put(apiPath, { json: { page: { content: (await pageNow(apiPath)).content.replace('from main', 'from a branch') } } })).status).toBe(200);
    const conflictAgain = await browser.post(`${view}/edit`, { ...again, content: again.content!.replace('from main', 'from trunk') });
    expect(conflictAgain.status).toBe(409);
    const stale = formFields(conflictAgain.text, '/edit');
    expect((await cast.member.client.put(apiPath, { json: { page: { content: (await pageNow(apiPath)).content.replace('from a branch', 'from a tag') } } })).status).toBe(200);
    const version = (await pageNow(apiPath)).version;
    const shownAgain = await browser.post(`${view}/edit`, { ...stale, 'r[0]': 'theirs' });
    expect(shownAgain.status).toBe(409);
    expect((await pageNow(apiPath)).version).toBe(version);
    expect((await pageNow(apiPath)).content).toContain('from a tag');
  });

  it('moves, deletes after a confirmation, and restores a version', async () => {
    const { note, page, apiPath, view, notePath: base, noteView } = await aPage();
    const other = await makePage(app, note, cast.member, { title: 'Other' });
    const child = await makePage(app, note, cast.member, { title: 'Child', parent: page.id });
    const browser = await signIn(cast.member);
    const edit = (await browser.get(`${view}/edit`)).text;
    const move = formFields(edit, '/move');
    expect(move.parent).toBe('');
    // neither the page itself nor its child is offered as its parent
    const offered = [...edit.matchAll(/<option value="(\d+)"/g)].map((match) => Number(match[1]));
    expect(offered).toContain(other.id);
    expect(offered).not.toContain(page.id);
    expect(offered).not.toContain(child.id);
    expect((await browser.post(`${view}/move`, { ...move, parent: String(other.id) })).status).toBe(303);
    expect((await pageNow(apiPath)).parent).toMatchObject({ id: other.id });
    const cycle = await browser.post(`/${cast.team.name}/${note.id}/${other.id}/move`, { ...move, parent: String(child.id) });
    expect(cycle.status).toBe(422);
    expect((await pageNow(`${base}/${other.id}`)).parent ?? null).toBeNull();
    expect((await browser.post(`${view}/move`, { ...move, parent: '' })).status).toBe(303);
    expect((await pageNow(apiPath)).parent ?? null).toBeNull();

    // restore version 1 after an edit
    expect((await cast.member.client.put(apiPath, { json: { page: { content: '<p>rewritten</p>' } } })).status).toBe(200);
    const versionView = await browser.get(`${view}/histories/1`);
    const restore = await browser.post(`${view}/histories/1/restore`, formFields(versionView.text, '/restore'));
    expect(restore.status).toBe(303);
    expect(await pageNow(apiPath)).toMatchObject({ content: PARAGRAPHS, version: 3 });

    const unconfirmed = await browser.post(`${view}/delete`, formFields(edit, '/delete'));
    expect(unconfirmed.status).toBe(400);
    expect((await cast.manager.client.get(apiPath)).status).toBe(200);
    const deleted = await browser.post(`${view}/delete`, { ...formFields(edit, '/delete'), confirm: 'yes' });
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe(`${app.baseUrl}${noteView}`);
    expect((await cast.manager.client.get(apiPath)).status).toBe(404);
    expect((await cast.manager.client.get(`${base}/${child.id}`)).status).toBe(404);
  });
});

describe('what the writing forms may not do', () => {
  it('an outsider sees no form and is refused (403), another team\'s private note is 404, nothing stored', async () => {
    const { apiPath, view, noteView } = await aPage();
    const insider = await signIn(cast.member);
    const fields = formFields((await insider.get(`${view}/edit`)).text, '/edit');
    const outsider = await signIn(cast.outsider);
    const page = await outsider.get(view);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(`${view}/edit"`);
    const csrf = formFields((await outsider.get(view)).text, '/comments').csrf_token!;
    for (const [path, body] of [
      [`${view}/edit`, { ...fields, csrf_token: csrf, content: '<p>outsider</p>' }],
      [`${view}/move`, { csrf_token: csrf, parent: '' }],
      [`${view}/delete`, { csrf_token: csrf, confirm: 'yes' }],
      [`${view}/histories/1/restore`, { csrf_token: csrf }],
      [`${noteView}/pages`, { csrf_token: csrf, title: 'Intruder', content: '' }],
      [`/teams/${cast.team.name}/notes`, { csrf_token: csrf, title: 'Intruder' }],
    ] as const) {
      const refused = await outsider.post(path, body);
      expect(refused.status, path).toBe(403);
    }
    expect(await pageNow(apiPath)).toMatchObject({ version: 1, content: PARAGRAPHS });
    // the forms' views are not shown to whoever may not send them: 403 (a browser asking for HTML gets the 404 page
    // of what may not be seen; this client asks for no HTML, so it gets the problem document)
    for (const path of [`${view}/edit`, `${noteView}/pages/new`, `/teams/${cast.team.name}/notes/new`]) {
      const refused = await outsider.get(path);
      expect(refused.status, path).toBe(403);
      expect(refused.text).not.toContain('name="content"');
    }
    const secret = `/${cast.team.name}/secret`;
    expect((await outsider.get(`${secret}/pages/new`)).status).toBe(404);
    expect((await outsider.post(`${secret}/pages`, { csrf_token: csrf, title: 'Intruder' })).status).toBe(404);
  });

  it('without the CSRF token, or with a bearer token instead of a session, nothing is written (403)', async () => {
    const { apiPath, view } = await aPage();
    const browser = await signIn(cast.member);
    const fields = formFields((await browser.get(`${view}/edit`)).text, '/edit');
    expect((await browser.post(`${view}/edit`, { ...fields, csrf_token: 'forged', content: '<p>forged</p>' })).status).toBe(403);
    const bearer = await fetch(`${app.baseUrl}${view}/edit`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${cast.member.token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, content: '<p>bearer</p>' }),
    });
    expect(bearer.status).toBe(403);
    const missingBase = await browser.post(`${view}/edit`, { csrf_token: fields.csrf_token!, title: 'x', content: '<p>no base</p>' });
    expect(missingBase.status).toBe(400);
    expect(await pageNow(apiPath)).toMatchObject({ version: 1, content: PARAGRAPHS });
  });
});
