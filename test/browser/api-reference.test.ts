// The API reference (docs/index.html, `make docs`) as the server serves it at /docs, in headless Chromium (as
// web-views.test.ts drives it): opening it, following a link to an operation, showing its code samples and folding
// the sidebar (which shows the other Redocly logo) make no request to any host but the server's; requests elsewhere
// are recorded and refused, so nothing leaves the machine even when the test fails. The operation's samples are
// those scripts/code-samples.ts made from the document. The time until the first operation's heading is visible is
// printed for a person to read (docs/README.md), never asserted: timings depend on the machine's load.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeSamples, type OpenApiDocument } from '../../scripts/lib/code-samples.ts';
import { loadOpenApiDocument, openApiDocumentPath } from '../../src/http/openapi.ts';
import { docsBundlePath, docsPath } from '../../src/modules/system/system.routes.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const FIRST_OPERATION = { link: '#/notes/listnotes', heading: "List the notes of the caller's teams", operationId: 'listNotes' };

let app: TestApp;
let browser: Browser;
/** Every request the page made to another host than the server's (refused). */
const elsewhere: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run the tests through scripts/run-tests.sh (make test), which installs it, or apt-get install chromium`);
  if (!existsSync(docsPath) || !existsSync(docsBundlePath)) throw new Error('docs/index.html or docs/redoc.standalone.js is not built: run `make docs` (make test builds it)');
  if (statSync(docsPath).mtimeMs < statSync(openApiDocumentPath).mtimeMs) throw new Error('docs/index.html is older than generated/openapi.json: run `make docs`');
  app = await startTestApp();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

async function open(target: string): Promise<{ page: Page; started: number }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  context.setDefaultTimeout(30_000);
  const origin = new URL(app.baseUrl).origin;
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    elsewhere.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  const started = Date.now();
  await page.goto(`${app.baseUrl}${target}`, { waitUntil: 'commit' });
  return { page, started };
}

/** Until the heading's top is inside the window: rendered and scrolled to, not only in the DOM. */
async function headingVisible(page: Page, name: string): Promise<void> {
  await page.waitForFunction((text) => {
    const heading = [...document.querySelectorAll('h1, h2')].find((element) => element.textContent === text);
    const top = heading?.getBoundingClientRect().top;
    return top !== undefined && top >= 0 && top < window.innerHeight;
  }, name, { polling: 'raf' });
}

describe('the API reference at /docs', () => {
  it('is built from the document with the code samples', () => {
    const html = readFileSync(docsPath, 'utf8');
    const [listNotes] = codeSamples(loadOpenApiDocument() as unknown as OpenApiDocument).filter(({ operationId }) => operationId === FIRST_OPERATION.operationId);
    // the definition is inlined as JSON, where a sample's text is a JSON string
    expect(html).toContain(JSON.stringify(listNotes!.samples[0]!.source).replace(/</g, '\\u003c'));
  });

  it('imports Redoc\'s bundle as a file of its own, at an address that names its bytes, cached for good', async () => {
    const html = readFileSync(docsPath, 'utf8');
    const address = /import \{ hydrate \} from '(\/docs\/redoc\.standalone\.js\?v=[0-9a-f]{16})'/.exec(html)?.[1];
    expect(address).toBeDefined();
    expect(html).toContain(`<link rel="modulepreload" href="${address}">`);
    expect(html).not.toContain('export{RedocStandalone,hydrate,init}');
    const answer = await fetch(`${app.baseUrl}${address}`);
    expect([answer.status, answer.headers.get('content-type'), answer.headers.get('cache-control')]).toEqual([200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    expect(await answer.text()).toBe(readFileSync(docsBundlePath, 'utf8'));
    // without the version, it is not cached for good (a stale copy would not match the page)
    expect((await fetch(`${app.baseUrl}/docs/redoc.standalone.js`)).headers.get('cache-control')).toBe('public, max-age=0');
  });

  it('renders an operation with its samples and loads nothing from another host', async () => {
    const { page, started } = await open(`/docs${FIRST_OPERATION.link}`);
    await headingVisible(page, FIRST_OPERATION.heading);
    const firstOperation = Date.now() - started;
    await expect.poll(() => page.locator('pre, code').filter({ hasText: 'curl "http://localhost:3000/api/v1/notes"' }).count()).toBeGreaterThan(0);
    const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1);
    console.log(`API reference: first paint ${Math.round(paint)} ms, the first operation's heading visible ${firstOperation} ms after navigating to /docs${FIRST_OPERATION.link}`);

    // the TypeScript sample, in the panel's language menu
    await page.getByRole('button', { name: /^curl/ }).first().click();
    await page.getByText('TypeScript', { exact: true }).first().click();
    await expect.poll(() => page.locator('pre, code').filter({ hasText: 'await listNotes({' }).count()).toBeGreaterThan(0);

    // the folded sidebar shows the small logo
    await page.getByRole('button', { name: 'Hide sidebar' }).click();
    await page.waitForLoadState('networkidle');
    await page.context().close();

    const { page: home } = await open('/docs');
    await home.getByRole('heading', { name: 'Authentication' }).first().waitFor();
    await home.waitForLoadState('networkidle');
    await home.context().close();
    expect(elsewhere).toEqual([]);
  }, 90_000);
});
