// The forms of the browser views over plain HTTP (the Chromium walk is test/browser/web-views.test.ts): a comment on
// a page, an issue and a request, with a mention that notifies; a request decided region by region by a manager, closed and
// reopened; what a form may not do: no CSRF token, a bearer token instead of a session, a member's merge (403), a
// stale view (shown again, 409, nothing merged: the original moved, the fork wrote again, an app's proposal moved its
// request on, if only its title, within the second the view was loaded in), bad input (400), another team's private
// note (404).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { MergeRequest } from '../../src/modules/requests/merge-request.entity.ts';
import { ApiClient } from '../support/client.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeIssue, makeNote, makePage, type Actor } from '../support/factories.ts';
import { contentOfPage, forkedRunbook, forkNote, latestVersionOf } from '../support/forks.ts';
import { givePassword, hiddenFields, signInBrowser, type CookieBrowser } from '../support/oauth.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'secret'>;
const passwords = new Map<Actor, string>();

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'forms', usernames: { manager: 'fmona', member: 'fmilo', outsider: 'fotto', reader: 'frita' }, notes: { secret: { isPrivate: true, slug: 'secret' } } });
  for (const actor of [cast.manager, cast.member, cast.outsider, cast.reader]) passwords.set(actor, await givePassword(app, actor.user, `${actor.user.username} password`));
});
afterAll(async () => app?.close());

function signIn(actor: Actor): Promise<CookieBrowser> {
  return signInBrowser(app, actor.user.username, passwords.get(actor)!);
}

const THREE = '<h1>Deploy</h1>\n<p>Run make deploy from a clean checkout.</p>\n<p>Then check the dashboard.</p>\n<p>Page the on-call.</p>\n';

/** A request whose Deploy page conflicts in two regions (paragraphs 1 and 2); paragraph 3 only the fork changed. */
async function conflicted() {
  const s = await forkedRunbook(app, cast);
  await s.editUpstream(s.deploy.id, THREE);
  // a fork of the original as it is now, so that its base is THREE
  const fork = await forkNote(app, s.note, cast.outsider);
  const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, s.deploy.id]);
  const forkPage = copy!.id;
  const forkPath = `/api/v1/${fork.team.name}/${fork.id}`;
  const editFork = async (content: string) => {
    expect((await cast.outsider.client.put(`${forkPath}/${forkPage}`, { json: { page: { content } } })).status).toBe(200);
    return latestVersionOf(app, forkPage);
  };
  const version = await editFork(THREE.replace('clean checkout', 'tagged release').replace('the dashboard', 'the status page').replace('Page the on-call', 'Page the on-call engineer'));
  await s.editUpstream(s.deploy.id, THREE.replace('clean checkout', 'fresh clone').replace('the dashboard', 'the graphs'));
  const request = (await cast.outsider.client.post(`${forkPath}/requests`, { json: { page_versions: [version] } })).body;
  return { s, request, view: `/forms/${s.note.slug}/requests/${request.index}`, forkPage, editFork };
}

/** The form whose action ends in `action` as a browser without JavaScript sends it untouched: its hidden fields, the radio buttons checked, the text areas as filled (the parser drops one newline after <textarea>; a browser sends CRLF). */
function formAsSent(page: string, action: string): Record<string, string> {
  const form = page.match(new RegExp(`<form method="post" action="[^"]*${action}">([^]*?)</form>`))![1]!;
  const decode = (text: string) => text.replace(/&#(\d+);/g, (_match, code: string) => String.fromCharCode(Number(code)));
  const fields: Record<string, string> = {};
  for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[decode(name!)] = decode(value!);
  for (const [, name, value] of form.matchAll(/<input type="radio" name="([^"]*)" value="([^"]*)" checked>/g)) fields[decode(name!)] = decode(value!);
  for (const [, name, text] of form.matchAll(/<textarea [^>]*name="([^"]*)"[^>]*>([^]*?)<\/textarea>/g)) fields[decode(name!)] = decode(text!).replace(/^\n/, '').replace(/\n/g, '\r\n');
  return fields;
}

describe('comments from the browser', () => {
  it('a reader comments on a page with a mention: stored, the mentioned user notified with a link back', async () => {
    const s = await forkedRunbook(app, cast);
    const browser = await signIn(cast.reader);
    const view = await browser.get(`/forms/${s.note.slug}/${s.deploy.id}`);
    expect(view.text).toContain(`action="${app.baseUrl}/forms/${s.note.slug}/${s.deploy.id}/comments"`);
    const fields = hiddenFields(view.text);
    const posted = await browser.post(`/forms/${s.note.slug}/${s.deploy.id}/comments`, { csrf_token: fields.csrf_token!, comment: 'Looks right to me, @fmona: ship it?' });
    expect(posted.status).toBe(303);
    expect(posted.location).toMatch(new RegExp(`/forms/${s.note.slug}/${s.deploy.id}#comment-\\d+$`));
    const comments = (await cast.member.client.get(`${s.upstreamPath}/${s.deploy.id}/comments`)).body as { id: number; comment: string; user: { username: string } }[];
    expect(comments.map((comment) => [comment.user.username, comment.comment])).toEqual([['frita', 'Looks right to me, @fmona: ship it?']]);
    const notified = await app.em().find(Notification, { user: cast.manager.user.id, event: 'mention' }, { orderBy: { id: 'desc' } });
    expect(notified[0]?.fromUser.id).toBe(cast.reader.user.id);
    const list = (await cast.manager.client.get('/api/v1/notifications')).body as { event: string; page?: { html_url: string } }[];
    expect(list.find((item) => item.event === 'mention')?.page?.html_url).toBe(`${app.baseUrl}/forms/${s.note.slug}/${s.deploy.id}`);
    // shown back on the page, where the redirect leads
    expect((await browser.get(`/forms/${s.note.slug}/${s.deploy.id}`)).text).toContain('ship it?');
  });

  it('a comment on an issue; an empty one is a 400 and nothing is stored; a mention of nobody is the API\'s 422', async () => {
    const s = await forkedRunbook(app, cast);
    const issue = await makeIssue(app, s.note, cast.member, { title: 'Rollback steps' });
    const browser = await signIn(cast.member);
    const csrf = hiddenFields((await browser.get(`/forms/${s.note.slug}/issues/${issue.index}`)).text).csrf_token!;
    const url = `/forms/${s.note.slug}/issues/${issue.index}/comments`;
    expect((await browser.post(url, { csrf_token: csrf, comment: '  ' })).status).toBe(400);
    expect((await browser.post(url, { csrf_token: csrf, comment: 'ask @nobody-here' })).status).toBe(422);
    const posted = await browser.post(url, { csrf_token: csrf, comment: 'I will write them' });
    expect([posted.status, posted.location]).toEqual([303, expect.stringMatching(/\/issues\/\d+#comment-\d+$/)]);
    const stored = (await cast.member.client.get(`${s.upstreamPath}/issues/${issue.index}/comments`)).body as { comment: string }[];
    expect(stored.map((comment) => comment.comment)).toEqual(['I will write them']);
  });

  it('a reader comments on a request with a mention: stored, the mentioned and the request\'s author told, with a link back to the request', async () => {
    const { s, request, view } = await conflicted();
    const browser = await signIn(cast.reader);
    const page = await browser.get(view);
    expect(page.text).toContain(`action="${app.baseUrl}${view}/comments"`);
    expect(page.text).not.toContain('class="decision"'); // a reader may comment, not decide
    const url = `${view}/comments`;
    const csrf = hiddenFields(page.text).csrf_token!;
    expect((await browser.post(url, { csrf_token: csrf, comment: '' })).status).toBe(400);
    const posted = await browser.post(url, { csrf_token: csrf, comment: '@fmona the second region needs the graphs link' });
    expect([posted.status, posted.location]).toEqual([303, expect.stringMatching(new RegExp(`/forms/${s.note.slug}/requests/${request.index}#comment-\\d+$`))]);
    const stored = (await cast.member.client.get(`${s.upstreamPath}/requests/${request.index}/comments`)).body as { comment: string; user: { username: string }; mentions: { username: string }[] }[];
    expect(stored.map((comment) => [comment.user.username, comment.comment, comment.mentions.map((user) => user.username)])).toEqual([['frita', '@fmona the second region needs the graphs link', ['fmona']]]);
    const told = (await cast.manager.client.get('/api/v1/notifications')).body as { event: string; type: string; request?: { html_url: string } }[];
    expect(told.find((item) => item.event === 'mention' && item.type === 'request')?.request?.html_url).toBe(`${app.baseUrl}${view}`);
    const author = (await cast.outsider.client.get('/api/v1/notifications')).body as { event: string; type: string }[];
    expect(author.some((item) => item.event === 'comment' && item.type === 'request')).toBe(true);
    expect((await browser.get(view)).text).toContain('the second region needs the graphs link');
  });

  it('refuses a form without the session\'s CSRF token, and one sent with a bearer token instead of a session (403)', async () => {
    const s = await forkedRunbook(app, cast);
    const browser = await signIn(cast.member);
    const url = `/forms/${s.note.slug}/${s.deploy.id}/comments`;
    expect((await browser.post(url, { comment: 'no token' })).status).toBe(403);
    expect((await browser.post(url, { csrf_token: 'forged', comment: 'wrong token' })).status).toBe(403);
    const bearer = await cast.member.client.post(url, { form: { comment: 'with a bearer token' }, headers: { Accept: 'text/html' } });
    expect(bearer.status).toBe(403);
    expect((await cast.member.client.get(`${s.upstreamPath}/${s.deploy.id}/comments`)).body).toEqual([]);
    // another team's private note: the same 404 as for none
    const secret = await makePage(app, cast.notes.secret, cast.manager, { title: 'Hidden' });
    const outsider = await signIn(cast.outsider);
    const csrf = hiddenFields((await outsider.get('/users/fotto')).text).csrf_token!;
    expect((await outsider.post(`/forms/secret/${secret.id}/comments`, { csrf_token: csrf, comment: 'hello' })).status).toBe(404);
  });
});

describe('a request decided in the browser', () => {
  it('a manager takes theirs for one region and writes the other, and merges; the rest stays merged', async () => {
    const { s, view, forkPage } = await conflicted();
    const browser = await signIn(cast.manager);
    const page = await browser.get(view);
    expect(page.text).toContain(`action="${app.baseUrl}${view}/merge"`);
    const fields = hiddenFields(page.text);
    expect(page.text.match(/<fieldset class="decision">/g)).toHaveLength(2);
    const decided = await browser.post(`${view}/merge`, {
      csrf_token: fields.csrf_token!, seen: fields.seen!,
      [`r[${forkPage}][0]`]: 'theirs',
      [`r[${forkPage}][1]`]: 'edit', [`t[${forkPage}][1]`]: '<p>Then check the graphs and the status page.</p>\n',
    });
    expect([decided.status, decided.location]).toEqual([303, `${app.baseUrl}${view}`]);
    expect(await contentOfPage(app, s.deploy.id)).toBe('<h1>Deploy</h1>\n<p>Run make deploy from a tagged release.</p>\n<p>Then check the graphs and the status page.</p>\n<p>Page the on-call engineer.</p>\n');
    expect((await app.em().findOneOrFail(MergeRequest, { toNote: s.note.id })).status).toBe('merged');
  });

  it('without JavaScript: the first region left as the form comes (the original), the second typed in with its choice untouched: the typed text is merged', async () => {
    const { s, request, view, forkPage } = await conflicted();
    const browser = await signIn(cast.manager);
    const sent = formAsSent((await browser.get(view)).text, '/merge');
    // what the form comes with: the original chosen in both regions, its text in both boxes
    expect([sent[`r[${forkPage}][0]`], sent[`r[${forkPage}][1]`]]).toEqual(['ours', 'ours']);
    expect(sent[`t[${forkPage}][1]`]).toBe('<p>Then check the graphs.</p>\r\n');
    const typed = '<p>Then check the graphs\r\nand the status page.</p>\r\n';
    const decided = await browser.post(`${view}/merge`, { ...sent, [`t[${forkPage}][1]`]: typed });
    expect([decided.status, decided.location]).toEqual([303, `${app.baseUrl}${view}`]);
    const expected = '<h1>Deploy</h1>\n<p>Run make deploy from a fresh clone.</p>\n<p>Then check the graphs\nand the status page.</p>\n<p>Page the on-call engineer.</p>\n';
    expect(await contentOfPage(app, s.deploy.id)).toBe(expected);
    // the stored version: the merge's, from the request, with the typed text
    const [version] = await app.em().execute<{ content: string; request_id: number }[]>('select content, request_id from page_versions where page_id = ? order by index desc limit 1', [s.deploy.id]);
    expect(version).toEqual({ content: expected, request_id: request.id });
  });

  it('a region whose box was typed in but whose choice is the fork\'s is asked again (400), the typed text kept; nothing is merged', async () => {
    const { s, view, forkPage } = await conflicted();
    const browser = await signIn(cast.manager);
    const sent = formAsSent((await browser.get(view)).text, '/merge');
    const answer = await browser.post(`${view}/merge`, { ...sent, [`r[${forkPage}][1]`]: 'theirs', [`t[${forkPage}][1]`]: '<p>Then check the graphs &amp; more.</p>' });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('Nothing was merged');
    expect(answer.text).toContain('Region 2');
    const again = formAsSent(answer.text, '/merge');
    expect([again[`r[${forkPage}][0]`], again[`r[${forkPage}][1]`], again[`t[${forkPage}][1]`]]).toEqual(['ours', 'theirs', '<p>Then check the graphs &amp; more.</p>']);
    expect(await contentOfPage(app, s.deploy.id)).toContain('fresh clone');
    expect((await app.em().findOneOrFail(MergeRequest, { toNote: s.note.id })).status).toBe('opened');
    // the choice made explicit: merged
    expect((await browser.post(`${view}/merge`, { ...again, [`r[${forkPage}][1]`]: 'edit' })).status).toBe(303);
    expect(await contentOfPage(app, s.deploy.id)).toContain('<p>Then check the graphs &amp; more.</p>');
  });

  it('a member sees no form, and a forged merge is the API\'s 403; nothing changes', async () => {
    const { s, view, forkPage } = await conflicted();
    const manager = hiddenFields((await (await signIn(cast.manager)).get(view)).text);
    const browser = await signIn(cast.member);
    const page = await browser.get(view);
    expect(page.text).not.toContain('/merge"');
    expect(page.text).not.toContain('class="decision"');
    const csrf = hiddenFields((await browser.get('/users/fmilo')).text).csrf_token!;
    const forged = await browser.post(`${view}/merge`, { csrf_token: csrf, seen: manager.seen!, [`r[${forkPage}][0]`]: 'theirs', [`r[${forkPage}][1]`]: 'theirs' });
    expect(forged.status).toBe(403);
    expect(await contentOfPage(app, s.deploy.id)).toContain('fresh clone');
  });

  it('a view that went stale is shown again (409) with the request as it is now, and nothing is merged', async () => {
    const { s, view, forkPage } = await conflicted();
    const browser = await signIn(cast.manager);
    const fields = hiddenFields((await browser.get(view)).text);
    // the original changes again after the manager loaded the view: the regions are not what was decided on
    await s.editUpstream(s.deploy.id, THREE.replace('clean checkout', 'signed release').replace('the dashboard', 'the graphs'));
    const answer = await browser.post(`${view}/merge`, { csrf_token: fields.csrf_token!, seen: fields.seen!, [`r[${forkPage}][0]`]: 'theirs', [`r[${forkPage}][1]`]: 'theirs' });
    expect(answer.status).toBe(409);
    expect(answer.text).toContain('This request changed since you loaded it');
    expect(answer.text).toContain('signed release');
    expect(hiddenFields(answer.text).seen).not.toBe(fields.seen);
    expect(await contentOfPage(app, s.deploy.id)).toContain('signed release');
    expect((await app.em().findOneOrFail(MergeRequest, { toNote: s.note.id })).status).toBe('opened');
    // a choice left out is a 400
    const again = hiddenFields(answer.text);
    expect((await browser.post(`${view}/merge`, { csrf_token: again.csrf_token!, seen: again.seen!, [`r[${forkPage}][0]`]: 'theirs' })).status).toBe(400);
  });

  it('closes and reopens a request', async () => {
    const { view } = await conflicted();
    const browser = await signIn(cast.manager);
    let fields = hiddenFields((await browser.get(view)).text);
    expect((await browser.post(`${view}/close`, { csrf_token: fields.csrf_token!, seen: fields.seen! })).status).toBe(303);
    const closed = await browser.get(view);
    expect(closed.text).toContain('data-state="closed"');
    expect(closed.text).not.toContain('class="decision"');
    fields = hiddenFields(closed.text);
    expect((await browser.post(`${view}/open`, { csrf_token: fields.csrf_token!, seen: fields.seen! })).status).toBe(303);
    expect((await browser.get(view)).text).toContain('data-state="opened"');
  });
});

describe('a review form carries exactly what the manager saw (issue 43)', () => {
  let agent: ApiClient;
  beforeAll(async () => {
    // an app of the member's that only proposes: its page writes move one open request on (requests/proposals.ts)
    const registered = await cast.member.client.post('/api/v1/me/apps', { json: { app: { name: 'Proposing Agent', redirect_uris: ['http://127.0.0.1:9/cb'], confidential: false, writes: 'proposals' } } });
    expect(registered.status, registered.text).toBe(200);
    const [client] = await app.em().execute<{ id: number }[]>('select id from oauth_clients where client_id = ?', [registered.body.client_id]);
    const { token, secret } = await issueToken(app.em(), cast.member.user, { scope: 'write' });
    await app.em().execute('update tokens set client_id = ? where id = ?', [client!.id, token.id]);
    agent = new ApiClient(app.baseUrl, secret);
  });

  /** A page of a new note and the app's request proposing a change of it: no conflict, a merge button. */
  async function proposed(slug: string) {
    const note = await makeNote(app, cast.team, cast.manager.user, { title: slug, slug });
    const page = await makePage(app, note, cast.manager, { title: 'Rota', content: '<p>Alice.</p>' });
    const path = `/api/v1/forms/${slug}/${page.id}`;
    const first = await agent.put(path, { json: { page: { content: '<p>Alice, Bob.</p>', base_version: 1 } } });
    expect(first.status, first.text).toBe(200);
    const view = `/forms/${slug}/requests/${first.body.proposal.request_index}`;
    const browser = await signIn(cast.manager);
    const shown = await browser.get(view);
    expect(shown.text).toContain(`action="${app.baseUrl}${view}/merge"`);
    expect(shown.text).not.toContain('class="decision"');
    const stored = async () => ({
      page: (await cast.manager.client.get(path)).body as { title: string; content: string; version: number },
      status: (await app.em().findOneOrFail(MergeRequest, { toNote: note.id }, { refresh: true })).status,
    });
    return { path, view, browser, fields: hiddenFields(shown.text), stored };
  }

  it('merges the request as it was shown when nothing changed since', async () => {
    const { view, browser, fields, stored } = await proposed('seen-same');
    const merged = await browser.post(`${view}/merge`, { csrf_token: fields.csrf_token!, seen: fields.seen! });
    expect([merged.status, merged.location]).toEqual([303, `${app.baseUrl}${view}`]);
    expect(await stored()).toEqual({ page: expect.objectContaining({ title: 'Rota', content: '<p>Alice, Bob.</p>', version: 2 }), status: 'merged' });
  });

  for (const [change, page] of [['its text', { content: '<p>Alice, Bob, Mallory.</p>' }], ['only its title', { title: 'Rota (new)' }]] as const) {
    it(`refuses the merge when the app changed ${change} right after the view was loaded (the same second): nothing merged`, async () => {
      const { path, view, browser, fields, stored } = await proposed(`seen-${change.length}`);
      const again = await agent.put(path, { json: { page: { ...page, base_version: 1 } } });
      expect(again.status, again.text).toBe(200);
      const answer = await browser.post(`${view}/merge`, { csrf_token: fields.csrf_token!, seen: fields.seen! });
      expect(answer.status).toBe(409);
      expect(answer.text).toContain('This request changed since you loaded it');
      expect(hiddenFields(answer.text).seen).not.toBe(fields.seen);
      expect(await stored()).toEqual({ page: expect.objectContaining({ title: 'Rota', content: '<p>Alice.</p>', version: 1 }), status: 'opened' });
      // the view shown again merges what it shows now
      const now = hiddenFields(answer.text);
      expect((await browser.post(`${view}/merge`, { csrf_token: now.csrf_token!, seen: now.seen! })).status).toBe(303);
      expect((await stored()).page).toMatchObject({ title: 'title' in page ? page.title : 'Rota', content: 'content' in page ? page.content : '<p>Alice, Bob.</p>' });
    });
  }

  it('refuses the merge when the fork\'s owner wrote the page again through the API after the view was loaded', async () => {
    const s = await forkedRunbook(app, cast);
    const request = await s.request([await s.editFork(s.forkDeploy, '<h1>Deploy</h1>\n<p>Run it from a tagged release.</p>\n')]);
    const view = `/forms/${s.note.slug}/requests/${request.index}`;
    const browser = await signIn(cast.manager);
    const fields = hiddenFields((await browser.get(view)).text);
    await s.editFork(s.forkDeploy, '<h1>Deploy</h1>\n<p>Run it from any commit.</p>\n');
    expect((await browser.post(`${view}/merge`, { csrf_token: fields.csrf_token!, seen: fields.seen! })).status).toBe(409);
    expect(await contentOfPage(app, s.deploy.id)).toContain('clean checkout');
    expect((await app.em().findOneOrFail(MergeRequest, { id: request.id }, { refresh: true })).status).toBe('opened');
  });
});
