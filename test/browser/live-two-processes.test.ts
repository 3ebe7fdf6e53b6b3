// One page edited live in two browsers, each on a server process of its own (REDIS_URL): two `node src/server.ts`
// processes on one scratch PostgreSQL database share the page's live document through Hocuspocus's Redis extension
// and the Redis server scripts/run-tests.sh starts for the postgres pass (TEST_REDIS_URL). Browser 1 signs in on
// process A, browser 2 on process B (each process has its own port, so its own cookie; the session lives in the
// database). Both type at once in different paragraphs and in the same one, and each sees the other's text; the
// saved page, read through either process, holds every text once; a write through A's API shows in both browsers,
// their typing kept, and is merged once, not once per process. A process stopped (SIGTERM) while its browser typed:
// the other browser's typing is still saved, by the other process.
// PostgreSQL pass only (PGlite belongs to one process), and only with a Redis: skipped otherwise, saying why.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { setPassword } from '../../src/modules/auth/passwords.ts';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { Membership, Team } from '../../src/modules/teams/team.entity.ts';
import type { User } from '../../src/modules/users/user.entity.ts';
import { createUser } from '../../src/modules/users/users.service.ts';
import { ApiClient } from '../support/client.ts';
import { createScratchDatabaseUrl, databaseKind } from '../support/database.ts';
import { projectRoot as root, startService, stopServerProcess, type ServiceProcess } from '../support/processes.ts';
import { launchChromium, signIn } from './views-browser.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const skipped = databaseKind !== 'postgres'
  ? 'PostgreSQL pass only: PGlite belongs to one process'
  : !redisUrl ? 'no Redis: TEST_REDIS_URL is unset (scripts/run-tests.sh starts one for the postgres pass; is redis-server installed?)' : '';
if (databaseKind === 'postgres' && !redisUrl) console.warn(`NOTICE: test/browser/live-two-processes.test.ts skipped: ${skipped}`);

const PASSWORD = { mona: 'a password of mona', milo: 'a password of milo' };
const PARAGRAPHS = ['Pack the laptop.', 'Book the train.', 'Meet the team.', 'Water the plants.'];
const BY_A = ' Typed by Mona on A.';
const BY_B = ' Typed by Milo on B.';
const SAME_A = ' Mona was here too.';
const SAME_B = 'Milo first: ';
const BY_API = 'Water the plants, written through the API of A.';
const LATER_A = ' Then Mona again.';
const LATER_B = ' Then Milo again.';
const SAVE_PAUSE_MS = 1_500;

type Server = ServiceProcess & { name: string };

async function startServer(name: string, databaseUrl: string, dataDir: string): Promise<Server> {
  const server = await startService(databaseUrl, dataDir, {
    REDIS_URL: redisUrl,
    // saved 1.5 s after typing pauses (not 2: the test waits for saves), which leaves time to see that each browser
    // had the other's typing before it was saved: through Redis, not through a save heard on the change feed
    LIVE_SAVE_PAUSE_MS: String(SAVE_PAUSE_MS),
    LIVE_SAVE_MAX_MS: '4000',
  });
  return Object.assign(server, { name });
}

/** SIGTERM and the exit code; null when it had to be killed after 20 s (then `hung` says so). */
async function stopWithin(server: Server | undefined, ms = 20_000): Promise<{ code: number | null; hung: boolean }> {
  if (!server) return { code: null, hung: false };
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    server.child.kill('SIGKILL');
  }, ms);
  const code = await stopServerProcess(server);
  clearTimeout(timer);
  return { code, hung };
}

/** Each browser's page errors and Content-Security-Policy complaints, which the tests expect none of. */
const complaints: string[] = [];

async function openEditor(browser: Browser, server: Server, login: keyof typeof PASSWORD, pagePath: string): Promise<Page> {
  const context: BrowserContext = await browser.newContext();
  context.on('page', (page) => {
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) complaints.push(`${login}: ${message.text()}`);
    });
    page.on('pageerror', (error) => complaints.push(`${login}: ${error.message}`));
  });
  const page = await signIn(context, `${server.baseUrl}${pagePath}/edit`, login, PASSWORD[login]);
  await editorReady(page);
  return page;
}

/** The editor shown and taking typing. */
async function editorReady(page: Page): Promise<void> {
  await page.locator('#live-editor .ProseMirror[contenteditable="true"]').waitFor({ state: 'visible', timeout: 15_000 });
  await expect.poll(() => status(page), { timeout: 15_000 }).toContain('saved automatically');
}

const status = (page: Page) => page.locator('#live-status').innerText();
/** The editor's paragraphs as text, without the other people's carets (their name labels sit inside the text). */
const paragraphs = (page: Page) => page.locator('#live-editor .ProseMirror p').evaluateAll((nodes) => nodes.map((node) => {
  const copy = node.cloneNode(true) as Element;
  for (const caret of copy.querySelectorAll('.collaboration-carets__caret')) caret.remove();
  return copy.textContent ?? '';
}));
const times = (text: string, part: string) => text.split(part).length - 1;
const html = (parts: string[]) => parts.map((part) => `<p>${part}</p>`).join('');

/** Types `text` at the start or the end of the editor's paragraph `index` (0 is the first), key by key. */
async function typeAt(page: Page, index: number, where: 'Home' | 'End', text: string, delay = 15): Promise<void> {
  await page.locator('#live-editor .ProseMirror p').nth(index).click();
  await page.keyboard.press(where);
  await page.keyboard.type(text, { delay });
}

describe.skipIf(skipped !== '')(`one page edited in two browsers on two server processes sharing it through Redis${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabaseUrl>>;
  let dataDir: string;
  let database: Database;
  let a: Server | undefined;
  let b: Server | undefined;
  let browsers: Browser[] = [];
  let viaA: ApiClient;
  let viaB: ApiClient;
  let pages = 0;

  /** A page of its own in a note of its own, made through A: its path as in its address. */
  async function freshPage(content: string): Promise<string> {
    pages += 1;
    const slug = `trips-${pages}`;
    const note = await viaA.post('/api/v1/notes', { form: { 'note[title]': `Trips ${pages}`, 'note[team]': 'voyagers', 'note[slug]': slug } });
    expect(note.status, note.text).toBe(200);
    const page = await viaA.post(`/api/v1/voyagers/${slug}/pages`, { json: { page: { title: `Before leaving ${pages}`, content } } });
    expect(page.status, page.text).toBe(200);
    return `/voyagers/${slug}/${page.body.id}`;
  }

  const read = async (client: ApiClient, pagePath: string) => {
    const answer = await client.get(`/api/v1${pagePath}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body as { content: string; version: number };
  };

  beforeAll(async () => {
    // the bundle, as make test builds it: only when it is missing or older than what it is made from
    execFileSync(process.execPath, [path.join(root, 'scripts', 'build-editor.ts'), '--if-stale'], { stdio: 'pipe' });
    scratch = await createScratchDatabaseUrl();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-live-two-'));
    // one after the other: the first migrates the fresh database
    a = await startServer('A', scratch!.url, dataDir);
    b = await startServer('B', scratch!.url, dataDir);
    database = await openDatabase({ databaseUrl: scratch!.url });
    const em = database.orm.em.fork();
    const made: Record<string, User> = {};
    for (const username of ['mona', 'milo'] as const) {
      made[username] = await createUser(em, { username, name: `${username} Name`, lang: 'en' });
      await setPassword(em, made[username]!, PASSWORD[username]);
    }
    const team = em.create(Team, { name: 'voyagers', isDefault: false, plan: 'free', fullname: null, url: null, description: null });
    em.create(Membership, { team, user: made.mona!.id, role: 'manager' });
    em.create(Membership, { team, user: made.milo!.id, role: 'member' });
    await em.flush();
    const { secret } = await issueToken(em, made.mona!, { scope: 'write' });
    viaA = new ApiClient(a.baseUrl, secret);
    viaB = new ApiClient(b.baseUrl, secret);
    // an operation's first answer from a process takes a second or two (its request and response validators are
    // compiled on first use): the reads are made once here, not in the timed check of (a)
    const warm = await freshPage('<p>Warm.</p>');
    for (const client of [viaA, viaB]) await read(client, warm);
    // two browsers: browser 1 talks to A only, browser 2 to B only
    browsers = [await launchChromium(), await launchChromium()];
  }, 120_000);

  afterEach(({ task }) => {
    if (task.result?.state !== 'fail') return;
    for (const server of [a, b]) if (server) console.log(`---- output of process ${server.name} (${server.baseUrl}) ----\n${server.output}`);
  });

  afterAll(async () => {
    for (const browser of browsers) await browser.close();
    await Promise.all([stopWithin(a), stopWithin(b)]);
    await database?.close();
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('both type at once, in different paragraphs and in the same one; each sees the other; the save holds each text once; an API write through A shows in both', async () => {
    const pagePath = await freshPage(html(PARAGRAPHS));
    const mona = await openEditor(browsers[0]!, a!, 'mona', pagePath);
    const milo = await openEditor(browsers[1]!, b!, 'milo', pagePath);
    expect(new URL(mona.url()).origin).toBe(a!.baseUrl);
    expect(new URL(milo.url()).origin).toBe(b!.baseUrl);

    // (a) at once, in different paragraphs: each sees the other's text at once, before either process saved it
    const created = await read(viaA, pagePath);
    await Promise.all([typeAt(mona, 0, 'End', BY_A), typeAt(milo, 1, 'End', BY_B)]);
    const typed = Date.now();
    const both = [`${PARAGRAPHS[0]}${BY_A}`, `${PARAGRAPHS[1]}${BY_B}`, ...PARAGRAPHS.slice(2)];
    for (const page of [mona, milo]) await expect.poll(() => paragraphs(page), { timeout: 5_000, interval: 25 }).toEqual(both);
    const seenAfter = Date.now() - typed;
    expect(seenAfter, 'ms until each saw the other\'s typing').toBeLessThan(SAVE_PAUSE_MS - 500);
    const unsaved = await read(viaB, pagePath);
    expect({ content: unsaved.content, version: unsaved.version }, `not saved yet, ${Date.now() - typed} ms after the typing`)
      .toEqual({ content: created.content, version: created.version });

    // (b) at once, in the same paragraph: Milo at its start, Mona at its end
    await Promise.all([typeAt(mona, 2, 'End', SAME_A), typeAt(milo, 2, 'Home', SAME_B)]);
    const afterTyping = [`${PARAGRAPHS[0]}${BY_A}`, `${PARAGRAPHS[1]}${BY_B}`, `${SAME_B}${PARAGRAPHS[2]}${SAME_A}`, PARAGRAPHS[3]!];
    for (const page of [mona, milo]) await expect.poll(() => paragraphs(page), { timeout: 5_000 }).toEqual(afterTyping);

    // (c) the save, read through either process: every text once, no paragraph twice
    await expect.poll(async () => (await read(viaA, pagePath)).content, { timeout: 10_000, interval: 250 }).toBe(html(afterTyping));
    const saved = await read(viaB, pagePath);
    expect(saved.content).toBe(html(afterTyping));
    expect(saved.version).toBeGreaterThan(1);
    for (const text of [BY_A, BY_B, SAME_A, SAME_B, ...PARAGRAPHS]) expect(times(saved.content, text), text).toBe(1);

    // (d) a write through A's API over the version the editors stand on: merged into both, once (each process hears
    // it on the change feed, and only one may merge it into the shared document), their typing kept
    const withApi = [...afterTyping.slice(0, 3), BY_API];
    const put = await viaA.put(`/api/v1${pagePath}`, { json: { page: { content: html(withApi), base_version: saved.version } } });
    expect(put.status, put.text).toBe(200);
    for (const page of [mona, milo]) await expect.poll(() => paragraphs(page), { timeout: 5_000 }).toEqual(withApi);
    // nothing the editors or the processes did since is saved over it, nor saved again
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    for (const page of [mona, milo]) {
      expect(await paragraphs(page)).toEqual(withApi);
      expect(await status(page)).toContain('saved automatically');
    }
    for (const client of [viaA, viaB]) expect(await read(client, pagePath)).toEqual(expect.objectContaining({ content: html(withApi), version: saved.version + 1 }));

    // and typing goes on, on both, into the merged document
    await Promise.all([typeAt(mona, 0, 'End', LATER_A), typeAt(milo, 1, 'End', LATER_B)]);
    const last = [`${withApi[0]}${LATER_A}`, `${withApi[1]}${LATER_B}`, ...withApi.slice(2)];
    for (const page of [mona, milo]) await expect.poll(() => paragraphs(page), { timeout: 5_000 }).toEqual(last);
    await expect.poll(async () => (await read(viaB, pagePath)).content, { timeout: 10_000, interval: 250 }).toBe(html(last));
    expect((await read(viaA, pagePath)).content).toBe(html(last));
    // who is on the page reaches across processes too (the awareness goes through Redis, as the typing does: without
    // it each browser would still see the other's text, once saved and merged by its own process, but never its caret)
    for (const page of [mona, milo]) {
      await expect.poll(async () => (await page.locator('#live-presence li').allInnerTexts()).sort(), { timeout: 5_000 })
        .toEqual(page === mona ? ['milo Name', 'mona Name (you)'] : ['milo Name (you)', 'mona Name']);
    }
    expect(await mona.locator('.collaboration-carets__label').allInnerTexts()).toEqual(['milo Name']);
    expect(await milo.locator('.collaboration-carets__label').allInnerTexts()).toEqual(['mona Name']);
    expect(complaints).toEqual([]);
  }, 120_000);

  it('a process stopped (SIGTERM) while its browser typed: the other browser goes on, and what it types is saved by the other process', async () => {
    const start = ['Mona writes here.', 'Milo writes here.'];
    const pagePath = await freshPage(html(start));
    const mona = await openEditor(browsers[0]!, a!, 'mona', pagePath);
    const milo = await openEditor(browsers[1]!, b!, 'milo', pagePath);
    const FIRST = ' Seen by both.';
    const CUT = ' Typed while A stops, key by key.';
    const THEN = ' Milo goes on after A stopped.';

    await typeAt(mona, 0, 'End', FIRST);
    await expect.poll(() => paragraphs(milo), { timeout: 5_000 }).toEqual([`${start[0]}${FIRST}`, start[1]]);

    // A gets SIGTERM while Mona is typing into it
    const typing = typeAt(mona, 0, 'End', CUT, 40);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopped = await stopWithin(a);
    await typing;
    expect(stopped, `process A on SIGTERM:\n${a!.output}`).toEqual({ code: 0, hung: false });
    await expect.poll(() => status(mona), { timeout: 10_000 }).toContain('Offline');

    // Milo, on B, goes on: B saves it, with what of Mona's typing reached B before A stopped, once
    await typeAt(milo, 1, 'End', THEN);
    await expect.poll(async () => (await read(viaB, pagePath)).content, { timeout: 10_000, interval: 250 }).toContain(`${start[1]}${THEN}`);
    const saved = (await read(viaB, pagePath)).content;
    const shape = new RegExp(`^<p>${escape(`${start[0]}${FIRST}`)}(.*)</p><p>${escape(`${start[1]}${THEN}`)}</p>$`).exec(saved);
    expect(shape, saved).not.toBeNull();
    expect(CUT.startsWith(shape![1]!), `what of "${CUT}" was saved: "${shape![1]}"`).toBe(true);
    expect(await status(milo)).toContain('saved automatically');
    // what Milo sees is what B saved
    expect(html(await paragraphs(milo))).toBe(saved);
    expect(complaints).toEqual([]);
  }, 120_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
