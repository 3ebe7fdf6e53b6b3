// The views by keyboard and without JavaScript, in Chromium (issue 43): at a phone's width a page's long <pre> scrolls
// sideways inside the page, and so does the one in a request's review; each is reached with Tab, shows where the
// focus is, and scrolls with the arrow keys (axe's scrollable-region-focusable, run by `check` at 390 px too). With
// JavaScript off, a manager keeps the original's text in one conflicting region and types their own into the other's
// text box without touching its choice: the merge writes the typed text, and the stored version holds it.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makePage } from '../support/factories.ts';
import { forkNote, latestVersionOf } from '../support/forks.ts';
import { givePassword } from '../support/oauth.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import { check, launchChromium, PHONE, signIn } from './views-browser.ts';

// a command line far wider than a phone: the <pre> keeps it on one line
const COMMAND = `make build CONFIGURATION=release TARGETS="linux-amd64 linux-arm64 darwin-arm64 windows-amd64" JOBS=8 VERBOSE=1 OUTPUT=dist/release/${'x'.repeat(60)}`;
const BUILD = `<h1>Build</h1>\n<p>Build it from a clean checkout.</p>\n<p>The command:</p>\n<pre>${COMMAND}</pre>\n<p>Then check the dashboard.</p>\n`;
const TYPED = '<p>Then check the graphs and the status page.</p>';

let app: TestApp;
let browser: Browser;
let cast: Scenario;
let password: string;
const s = {} as { page: { id: number; html_url: string }; requestUrl: string };

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'keys', usernames: { manager: 'kmona', member: 'kmilo', outsider: 'kotto', reader: 'krita' } });
  password = await givePassword(app, cast.manager.user, 'a keyboard password');
  const created = await cast.manager.client.post('/api/v1/notes', { json: { note: { title: 'Builds', slug: 'builds', team: 'keys' } } });
  expect(created.status, created.text).toBe(200);
  const note = await app.em().findOneOrFail(Note, { id: created.body.id });
  s.page = await makePage(app, note, cast.member, { title: 'Build', content: BUILD });
  // the fork and the original both change the first and the last paragraph: two conflicting regions, the <pre> as it was
  const fork = await forkNote(app, note, cast.outsider);
  const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork.id, s.page.id]);
  const edit = await cast.outsider.client.put(`/api/v1/kotto/${fork.id}/${copy!.id}`, { json: { page: { content: BUILD.replace('clean checkout', 'tagged release').replace('the dashboard', 'the status page') } } });
  expect(edit.status, edit.text).toBe(200);
  const request = await cast.outsider.client.post(`/api/v1/kotto/${fork.id}/requests`, { json: { page_versions: [await latestVersionOf(app, copy!.id)] } });
  expect(request.status, request.text).toBe(200);
  s.requestUrl = request.body.html_url;
  const upstream = await cast.member.client.put(`/api/v1/keys/builds/${s.page.id}`, { json: { page: { content: BUILD.replace('clean checkout', 'fresh clone').replace('the dashboard', 'the graphs') } } });
  expect(upstream.status, upstream.text).toBe(200);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** Tabs from the top of the page to `selector` (at most 60 stops) and answers whether the focus got there. */
async function tabTo(page: Page, selector: string): Promise<boolean> {
  await page.locator('body').focus();
  for (let stop = 0; stop < 60; stop += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((wanted) => document.activeElement?.matches(wanted) ?? false, selector)) return true;
  }
  return false;
}

/** At a phone's width: `selector` is wider than it shows, reached by Tab, marked while focused, scrolled by the arrow keys. */
async function scrollsByKeyboard(page: Page, selector: string): Promise<void> {
  await page.setViewportSize(PHONE);
  const region = page.locator(selector).first();
  const size = await region.evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth }));
  expect(size.scroll, `${selector} is wider than it shows`).toBeGreaterThan(size.client);
  expect(await tabTo(page, selector), `Tab reaches ${selector}`).toBe(true);
  expect(await region.evaluate((element) => getComputedStyle(element).outlineStyle)).not.toBe('none');
  for (let press = 0; press < 5; press += 1) await page.keyboard.press('ArrowRight');
  // Chromium scrolls smoothly: the scroll is an animation that a loaded machine runs late, so it is waited for
  await expect.poll(() => region.evaluate((element) => element.scrollLeft), { message: `${selector} scrolled by the arrow keys`, timeout: 5_000 }).toBeGreaterThan(0);
  await page.setViewportSize({ width: 1280, height: 720 });
}

describe('by keyboard and without JavaScript', () => {
  it('a long <pre> on a page and in a request\'s review is reached by Tab and scrolls by keyboard at a phone\'s width', async () => {
    const context = await browser.newContext();
    const page = await signIn(context, s.page.html_url, 'kmona', password);
    expect(await page.locator('article .content pre').innerText()).toBe(COMMAND);
    await check(context, page, 'keyboard-page');
    await scrollsByKeyboard(page, 'article .content pre');
    // the stored page is as it was written: the focus stop is the view's, not the content's
    const stored = await cast.member.client.get(`/api/v1/keys/builds/${s.page.id}`);
    expect(stored.body.content).not.toContain('tabindex');

    await page.goto(s.requestUrl);
    expect(await page.locator('fieldset.decision').count()).toBe(2);
    expect(await page.locator('.request-page .rendered-diff pre').innerText()).toBe(COMMAND);
    await check(context, page, 'keyboard-request');
    await scrollsByKeyboard(page, '.request-page .rendered-diff pre');
    await context.close();
  }, 60_000);

  it('without JavaScript, a region whose text box the manager typed in merges the typed text; the region left alone keeps the original', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await signIn(context, s.requestUrl, 'kmona', password);
    const decisions = page.locator('fieldset.decision');
    // the first region as the form comes (the original's text chosen); the second: typed in, its choice left alone
    expect(await decisions.nth(0).locator('input[value=ours]').isChecked()).toBe(true);
    expect(await decisions.nth(1).locator('input[value=ours]').isChecked()).toBe(true);
    await decisions.nth(1).locator('textarea').fill(TYPED);
    await Promise.all([page.waitForURL(s.requestUrl), page.click('button:text("Merge")')]);
    expect(await page.locator('[data-state]').first().innerText()).toBe('Merged');
    await page.goto(s.page.html_url);
    const merged = await page.locator('article .content').innerText();
    expect(merged).toContain('Build it from a fresh clone.');
    expect(merged).toContain('Then check the graphs and the status page.');
    const version = await cast.member.client.get(`/api/v1/keys/builds/${s.page.id}/histories/3`);
    expect(version.status, version.text).toBe(200);
    expect(version.body.content).toBe(BUILD.replace('clean checkout', 'fresh clone').replace('<p>Then check the dashboard.</p>\n', TYPED));
    await context.close();
  }, 60_000);
});
