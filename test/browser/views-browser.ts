// What the browser tests of the views share (web-views.test.ts, web-keyboard.test.ts): Debian's Chromium through
// playwright-core, signing in through the sign-in page, and `check`, which holds a view to the views' standards: the
// HTML as the server sent it is valid (html-validate), weighs under 50 KB and carries no inline script or style (the
// one script a view may name is the live editor's file, layout.ts EDITOR_SCRIPT_PATH, which the edit view loads);
// axe-core finds 0 violations both at the window's width and at a phone's (390 px), where nothing scrolls sideways
// either. Screenshots: test-artifacts/screenshots/<database>-<n>-<view>.png (gitignored), for a person to look at.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { HtmlValidate } from 'html-validate';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { EDITOR_SCRIPT_PATH } from '../../src/modules/web/layout.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const artifacts = path.resolve(import.meta.dirname, '..', '..', 'test-artifacts', 'screenshots');
const database = process.env.TEST_DATABASE ?? 'pglite';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
// SRI is asked of cross-origin resources only: the one stylesheet is this site's own
const validator = new HtmlValidate({ extends: ['html-validate:standard', 'html-validate:document'], rules: { 'require-sri': ['error', { target: 'crossorigin' }] } });
/** The one script tag a view may carry: the live editor's file, of this site (the edit view of a page it keeps whole). */
const EDITOR_SCRIPT = `<script src="${EDITOR_SCRIPT_PATH}" defer></script>`;
export const asBrowser = { headers: { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } };
export const PHONE = { width: 390, height: 844 };

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run the tests through scripts/run-tests.sh (make test), which installs it, or apt-get install chromium`);
  mkdirSync(artifacts, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/** Signs in through the sign-in page the anonymous browser is sent to, and answers the page it comes back to. */
export async function signIn(context: BrowserContext, start: string, login: string, secret: string, heading = 'Sign in'): Promise<Page> {
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(start);
  expect(new URL(page.url()).pathname).toBe('/oauth/sign-in');
  expect(await page.locator('h1').textContent()).toBe(heading);
  await page.fill('#login', login);
  await page.fill('#password', secret);
  await Promise.all([page.waitForURL(start), page.click('button[type=submit]')]);
  return page;
}

/** axe-core's violations on the page as it is shown now, as `rule (nodes): targets`. */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    type Result = { violations: { id: string; nodes: { target: string[] }[] }[] };
    const result = await (window as unknown as { axe: { run(): Promise<Result> } }).axe.run();
    return result.violations.map((violation) => `${violation.id} (${violation.nodes.length}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  });
}

let shot = 0;

/** The view now shown: valid HTML (as the server sent it), under 50 KB, 0 axe violations wide and at a phone's width. */
export async function check(context: BrowserContext, page: Page, name: string, status = 200): Promise<string> {
  const answer = await context.request.get(page.url(), { maxRedirects: 0, ...asBrowser });
  expect(answer.status(), page.url()).toBe(status);
  const text = await answer.text();
  expect(Buffer.byteLength(text), `${name} weighs`).toBeLessThan(50 * 1024);
  expect(text.replace(EDITOR_SCRIPT, '')).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
  const report = await validator.validateString(text);
  expect(report.results.flatMap((result) => result.messages.map((message) => `${message.ruleId}: ${message.message}`)), `${name} HTML`).toEqual([]);
  expect(await axeViolations(page), `${name} accessibility`).toEqual([]);
  shot += 1;
  const file = (suffix: string) => path.join(artifacts, `${database}-${String(shot).padStart(2, '0')}-${name}${suffix}.png`);
  await page.screenshot({ path: file(''), fullPage: true });
  // a phone's width: nothing makes the page scroll sideways, and what scrolls inside it is reached by keyboard
  const size = page.viewportSize();
  await page.setViewportSize(PHONE);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} at 390 px scrolls sideways by`).toBeLessThanOrEqual(0);
  expect(await axeViolations(page), `${name} accessibility at 390 px`).toEqual([]);
  await page.screenshot({ path: file('-390'), fullPage: true });
  if (size) await page.setViewportSize(size);
  return text;
}
