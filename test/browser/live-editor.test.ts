// The live editor in a real browser (headless Chromium; editor/editor.client.ts, bundled as /web/editor.js): two
// members of a team, each in a browser of their own, open the same page's edit view; both editors open on the live
// document, both type at once in different paragraphs and each sees the other's text; the pause after typing saves
// the page as a version through the API (both texts stored); a write through the API to a third paragraph shows in
// both editors while their text stays. Offline, what is typed is kept and sent once back: into the same document
// when others kept it open, into the server's new one (once, not twice) when it dropped the document meanwhile, and
// into the form (whose save merges it) when the page also changed elsewhere. Refused for good, the editor stops
// taking typing and says why. The view with the editor shown has 0 axe violations, wide and at a phone's
// width, runs under its own Content-Security-Policy (script and connections of this site only) without a single
// violation of it; a page the editor cannot keep whole opens in the form alone and says why, without the script.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage } from '../support/factories.ts';
import { givePassword } from '../support/oauth.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import { asBrowser, axeViolations, launchChromium, PHONE, signIn } from './views-browser.ts';

const artifacts = path.resolve(import.meta.dirname, '..', '..', 'test-artifacts', 'screenshots');
const database = process.env.TEST_DATABASE ?? 'pglite';
const FIRST = 'Pack the laptop.';
const SECOND = 'Book the train.';
const THIRD = 'Meet the team.';
const BY_A = ' Typed by Mona.';
const BY_B = ' Typed by Milo.';
const BY_API = 'Meet the whole team, written through the API.';
// both in the third paragraph at once: Mona at its start, Milo at its end
const START_A = 'Mona first: ';
const END_B = ' Milo last.';

let app: TestApp;
let browser: Browser;
let cast: Scenario;
const contexts: BrowserContext[] = [];
/** What each browser's console said about the Content-Security-Policy (a refused script, style or connection), and errors the page threw. */
const violations: string[] = [];
let pageId: number;
let notePath: string;

beforeAll(async () => {
  // the bundle, as make test builds it: only when it is missing or older than what it is made from
  execFileSync(process.execPath, [path.join(import.meta.dirname, '..', '..', 'scripts', 'build-editor.ts'), '--if-stale'], { stdio: 'pipe' });
  app = await startTestApp();
  cast = await makeScenario(app, { team: 'voyagers', usernames: { manager: 'lmona', member: 'lmilo', outsider: 'lotto', reader: 'lrita' } });
  await givePassword(app, cast.manager.user, 'a manager password');
  await givePassword(app, cast.member.user, 'a member password');
  const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Trips', slug: 'trips' });
  notePath = '/voyagers/trips';
  pageId = (await makePage(app, note, cast.manager, { title: 'Before leaving', content: `<p>${FIRST}</p><p>${SECOND}</p><p>${THIRD}</p>` })).id;
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await app?.close();
});

async function openEditor(login: string, secret: string): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  // heard from the page's first moment: the editor's script runs as soon as the view is parsed
  context.on('page', (page) => {
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(`${login}: ${message.text()}`);
    });
    page.on('pageerror', (error) => violations.push(`${login}: ${error.message}`));
  });
  return signIn(context, `${app.baseUrl}${notePath}/${pageId}/edit`, login, secret);
}

/** The editor shown and taking typing, the form folded away under it. */
async function editorReady(page: Page): Promise<void> {
  await page.locator('#live-editor .ProseMirror[contenteditable="true"]').waitFor({ state: 'visible', timeout: 10_000 });
  await expect.poll(() => page.locator('#live-status').innerText(), { timeout: 10_000 }).toContain('saved automatically');
  expect(await page.locator('#page-content').isVisible()).toBe(false);
  expect(await page.locator('details.live-html > summary').innerText()).toBe('Edit the HTML (and the title) instead');
}

/** The editor's text as a reader sees it, without the other people's named cursors (which sit inside the text). */
const editorText = (page: Page) => page.locator('#live-editor .ProseMirror').evaluate((element) => {
  const copy = element.cloneNode(true) as HTMLElement;
  for (const caret of copy.querySelectorAll('.collaboration-carets__caret')) caret.remove();
  document.body.append(copy);
  const text = copy.innerText;
  copy.remove();
  return text;
});

/** Types `text` at the end of the editor's paragraph `index` (0 is the first), key by key. */
async function typeAtEnd(page: Page, index: number, text: string): Promise<void> {
  await page.locator('#live-editor .ProseMirror p').nth(index).click();
  await page.keyboard.press('End');
  await page.keyboard.type(text, { delay: 15 });
}

async function typeAtStart(page: Page, index: number, text: string): Promise<void> {
  await page.locator('#live-editor .ProseMirror p').nth(index).click();
  await page.keyboard.press('Home');
  await page.keyboard.type(text, { delay: 15 });
}

const api = (suffix = '') => cast.manager.client.get(`/api/v1${notePath}/${pageId}${suffix}`);

async function stored(pagePath: string): Promise<{ content: string; version: number }> {
  const answer = await cast.manager.client.get(`/api/v1${pagePath}`);
  expect(answer.status).toBe(200);
  return answer.body as { content: string; version: number };
}

let pages = 0;
/** A page of its own in a note of its own: `path` as in its address, `name` its live document's. */
async function freshPage(content: string): Promise<{ path: string; name: string }> {
  pages += 1;
  const note = await makeNote(app, cast.team, cast.manager.user, { title: `Alone ${pages}`, slug: `alone-${pages}` });
  const page = await makePage(app, note, cast.manager, { title: `Alone ${pages}`, content });
  return { path: `/voyagers/alone-${pages}/${page.id}`, name: `voyagers/alone-${pages}/${page.id}` };
}

/**
 * A browser whose socket to /live goes through Playwright: passed on to the server while online; `offline()` closes
 * it (not with one of the server's final codes) and refuses every new one until `online()`.
 */
async function cuttable(login: string, secret: string, pagePath: string): Promise<{ page: Page; offline(): Promise<void>; online(): Promise<void> }> {
  const context = await browser.newContext();
  contexts.push(context);
  let online = true;
  const sockets: WebSocketRoute[] = [];
  await context.routeWebSocket(/\/live$/, (socket) => {
    if (!online) return socket.close({ code: 4000, reason: 'offline' });
    socket.connectToServer();
    sockets.push(socket);
  });
  const page = await signIn(context, `${app.baseUrl}${pagePath}/edit`, login, secret);
  const status = () => page.locator('#live-status').innerText();
  return {
    page,
    async offline() {
      online = false;
      for (const socket of sockets.splice(0)) await socket.close({ code: 4000, reason: 'offline' });
      await expect.poll(status, { timeout: 5_000 }).toBe('Offline: your changes are kept and sent when the connection is back.');
    },
    async online() {
      online = true;
      // the provider tries again with a growing pause (at most a few seconds after a short cut)
      await expect.poll(status, { timeout: 40_000, interval: 250 }).not.toContain('Offline');
    },
  };
}

describe('the live editor in the browser', () => {
  it('two members type at once, see each other, the pause saves both, and an API write shows in both', async () => {
    const mona = await openEditor('lmona', 'a manager password');
    const milo = await openEditor('lmilo', 'a member password');
    await Promise.all([editorReady(mona), editorReady(milo)]);

    // the edit view's policy: this site's script and connections, nothing else loosened; other views keep theirs
    const headers = (await mona.context().request.get(mona.url(), asBrowser)).headers();
    expect(headers['content-security-policy']).toBe("default-src 'none'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; script-src 'self'; connect-src 'self'");
    expect((await mona.context().request.get(`${app.baseUrl}${notePath}/${pageId}`, asBrowser)).headers()['content-security-policy']).not.toContain('script-src');

    // who is on the page, as each sees it
    for (const page of [mona, milo]) {
      await expect.poll(async () => (await page.locator('#live-presence li').allInnerTexts()).sort(), { timeout: 5_000 })
        .toEqual(page === mona ? ['lmilo Name', 'lmona Name (you)'] : ['lmilo Name (you)', 'lmona Name']);
    }

    // accessibility with the editor shown, wide and at a phone's width
    expect(await axeViolations(mona), 'live editor accessibility').toEqual([]);
    await mona.setViewportSize(PHONE);
    expect(await axeViolations(mona), 'live editor accessibility at 390 px').toEqual([]);
    expect(await mona.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await mona.setViewportSize({ width: 1280, height: 720 });

    await mona.screenshot({ path: path.join(artifacts, `${database}-live-editor.png`), fullPage: true });

    // both at once, in different paragraphs and then in the same one; each sees the other's text
    await Promise.all([
      typeAtEnd(mona, 0, BY_A).then(() => typeAtStart(mona, 2, START_A)),
      typeAtEnd(milo, 1, BY_B).then(() => typeAtEnd(milo, 2, END_B)),
    ]);
    for (const page of [mona, milo]) {
      await expect.poll(() => editorText(page), { timeout: 5_000 }).toContain(`${FIRST}${BY_A}`);
      await expect.poll(() => editorText(page), { timeout: 5_000 }).toContain(`${SECOND}${BY_B}`);
      await expect.poll(() => editorText(page), { timeout: 5_000 }).toContain(`${START_A}${THIRD}${END_B}`);
    }

    // the pause after typing (2 s) saves a version holding both, named for both
    await expect.poll(async () => (await api()).body.content as string, { timeout: 10_000, interval: 250 })
      .toBe(`<p>${FIRST}${BY_A}</p><p>${SECOND}${BY_B}</p><p>${START_A}${THIRD}${END_B}</p>`);
    const saved = (await api()).body as { content: string; version: number };
    expect(saved.version).toBeGreaterThan(1);
    const history = (await api('/histories')).body as { index: number; user: { username: string }; co_authors: { username: string }[] }[];
    const newest = history.find((version) => version.index === saved.version)!;
    expect([newest.user.username, ...newest.co_authors.map((user) => user.username)].sort()).toEqual(['lmilo', 'lmona']);

    // a write through the API over the version the editors stand on: merged into both open editors
    const put = await cast.manager.client.put(`/api/v1${notePath}/${pageId}`, { json: { page: { content: saved.content.replace(THIRD, BY_API), base_version: saved.version } } });
    expect(put.status, put.text).toBe(200);
    for (const page of [mona, milo]) {
      await expect.poll(() => editorText(page), { timeout: 5_000 }).toContain(BY_API);
      const text = await editorText(page);
      expect(text).toContain(`${FIRST}${BY_A}`);
      expect(text).toContain(`${SECOND}${BY_B}`);
      expect(text).not.toContain(THIRD);
      expect(await page.locator('#live-status').innerText()).toContain('saved automatically');
    }
    // nothing the editors did since is saved over it
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await api()).body).toMatchObject({ content: `<p>${FIRST}${BY_A}</p><p>${SECOND}${BY_B}</p><p>${START_A}${BY_API}${END_B}</p>`, version: saved.version + 1 });

    await milo.screenshot({ path: path.join(artifacts, `${database}-live-editor-merged.png`), fullPage: true });
    expect(violations).toEqual([]);
  }, 120_000);

  it('offline for ten seconds while others are on the page: what is typed is kept and sent when the connection is back', async () => {
    // mona and milo of the first test still have the page open: the server keeps its document meanwhile
    const milo = await cuttable('lmilo', 'a member password', `${notePath}/${pageId}`);
    await editorReady(milo.page);
    const before = (await api()).body as { content: string; version: number };
    await milo.offline();
    await typeAtEnd(milo.page, 1, ' Written offline.');
    // ten seconds offline: past the pause and the longest wait between saves, nothing of it reached the server
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    expect((await api()).body.version).toBe(before.version);
    await milo.online();
    await expect.poll(async () => (await api()).body.content as string, { timeout: 10_000, interval: 250 })
      .toBe(before.content.replace(`${SECOND}${BY_B}`, `${SECOND}${BY_B} Written offline.`));
  }, 90_000);

  it('offline alone on the page: the server drops its document, and what is typed goes to the new one once, not twice', async () => {
    const { path: pagePath, name } = await freshPage('<p>Lone first.</p><p>Lone second.</p>');
    const mona = await cuttable('lmona', 'a manager password', pagePath);
    await editorReady(mona.page);
    await mona.offline();
    await expect.poll(() => app.live()!.hocuspocus.documents.has(name), { timeout: 5_000 }).toBe(false);
    await typeAtEnd(mona.page, 0, ' Typed alone offline.');
    await mona.online();
    await expect.poll(async () => (await stored(pagePath)).content, { timeout: 10_000, interval: 250 }).toBe('<p>Lone first. Typed alone offline.</p><p>Lone second.</p>');
    expect(await editorText(mona.page)).toBe('Lone first. Typed alone offline.\n\nLone second.');
    // typing goes on in the new document
    await typeAtEnd(mona.page, 1, ' And after.');
    await expect.poll(async () => (await stored(pagePath)).content, { timeout: 10_000, interval: 250 }).toBe('<p>Lone first. Typed alone offline.</p><p>Lone second. And after.</p>');
  }, 90_000);

  it('offline alone while the page changed elsewhere: back online, the typing and the change are merged in the editor and saved', async () => {
    const { path: pagePath, name } = await freshPage('<p>Uno.</p><p>Dos.</p><p>Tres.</p>');
    const milo = await cuttable('lmilo', 'a member password', pagePath);
    await editorReady(milo.page);
    await milo.offline();
    await expect.poll(() => app.live()!.hocuspocus.documents.has(name), { timeout: 5_000 }).toBe(false);
    await typeAtEnd(milo.page, 0, ' Offline words.');
    const now = await stored(pagePath);
    const put = await cast.manager.client.put(`/api/v1${pagePath}`, { json: { page: { content: now.content.replace('Tres.', 'Tres, from the API.'), base_version: now.version } } });
    expect(put.status, put.text).toBe(200);
    // the server builds the document from the state it kept, so this browser's copy meets the Yjs items it knew
    await milo.online();
    await expect.poll(() => editorText(milo.page), { timeout: 15_000, interval: 250 }).toBe('Uno. Offline words.\n\nDos.\n\nTres, from the API.');
    await expect.poll(async () => (await stored(pagePath)).content, { timeout: 10_000, interval: 250 }).toBe('<p>Uno. Offline words.</p><p>Dos.</p><p>Tres, from the API.</p>');
  }, 90_000);

  it('offline alone while the page changed elsewhere and the server lost the document\'s state: the typed text goes to the form, whose save merges it', async () => {
    const { path: pagePath, name } = await freshPage('<p>One.</p><p>Two.</p><p>Three.</p><p>Four.</p>');
    const milo = await cuttable('lmilo', 'a member password', pagePath);
    await editorReady(milo.page);
    await milo.offline();
    await expect.poll(() => app.live()!.hocuspocus.documents.has(name), { timeout: 5_000 }).toBe(false);
    // the kept Yjs state gone (too large to keep, or deleted by an operator): the next document is built from the HTML
    await app.em().execute('delete from live_documents where page_id = ?', [Number(name.split('/')[2])]);
    await typeAtEnd(milo.page, 0, ' Offline words.');
    const now = await stored(pagePath);
    const put = await cast.manager.client.put(`/api/v1${pagePath}`, { json: { page: { content: now.content.replace('Four.', 'Four, from the API.'), base_version: now.version } } });
    expect(put.status, put.text).toBe(200);
    await milo.online();
    await expect.poll(() => milo.page.locator('#live-status').innerText(), { timeout: 40_000, interval: 250 }).toContain('your text is in the form below');
    expect(await editorText(milo.page)).toBe('One.\n\nTwo.\n\nThree.\n\nFour, from the API.');
    expect(await milo.page.locator('details.live-html').getAttribute('open')).not.toBeNull();
    expect(await milo.page.locator('#page-content').inputValue()).toBe('<p>One. Offline words.</p><p>Two.</p><p>Three.</p><p>Four.</p>');
    await Promise.all([milo.page.waitForURL(`${app.baseUrl}${pagePath}`), milo.page.click('#page-edit button[type=submit].primary')]);
    expect((await stored(pagePath)).content).toBe('<p>One. Offline words.</p><p>Two.</p><p>Three.</p><p>Four, from the API.</p>');
  }, 90_000);

  it('pasted HTML: its script, event handlers and javascript: links never reach a version; its text and safe links do', async () => {
    const { path: pagePath } = await freshPage('<p>Paste below.</p>');
    const context = await browser.newContext();
    contexts.push(context);
    const mona = await signIn(context, `${app.baseUrl}${pagePath}/edit`, 'lmona', 'a manager password');
    await editorReady(mona);
    await mona.locator('#live-editor .ProseMirror p').first().click();
    await mona.keyboard.press('End');
    // a paste as the clipboard would deliver it from another site's page
    await mona.locator('#live-editor .ProseMirror').evaluate((element) => {
      const data = new DataTransfer();
      data.setData('text/html', '<p>Pasted <a href="javascript:alert(1)" onclick="alert(2)">bad link</a> and <a href="https://example.com/ok">good link</a>'
        + '<img src="x" onerror="alert(3)"><script>alert(4)</script><span onmouseover="alert(5)">hover</span></p>');
      data.setData('text/plain', 'Pasted bad link and good link hover');
      element.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    });
    await expect.poll(async () => (await stored(pagePath)).content, { timeout: 10_000, interval: 250 }).toContain('good link');
    const saved = (await stored(pagePath)).content;
    expect(saved).toMatch(/<a [^>]*href="https:\/\/example.com\/ok"[^>]*>good link<\/a>/);
    expect(saved).toContain('bad link');
    expect(saved).toContain('hover');
    expect(saved).not.toMatch(/javascript:|onclick|onerror|onmouseover|<script|alert\(/);
    expect(violations).toEqual([]);
  }, 60_000);

  it('refused for good (the page deleted meanwhile): the editor stops taking typing and says why', async () => {
    const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Drafts', slug: 'drafts' });
    const draft = await makePage(app, note, cast.manager, { title: 'Soon gone', content: '<p>Gone soon.</p>' });
    const context = await browser.newContext();
    contexts.push(context);
    const mona = await signIn(context, `${app.baseUrl}/voyagers/drafts/${draft.id}/edit`, 'lmona', 'a manager password');
    await editorReady(mona);
    expect((await cast.manager.client.delete(`/api/v1/voyagers/drafts/${draft.id}`)).status).toBe(204);
    await expect.poll(() => mona.locator('#live-status').innerText(), { timeout: 10_000 }).toBe('The live editor is not available: the page was deleted');
    expect(await mona.locator('#live-editor .ProseMirror').getAttribute('contenteditable')).toBe('false');
    expect(await mona.locator('.live-toolbar button:not([disabled])').count()).toBe(0);
    expect(await mona.locator('#live-presence li').count()).toBe(0);
  });

  it('a page the editor would change opens in the form alone, saying why, without the script', async () => {
    const note = await makeNote(app, cast.team, cast.manager.user, { title: 'Marks', slug: 'marks' });
    const page = await makePage(app, note, cast.manager, { title: 'Inserted', content: '<p>Keep <ins>this</ins> mark.</p>' });
    const context = contexts[0]!;
    const answer = await context.request.get(`${app.baseUrl}/voyagers/marks/${page.id}/edit`, asBrowser);
    expect(answer.status()).toBe(200);
    expect(answer.headers()['content-security-policy']).not.toContain('script-src');
    const text = await answer.text();
    expect(text).not.toContain('<script');
    expect(text).not.toContain('id="live-editor"');
    expect(text).toContain('This page opens in the HTML text area: the editor cannot keep all of this page&#39;s HTML');
    expect(text).toContain('id="page-content"');
  });
});
