// Writing without script in a real browser (headless Chromium): the views carry no script but the edit view's live
// editor, which this context never loads (its file is refused, as a browser without JavaScript never runs it), so
// this is the walk of a browser without JavaScript, and its form is the editor (live-editor.test.ts drives the
// editor); axe needs script to run in the page, which is why JavaScript itself stays on. A member creates a note and a
// page, edits it (a stale save merged; a conflict shown region by region and decided with "Take mine"), moves it,
// restores a version and deletes a page. Each form's view is held to the views' standards (views-browser.ts `check`:
// valid HTML, 0 axe violations wide and at a phone's width); what is stored is read back through the API.
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { givePassword } from '../support/oauth.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import { EDITOR_SCRIPT_PATH } from '../../src/modules/web/layout.ts';
import { axeViolations, check, launchChromium, signIn } from './views-browser.ts';

let app: TestApp;
let browser: Browser;
let cast: Scenario;
let context: BrowserContext;

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'scribes', usernames: { manager: 'smona', member: 'smilo', outsider: 'sotto', reader: 'srita' } });
  await givePassword(app, cast.member.user, 'a member password');
  browser = await launchChromium();
  context = await browser.newContext();
  await context.route(`**${EDITOR_SCRIPT_PATH}`, (route) => route.abort('blockedbyclient'));
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await app?.close();
});

const api = (path: string) => cast.manager.client.get(`/api/v1/scribes/handbook${path}`);

describe('writing in the browser without script', () => {
  it('creates a note and pages, edits with a stale save merged and a conflict decided, moves, restores and deletes', async () => {
    const page = await signIn(context, `${app.baseUrl}/teams/scribes`, 'smilo', 'a member password');
    await Promise.all([page.waitForURL(/\/notes\/new$/), page.click('a[href$="/notes/new"]')]);
    await check(context, page, 'new-note');
    await page.fill('#title', 'Handbook');
    await page.fill('#slug', 'handbook');
    await Promise.all([page.waitForURL(`${app.baseUrl}/scribes/handbook`), page.click('button[type=submit].primary')]);

    await Promise.all([page.waitForURL(/\/pages\/new$/), page.click('a[href$="/pages/new"]')]);
    await check(context, page, 'new-page');
    await page.fill('#title', 'Onboarding');
    await page.fill('#page-content', '<p>Get a laptop.</p>\n<p>Get an account.</p>\n<p>Meet the team.</p>');
    await Promise.all([page.waitForURL(/\/scribes\/handbook\/\d+$/), page.click('button[type=submit].primary')]);
    const pageId = Number(page.url().split('/').pop());
    expect((await api(`/${pageId}`)).body).toMatchObject({ title: 'Onboarding', content: '<p>Get a laptop.</p>\n<p>Get an account.</p>\n<p>Meet the team.</p>', version: 1 });

    // a stale save: the member's edit merged with a write made through the API after the editor was opened
    await Promise.all([page.waitForURL(/\/edit$/), page.click('a[href$="/edit"]')]);
    await check(context, page, 'edit-page');
    const through = (content: string) => cast.manager.client.put(`/api/v1/scribes/handbook/${pageId}`, { json: { page: { content } } });
    expect((await through('<p>Get a laptop.</p>\n<p>Get an account.</p>\n<p>Meet the whole team.</p>')).status).toBe(200);
    await page.fill('#page-content', '<p>Get a laptop from IT.</p>\n<p>Get an account.</p>\n<p>Meet the team.</p>');
    await Promise.all([page.waitForURL(`${app.baseUrl}/scribes/handbook/${pageId}`), page.click('button[type=submit].primary')]);
    expect((await api(`/${pageId}`)).body).toMatchObject({ content: '<p>Get a laptop from IT.</p>\n<p>Get an account.</p>\n<p>Meet the whole team.</p>', version: 3 });
    expect(await page.locator('main').innerText()).toContain('Get a laptop from IT.');

    // a conflict: the same paragraph changed through the API meanwhile; shown region by region, decided "Take mine"
    await Promise.all([page.waitForURL(/\/edit$/), page.click('a[href$="/edit"]')]);
    expect((await through('<p>Get a laptop from IT.</p>\n<p>Get an SSO account.</p>\n<p>Meet the whole team.</p>')).status).toBe(200);
    await page.fill('#page-content', '<p>Get a laptop from IT.</p>\n<p>Get a VPN account.</p>\n<p>Meet the whole team.</p>');
    await page.click('button[type=submit].primary');
    await page.waitForSelector('.conflict');
    expect(await page.locator('[role=alert]').innerText()).toContain('version 4');
    // the conflict is the answer to the POST (409): axe on it as shown (check would load the editor again)
    expect(await axeViolations(page), 'edit conflict accessibility').toEqual([]);
    expect((await api(`/${pageId}`)).body.version).toBe(4);
    await page.check('input[name="r[0]"][value="theirs"]');
    await Promise.all([page.waitForURL(`${app.baseUrl}/scribes/handbook/${pageId}`), page.click('button[type=submit].primary')]);
    expect((await api(`/${pageId}`)).body).toMatchObject({ content: '<p>Get a laptop from IT.</p>\n<p>Get a VPN account.</p>\n<p>Meet the whole team.</p>', version: 5 });

    // a second page, moved under the first
    await page.goto(`${app.baseUrl}/scribes/handbook/pages/new`);
    await page.fill('#title', 'Laptops');
    await Promise.all([page.waitForURL(/\/scribes\/handbook\/\d+$/), page.click('button[type=submit].primary')]);
    const laptops = Number(page.url().split('/').pop());
    await page.goto(`${app.baseUrl}/scribes/handbook/${laptops}/edit`);
    await page.selectOption('#parent', String(pageId));
    await Promise.all([page.waitForURL(`${app.baseUrl}/scribes/handbook/${laptops}`), page.click('form[action$="/move"] button')]);
    expect((await api(`/${laptops}`)).body.parent).toMatchObject({ id: pageId });

    // version 1 restored, from its view
    await page.goto(`${app.baseUrl}/scribes/handbook/${pageId}/histories/1`);
    await check(context, page, 'version-restore');
    await Promise.all([page.waitForURL(`${app.baseUrl}/scribes/handbook/${pageId}`), page.click('form[action$="/restore"] button')]);
    expect((await api(`/${pageId}`)).body).toMatchObject({ content: '<p>Get a laptop.</p>\n<p>Get an account.</p>\n<p>Meet the team.</p>', version: 6 });

    // deleted after ticking the confirmation
    await page.goto(`${app.baseUrl}/scribes/handbook/${laptops}/edit`);
    await page.check('input[name=confirm]');
    await Promise.all([page.waitForURL(`${app.baseUrl}/scribes/handbook`), page.click('form[action$="/delete"] button')]);
    expect((await api(`/${laptops}`)).status).toBe(404);
  }, 180_000);
});
