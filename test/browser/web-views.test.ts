// The browser views behind html_url in a real browser (headless Chromium through playwright-core, installed by
// scripts/run-tests.sh where missing, as for oauth-sign-in.test.ts): an anonymous browser is sent to the sign-in
// page and back; signed in, it walks user -> team -> note -> page -> history -> diff -> a request with a conflict,
// and sees the version, the issue, the activity and the notifications. Each view's HTML (as the server sent it)
// is held to the views' standards (views-browser.ts `check`: valid HTML under 50 KB, 0 axe violations wide and at a
// phone's width, where no view scrolls sideways; screenshots kept). An outsider gets the 404 page for a private note
// of another team, the same page as for a note that does not exist. The session cookie never authorizes /api/v1.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeIssue, makePage, makePageComment, makeUser, type Actor } from '../support/factories.ts';
import { forkNote } from '../support/forks.ts';
import { givePassword } from '../support/oauth.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { User } from '../../src/modules/users/user.entity.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import { asBrowser, check, launchChromium, signIn } from './views-browser.ts';

const DEPLOY = '<h1>Deploy</h1>\n<p>Run make deploy from a clean checkout.</p>\n<p>Then check the dashboard.</p>\n';

let app: TestApp;
let browser: Browser;
let cast: Scenario<'secret'>;
let manager: Actor;
let password: string;
const s = {} as { note: { slug: string }; deploy: { id: number; html_url: string }; forkPage: number; requestUrl: string; issueUrl: string; secretUrl: string };

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'crew', usernames: { manager: 'mona', member: 'milo', outsider: 'otto', reader: 'rita' }, notes: { secret: { isPrivate: true, title: 'Secret plans' } } });
  manager = cast.manager;
  password = await givePassword(app, manager.user, 'a browser password');
  await givePassword(app, cast.outsider.user, 'an outsider password');
  await givePassword(app, cast.member.user, 'a member password');
  await givePassword(app, cast.reader.user, 'a reader password');
  // a public note with a page tree, a comment, a second version, an issue, and a request from a fork that conflicts
  const note = await manager.client.post('/api/v1/notes', { json: { note: { title: 'Runbook', slug: 'runbook', team: 'crew', description: 'How we *ship*' } } });
  expect(note.status, note.text).toBe(200);
  s.note = note.body;
  const entity = await app.em().findOneOrFail(Note, { id: note.body.id });
  const deploy = await makePage(app, entity, cast.member, { title: 'Deploy', content: DEPLOY });
  s.deploy = deploy;
  await makePage(app, entity, cast.member, { title: 'Rollback', content: '<p>Undo the last deploy.</p>', parent: deploy.id });
  await makePageComment(deploy, cast.member, { comment: 'Should we tag first?', mentions: ['mona'] });
  s.issueUrl = (await makeIssue(app, entity, cast.member, { title: 'Document the rollback', description: 'Steps are <b>missing</b>', to_user: 'mona' })).html_url;
  const fork = await forkNote(app, entity, cast.outsider);
  const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, deploy.id]);
  s.forkPage = copy!.id;
  const edit = await cast.outsider.client.put(`/api/v1/otto/${fork.id}/${copy!.id}`, { json: { page: { content: DEPLOY.replace('clean checkout', 'tagged release').replace('the dashboard', 'the status page') } } });
  expect(edit.status, edit.text).toBe(200);
  const [version] = await app.em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [copy!.id]);
  const request = await cast.outsider.client.post(`/api/v1/otto/${fork.id}/requests`, { json: { page_versions: [version!.id] } });
  expect(request.status, request.text).toBe(200);
  s.requestUrl = request.body.html_url;
  const upstream = await cast.member.client.put(`/api/v1/crew/runbook/${deploy.id}`, { json: { page: { content: DEPLOY.replace('clean checkout', 'fresh clone').replace('the dashboard', 'the graphs') } } });
  expect(upstream.status, upstream.text).toBe(200);
  s.secretUrl = `${app.baseUrl}/crew/${cast.notes.secret.slug}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const main = (page: Page) => page.locator('main').innerText();

describe('the browser views', () => {
  it('sign in, then user -> team -> note -> page -> history -> diff -> request with a conflict, and the other views', async () => {
    const context = await browser.newContext();
    const csp: string[] = [];
    const page = await signIn(context, `${app.baseUrl}/users/mona`, 'mona', password);
    page.on('console', (message) => csp.push(message.text()));
    const cookie = (await context.cookies()).find((item) => item.name === 'notes_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false });

    // user: name, teams, notes, recent activity
    expect(await page.locator('h1').innerText()).toContain('mona Name');
    expect(await page.locator('main section, main .card').nth(1).innerText()).toContain('crew');
    expect(await main(page)).toContain('Runbook');
    await check(context, page, 'user');

    // team: managers and members, notes (the private one too: mona is its team's manager)
    await Promise.all([page.waitForURL(`${app.baseUrl}/teams/crew`), page.click('main a[href$="/teams/crew"]')]);
    const team = await main(page);
    expect(team).toContain('Managers');
    expect(team).toContain('milo Name');
    expect(team).toContain('Secret plans');
    await check(context, page, 'team');

    // note: description, the page tree (Rollback under Deploy), the counts
    await Promise.all([page.waitForURL(`${app.baseUrl}/crew/runbook`), page.click('main a[href$="/crew/runbook"]')]);
    expect(await page.locator('.content').first().innerHTML()).toContain('How we *ship*');
    expect(await page.locator('nav.tree li:has(> a:text("Deploy")) > ul > li > a').innerText()).toBe('Rollback');
    expect(await page.locator('[data-count=issues]').innerText()).toBe('1');
    expect(await page.locator('[data-count=requests]').innerText()).toBe('1');
    await check(context, page, 'note');

    // the note's issues and requests, from its counts
    await Promise.all([page.waitForURL(`${app.baseUrl}/crew/runbook/issues`), page.click('main a[href$="/crew/runbook/issues"]')]);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr a').first().innerText()).toBe('Document the rollback');
    await check(context, page, 'issues');
    await page.goto(`${app.baseUrl}/crew/runbook/requests`);
    expect(await page.locator('tbody tr [data-state]').innerText()).toBe('Open');
    await page.click('.tabs a:text("Merged")');
    expect(await main(page)).toContain('Nothing yet.');
    await check(context, page, 'requests');
    await page.goto(`${app.baseUrl}/crew/runbook`);

    // page: breadcrumbs, content (stored HTML, sanitized), children, comments
    await Promise.all([page.waitForURL(s.deploy.html_url), page.click('nav.tree a:text("Deploy")')]);
    expect(await page.locator('nav.crumbs li').allInnerTexts()).toEqual(['crew', 'Runbook', 'Deploy']);
    expect(await page.locator('nav.crumbs a').last().getAttribute('href')).toBe(`${app.baseUrl}/crew/runbook`);
    expect(await page.locator('article .content').innerText()).toContain('Run make deploy from a fresh clone.');
    expect(await main(page)).toContain('Rollback');
    expect(await page.locator('.comment').innerText()).toContain('Should we tag first?');
    await check(context, page, 'page');

    // a child page from the tree beside it: crumbs down its ancestors (each a link), the page marked in the tree
    await Promise.all([page.waitForURL(/\/crew\/runbook\/\d+$/), page.click('nav.tree a:text("Rollback")')]);
    expect(await page.locator('nav.crumbs li').allInnerTexts()).toEqual(['crew', 'Runbook', 'Deploy', 'Rollback']);
    expect(await page.locator('nav.crumbs a').last().getAttribute('href')).toBe(s.deploy.html_url);
    expect(await page.locator('nav.tree a[aria-current=page]').innerText()).toBe('Rollback');
    await check(context, page, 'page-child');
    // narrow, the tree is a menu that opens
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.locator('nav.tree a:text("Deploy")').isVisible()).toBe(false);
    await page.click('nav.tree summary');
    expect(await page.locator('nav.tree a:text("Deploy")').isVisible()).toBe(true);
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.goto(s.deploy.html_url);

    // history: two versions, newest first, with author and time
    await Promise.all([page.waitForURL(`${s.deploy.html_url}/histories`), page.click('main a:text("History")')]);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).innerText()).toMatch(/#2\s+Deploy\s+milo Name/);
    expect(await rows.nth(0).locator('time').getAttribute('datetime')).toMatch(/^\d{4}-/);
    await check(context, page, 'history');

    // diff: the change as the page reads, the changed words marked in place; the source line diff one click away
    await Promise.all([page.waitForURL(/\/histories\/diff\?a=\d+&b=\d+$/), page.click('tbody tr:first-child a:text("Changes from the version before")')]);
    expect(await page.locator('.rendered-diff del').allInnerTexts()).toEqual(['clean checkout', 'dashboard']);
    expect(await page.locator('.rendered-diff ins').allInnerTexts()).toEqual(['fresh clone', 'graphs']);
    expect(await page.locator('.rendered-diff h2').innerText()).toBe('Deploy');
    expect(await page.locator('.rendered-diff del').first().evaluate((element) => getComputedStyle(element).backgroundColor)).not.toBe('rgba(0, 0, 0, 0)');
    expect(await page.locator('.diff li.del strong').first().isVisible()).toBe(false);
    await page.click('details.source summary');
    expect(await page.locator('.diff li.del strong').first().innerText()).toBe('clean checkout');
    await check(context, page, 'diff');

    // a version
    await page.goto(`${s.deploy.html_url}/histories/1`);
    expect(await page.locator('h1').innerText()).toContain('#1');
    expect(await page.locator('article .content').innerText()).toContain('clean checkout');
    await check(context, page, 'version');
    // the second version shows its change from the first as the page reads
    await page.goto(`${s.deploy.html_url}/histories/2`);
    expect(await page.locator('.rendered-diff ins').first().innerText()).toBe('fresh clone');

    // the request: its page, its diff, not mergeable, the conflict region by region
    await page.goto(s.requestUrl);
    expect(await page.locator('h1').innerText()).toContain('request #1');
    expect(await page.locator('[data-state]').innerText()).toBe('Open');
    expect(await main(page)).toContain('Cannot be merged without a decision');
    const regions = page.locator('.conflict[data-kind=content] .regions section');
    expect(await regions.count()).toBe(6);
    expect(await regions.nth(0).innerText()).toContain('clean checkout');
    expect(await regions.nth(1).innerText()).toContain('fresh clone');
    expect(await regions.nth(2).innerText()).toContain('tagged release');
    expect(await page.locator('.request-page .rendered-diff ins').first().innerText()).toBe('tagged release');
    // mona manages the original: a decision for each region, and the merge
    expect(await page.locator('fieldset.decision').count()).toBe(2);
    expect(await page.locator('button:text("Merge")').count()).toBe(1);
    await check(context, page, 'request');

    // the issue, the activity log, the notifications (mona was mentioned and assigned)
    await page.goto(s.issueUrl);
    // the title once, then the number (the label "Issue #1 Document the rollback" would say the title twice)
    expect(await page.locator('h1').innerText()).toBe('Document the rollback #1');
    expect(await page.locator('article .content b').innerText()).toBe('missing');
    await check(context, page, 'issue');
    await Promise.all([page.waitForURL(`${app.baseUrl}/activity`), page.click('header a:text("Activity")')]);
    expect(await page.locator('ul.feed li').count()).toBeGreaterThan(2);
    await check(context, page, 'activity');
    await Promise.all([page.waitForURL(`${app.baseUrl}/notifications`), page.click('header a:text("Notifications")')]);
    expect(await main(page)).toContain('mention');
    expect(await main(page)).toContain('assign');
    await check(context, page, 'notifications');
    expect(csp.filter((text) => /Content Security Policy|Refused/i.test(text))).toEqual([]);

    // the cookie never authorizes the API
    const api = await context.request.get(`${app.baseUrl}/api/v1/me`);
    expect(api.status()).toBe(401);
    await context.close();
  }, 120_000);

  it('a member cannot merge; a reader comments with a mention; the manager decides region by region and merges', async () => {
    // milo is a member: the request without a form, and a forged merge answers 403
    const memberContext = await browser.newContext();
    const member = await signIn(memberContext, s.requestUrl, 'milo', 'a member password');
    expect(await member.locator('fieldset.decision').count()).toBe(0);
    expect(await member.locator('form[action$="/merge"]').count()).toBe(0);
    const csrf = await member.locator('header input[name=csrf_token]').getAttribute('value');
    const forged = await memberContext.request.post(`${s.requestUrl}/merge`, {
      form: { csrf_token: csrf!, seen: 'any', [`r[${s.forkPage}][0]`]: 'theirs', [`r[${s.forkPage}][1]`]: 'theirs' }, maxRedirects: 0, ...asBrowser,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain('Not allowed');
    await memberContext.close();

    // rita reads: she comments on Deploy, mentioning mona; mona's notification links back to the page
    const readerContext = await browser.newContext();
    const reader = await signIn(readerContext, s.deploy.html_url, 'rita', 'a reader password');
    await reader.fill('.comment-form textarea', '@mona the rollback step needs a link');
    await Promise.all([reader.waitForURL(/#comment-\d+$/), reader.click('.comment-form button')]);
    expect(await reader.locator('.comment').last().innerText()).toContain('the rollback step needs a link');
    // and on the request, the review's conversation: no decision for her, a comment form
    await reader.goto(s.requestUrl);
    expect(await reader.locator('fieldset.decision').count()).toBe(0);
    await reader.fill('.comment-form textarea', '@mona please keep the graphs link');
    await Promise.all([reader.waitForURL(/\/requests\/1#comment-\d+$/), reader.click('.comment-form button')]);
    expect(await reader.locator('.comment').last().innerText()).toContain('please keep the graphs link');
    await readerContext.close();

    const context = await browser.newContext();
    const page = await signIn(context, `${app.baseUrl}/notifications`, 'mona', password);
    const onRequest = page.locator('ul.feed li', { hasText: 'rita' }).filter({ has: page.locator(`a[href="${s.requestUrl}"]`) });
    expect(await onRequest.first().innerText()).toContain('mentioned you');
    const mention = page.locator('ul.feed li', { hasText: 'rita' }).filter({ has: page.locator(`a[href="${s.deploy.html_url}"]`) }).first();
    expect(await mention.innerText()).toContain('mentioned you');
    await Promise.all([page.waitForURL(s.deploy.html_url), mention.locator(`a[href="${s.deploy.html_url}"]`).click()]);

    // mona decides: the fork's text for the first region, her own for the second, then merges
    await page.goto(s.requestUrl);
    await page.locator('fieldset.decision').nth(0).locator('input[value=theirs]').check();
    await page.locator('fieldset.decision').nth(1).locator('input[value=edit]').check();
    await page.locator('fieldset.decision').nth(1).locator('textarea').fill('<p>Then check the graphs and the status page.</p>');
    expect(await page.locator('.comment').last().innerText()).toContain('please keep the graphs link');
    await check(context, page, 'request-decision');
    await Promise.all([page.waitForURL(s.requestUrl), page.click('button:text("Merge")')]);
    expect(await page.locator('[data-state]').first().innerText()).toBe('Merged');
    await page.goto(s.deploy.html_url);
    const merged = await page.locator('article .content').innerText();
    expect(merged).toContain('Run make deploy from a tagged release.');
    expect(merged).toContain('Then check the graphs and the status page.');
    await check(context, page, 'merged-page');
    // its history names the request the new version came from
    await page.goto(`${s.deploy.html_url}/histories`);
    expect(await page.locator('tbody tr').first().locator('a.badge').innerText()).toBe('merged from request #1');
    expect(await page.locator('tbody tr').first().locator('a.badge').getAttribute('href')).toBe(s.requestUrl);
    await context.close();
  }, 120_000);

  it('shows an outsider the 404 page for a private note of another team, the same as for no note at all', async () => {
    const context = await browser.newContext();
    const page = await signIn(context, `${app.baseUrl}/crew/runbook`, 'otto', 'an outsider password');
    expect(await page.locator('h1').innerText()).toContain('Runbook');
    const answer = await page.goto(s.secretUrl);
    expect(answer!.status()).toBe(404);
    expect(await page.locator('h1').innerText()).toBe('Not found');
    expect(await page.content()).not.toContain('Secret plans');
    const hidden = await check(context, page, 'not-found', 404);
    const none = await context.request.get(`${app.baseUrl}/crew/no-such-note`, asBrowser);
    expect(none.status()).toBe(404);
    expect((await none.text()).replace(/<title>.*<\/title>/, '')).toBe(hidden.replace(/<title>.*<\/title>/, ''));
    await context.close();
  });

  it('speaks the reader\'s language: a Japanese user, and Accept-Language before sign-in', async () => {
    await makeUser(app, 'jun', { lang: 'ja' });
    const jun = await app.em().findOneOrFail(User, { username: 'jun' });
    const secret = await givePassword(app, jun, 'a japanese password');
    const context = await browser.newContext({ locale: 'ja-JP' });
    // the sign-in page in the browser's language (Accept-Language: ja)
    const page = await signIn(context, `${app.baseUrl}/notifications`, 'jun', secret, 'サインイン');
    expect(await page.locator('html').getAttribute('lang')).toBe('ja');
    expect(await page.locator('h1').innerText()).toBe('通知');
    // a request in Japanese: its label, badges and the conflict's words, none of the API's identifiers
    await page.goto(s.requestUrl);
    expect(await page.locator('h1').innerText()).toMatch(/^リクエスト #1/);
    const words = await main(page);
    for (const identifier of ['update', 'diverged', 'conflicting', 'fork_only', 'delete_modify', 'Merged', 'Open']) expect(words).not.toContain(identifier);
    await check(context, page, 'request-ja');
    await page.goto(`${app.baseUrl}/activity`);
    expect(await main(page)).not.toMatch(/\b(add_user|new_note|create|update)\b/);
    await page.goto(`${app.baseUrl}/crew/${cast.notes.secret.slug}`);
    expect(await page.locator('h1').innerText()).toBe('見つかりません');
    await context.close();
  });
});
