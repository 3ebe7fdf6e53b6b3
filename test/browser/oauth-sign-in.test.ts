// A real browser through the OAuth pages: headless Chromium (Debian's, installed by scripts/run-tests.sh where
// missing) opens /oauth/authorize, signs in on the sign-in page, allows on the consent page and lands on the app's
// redirect URI with a code, which then buys a token. No JavaScript runs on the pages (the CSP forbids it). The
// screenshots are kept in test-artifacts/oauth/ (gitignored) for a person to look at.
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { makeUser } from '../support/factories.ts';
import { authorizePath, givePassword, makeClient, pkcePair, tokenRequest } from '../support/oauth.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// the flags this machine needs: no sandbox as root, and no background connections the closed network would refuse
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const artifacts = path.resolve(import.meta.dirname, '..', '..', 'test-artifacts', 'oauth');
const database = process.env.TEST_DATABASE ?? 'pglite';

let app: TestApp;
let browser: Browser;
let callback: Server;
let callbackUrl: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: run the tests through scripts/run-tests.sh (make test), which installs it, or apt-get install chromium`);
  }
  mkdirSync(artifacts, { recursive: true });
  app = await startTestApp();
  // the app's side: a page at its redirect URI
  callback = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>App</title><h1>Back in the app</h1>'));
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/auth/notes/callback`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (callback ? callback.close(resolve) : resolve(undefined)));
  await app?.close();
});

describe('the sign-in and consent pages in a real browser', () => {
  it('sign in, allow, and land on the redirect URI with a code that buys a token', async () => {
    const user = await makeUser(app, 'browsing');
    const password = await givePassword(app, user.user, 'a browser password');
    const client = await makeClient(app, { name: 'Browser Test App', confidential: false, redirectUris: [callbackUrl] });
    const { verifier, challenge } = pkcePair();
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => violations.push(message.text()));

    await page.goto(app.baseUrl + authorizePath({ response_type: 'code', client_id: client.clientId, redirect_uri: callbackUrl, state: 'browser-state', scope: 'read write', code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(await page.locator('h1').textContent()).toBe('Sign in');
    await page.screenshot({ path: path.join(artifacts, `${database}-1-sign-in.png`), fullPage: true });

    await page.fill('#login', 'browsing');
    await page.fill('#password', password);
    await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]')]);
    expect(await page.locator('h1').textContent()).toBe('Authorize Browser Test App');
    await page.screenshot({ path: path.join(artifacts, `${database}-2-consent.png`), fullPage: true });

    await Promise.all([page.waitForURL((url) => url.toString().startsWith(callbackUrl)), page.click('button[value=allow]')]);
    await page.screenshot({ path: path.join(artifacts, `${database}-3-back-in-the-app.png`), fullPage: true });
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe('browser-state');
    const code = landed.searchParams.get('code');
    expect(code).toBeTruthy();
    expect(violations.filter((text) => /Content Security Policy|Refused/i.test(text))).toEqual([]);

    const token = await tokenRequest(app, { grant_type: 'authorization_code', code: code!, redirect_uri: callbackUrl, client_id: client.clientId, code_verifier: verifier });
    expect(token.status, token.text).toBe(200);
    expect((await new ApiClient(app.baseUrl, token.body.access_token).get('/api/v1/me')).body.username).toBe('browsing');
    await context.close();
  });
});
