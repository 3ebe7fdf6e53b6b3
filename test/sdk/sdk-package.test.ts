// The SDK as a stranger uses it (issue 22): `make sdk`'s tarball installed into a scratch folder with npm, and
// programs there that import it by its package name, run with node against a live server. Each helper is covered
// against the real service: createClient with an operation, typed errors (404, 409, a timeout, an abort), retries
// (a network error and a 503 before the real answer: GET retried, POST not), paginate over Link headers and over the
// page list's last_page, events() resuming after its connection is cut, verifyWebhook on a delivery the server
// signed, updatePageFrom (written, merged, conflict) and the OAuth loopback helper through the server's own sign-in
// and consent pages, its tokens then used by createClient.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/http/logger.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { WebhookWorker } from '../../src/modules/webhooks/webhooks.worker.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, type Actor } from '../support/factories.ts';
import { CookieBrowser, givePassword, makeClient } from '../support/oauth.ts';
import { freePort, projectRoot as root } from '../support/processes.ts';
import { makeScenario } from '../support/scenario.ts';

const run = promisify(execFile);
const nodeBin = path.join(root, 'node_modules', '.bin', 'node');
let app: TestApp;
let manager: Actor;
let member: Actor;
let scratch: string;
/** The programs not yet ended: one left behind by a failed test would hold the token's one stream for the next. */
const children = new Set<ChildProcess>();

/** Runs `source` (an ES module importing '@notes-service/sdk') in the scratch folder; its last line of output, parsed. */
async function program(source: string, input: Record<string, unknown> = {}, onLine?: (line: string) => void): Promise<any> {
  const file = path.join(scratch, `program-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  const child = spawn(nodeBin, [file], { cwd: scratch, env: { PATH: process.env.PATH, HOME: process.env.HOME, SDK_INPUT: JSON.stringify({ baseUrl: app.baseUrl, ...input }) } });
  children.add(child);
  child.on('close', () => children.delete(child));
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    if (onLine) for (const line of text.split('\n').filter(Boolean)) onLine(line);
  });
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, `${errors}\n${output}`).toBe(0);
  return JSON.parse(output.trim().split('\n').pop()!);
}

const PRELUDE = `import * as sdk from '@notes-service/sdk';
const input = JSON.parse(process.env.SDK_INPUT);
const client = sdk.createClient({ baseUrl: input.baseUrl, token: input.token, backoffMs: 5 });
const print = (value) => console.log(JSON.stringify(value));
`;

beforeAll(async () => {
  // one change stream per token, whose 429 says to retry after the heartbeat (1 s): the SDK meets a real 429
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '1', WEBHOOK_POLL_MS: '20', EVENTS_STREAMS_PER_TOKEN: '1', EVENTS_HEARTBEAT_SECONDS: '1' });
  ({ manager, member } = await makeScenario(app, { team: 'kit' }));
  // the package as `make sdk` builds it, installed as a stranger installs it (no registry needed: it depends on nothing)
  const built = await run(nodeBin, [path.join(root, 'scripts', 'build-sdk.ts')], { cwd: root, env: { ...process.env, PATH: `${path.join(root, 'node_modules', '.bin')}:${process.env.PATH}` } });
  const tarball = built.stdout.trim().split('\n').pop()!;
  scratch = mkdtempSync(path.join(os.tmpdir(), 'notes-sdk-'));
  writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'stranger', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: scratch, env: { ...process.env, PATH: `${path.join(root, 'node_modules', '.bin')}:${process.env.PATH}` } });
}, 180_000);

afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
});

afterAll(async () => {
  await app?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the SDK package', () => {
  it('is imported by its name and calls operations with the token; errors are NotesApiError with the problem code', async () => {
    const result = await program(`${PRELUDE}
const { data: me } = await sdk.getMe({ client });
const caught = async (promise) => promise.then(() => null, (error) => ({ name: error.name, isApiError: error instanceof sdk.NotesApiError, status: error.status, code: error.code, requestId: error.requestId, conflict: error.conflict ?? null }));
print({
  username: me.username,
  missing: await caught(sdk.getNote({ client, path: { team: 'kit', note: 'no-such-note' } })),
  taken: await caught(sdk.createTeam({ client, body: { team: { name: 'kit' } } })),
  anonymous: await caught(sdk.getMe({ client: sdk.createClient({ baseUrl: input.baseUrl }) })),
  // a server that never answers (the fetch keeps the process alive as a socket would; AbortSignal.timeout does not)
  timeout: await caught(sdk.listNotes({ client: sdk.createClient({ baseUrl: input.baseUrl, token: input.token, timeoutMs: 1, retries: 0, fetch: (request, init) => new Promise((resolve, reject) => { const alive = setTimeout(() => {}, 10000); init.signal.addEventListener('abort', () => { clearTimeout(alive); reject(init.signal.reason); }); }) }) })),
  aborted: await caught(sdk.listNotes({ client, signal: AbortSignal.abort() })),
});`, { token: manager.token });
    expect(result.username).toBe(manager.user.username);
    expect(result.missing).toMatchObject({ name: 'NotesApiError', isApiError: true, status: 404, code: 'not_found' });
    expect(result.missing.requestId).toMatch(/\S/);
    expect(result.taken).toMatchObject({ isApiError: true, status: 409, code: 'name_taken' });
    expect(result.anonymous).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(result.timeout).toMatchObject({ isApiError: true, status: 0, code: 'timeout' });
    expect(result.aborted).toMatchObject({ isApiError: false });
  });

  it('retries a GET after a network error and a 503, never a POST after a network error', async () => {
    const before = await app.em().count(Note, {});
    const result = await program(`${PRELUDE}
const seen = [];
// the first attempts fail before reaching the server (a cut connection, a proxy's 503), the next reach it
let failures = 0;
const flaky = (kinds) => (request, init) => {
  const kind = kinds[failures++];
  seen.push(request.method + ' ' + (kind ?? 'server'));
  if (kind === 'network') return Promise.reject(new TypeError('fetch failed'));
  if (kind === '503') return Promise.resolve(new Response('{}', { status: 503, headers: { 'Retry-After': '0' } }));
  return fetch(request, init);
};
const getter = sdk.createClient({ baseUrl: input.baseUrl, token: input.token, backoffMs: 5, fetch: flaky(['network', '503']) });
const { data: notes } = await sdk.listNotes({ client: getter });
failures = 0;
const poster = sdk.createClient({ baseUrl: input.baseUrl, token: input.token, backoffMs: 5, fetch: flaky(['network']) });
const posted = await sdk.createNote({ client: poster, body: { note: { title: 'Once', team: 'kit' } } }).then(() => 'created', (error) => error.code);
print({ seen, listed: Array.isArray(notes), posted });`, { token: manager.token });
    expect(result.seen).toEqual(['GET network', 'GET 503', 'GET server', 'POST network']);
    expect(result.listed).toBe(true);
    expect(result.posted).toBe('network_error');
    expect(await app.em().count(Note, {})).toBe(before);
  });

  it('paginates to the end over Link headers and over the page list\'s last_page', async () => {
    const note = await makeNote(app, 'kit', manager.user, { title: 'Paged', slug: 'paged' });
    for (let i = 0; i < 5; i += 1) await makePage(app, note, manager, { title: `Page ${i}`, content: `<p>${i}</p>` });
    for (let i = 0; i < 5; i += 1) expect((await manager.client.post('/api/v1/notes', { json: { note: { title: `Listed ${i}`, team: 'kit' } } })).status).toBe(200);
    const result = await program(`${PRELUDE}
const titles = [];
for await (const note of sdk.paginate(sdk.listTeamNotes, { client, path: { team: 'kit' }, query: { per_page: 2 } })) titles.push(note.title);
const pages = [];
for await (const page of sdk.paginate(sdk.listPages, { client, path: { team: 'kit', note: 'paged' }, query: { per_page: 2 } })) pages.push(page.title);
print({ titles, pages });`, { token: manager.token });
    const stored = await app.em().find(Note, { team: { name: 'kit' } });
    expect(result.titles).toHaveLength(stored.length);
    expect(new Set(result.titles)).toEqual(new Set(stored.map((n) => n.title)));
    expect(result.pages.sort()).toEqual(['Page 0', 'Page 1', 'Page 2', 'Page 3', 'Page 4']);
  });

  it('updatePageFrom writes on the version read: written, merged over another change, or the conflict', async () => {
    const note = await makeNote(app, 'kit', manager.user, { title: 'Merging', slug: 'merging' });
    const page = await makePage(app, note, manager, { title: 'Shared', content: '<p>one</p>\n<p>two</p>\n<p>three</p>' });
    const result = await program(`${PRELUDE}
const path = { team: 'kit', note: 'merging', page: input.page };
const { data: read } = await sdk.getPage({ client, path });
const first = await sdk.updatePageFrom(client, read, { content: '<p>ONE</p>\\n<p>two</p>\\n<p>three</p>' });
// written over the version read before the first write: the changes do not overlap, so they are merged
const second = await sdk.updatePageFrom(client, read, { content: '<p>one</p>\\n<p>two</p>\\n<p>THREE</p>' });
// overlapping the first write: a conflict, with the latest version
const third = await sdk.updatePageFrom(client, read, { content: '<p>uno</p>\\n<p>two</p>\\n<p>three</p>' });
print({ first: first.outcome, second: second.outcome, merged: second.page?.content, third: third.outcome, latest: third.conflict?.latest_version, code: third.error?.code });`, { token: manager.token, page: page.id });
    expect(result).toMatchObject({ first: 'written', second: 'merged', third: 'conflict', code: 'edit_conflict', latest: 3 });
    expect(result.merged).toBe('<p>ONE</p>\n<p>two</p>\n<p>THREE</p>');
  });

  it('events() streams the changes and resumes after its connection is cut, none missed and none twice', async () => {
    const note = await makeNote(app, 'kit', manager.user, { title: 'Streamed', slug: 'streamed' });
    const page = await makePage(app, note, manager, { title: 'Live', content: '<p>0</p>' });
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const running = program(`${PRELUDE}
// the first connection is cut after its second event: events() must reconnect with Last-Event-ID by itself
let connections = 0;
const cutting = (request, init) => fetch(request, init).then((response) => {
  connections += 1;
  // the server has taken the stream in before it answers: the test writes only then, so no change comes too early
  if (connections === 1) console.log('READY');
  if (connections > 1 || !response.body) return response;
  let events = 0;
  const reader = response.body.getReader();
  const body = new ReadableStream({ async pull(controller) {
    const { done, value } = await reader.read();
    if (done) return controller.close();
    controller.enqueue(value);
    events += (new TextDecoder().decode(value).match(/\\n\\n/g) ?? []).length;
    if (events >= 2) { reader.cancel(); controller.error(new TypeError('connection cut')); }
  } });
  return new Response(body, { status: response.status, headers: response.headers });
});
const streaming = sdk.createClient({ baseUrl: input.baseUrl, token: input.token, backoffMs: 5, fetch: cutting });
const got = [];
for await (const event of sdk.events(streaming, { note: 'kit/streamed', types: ['page.updated'] })) {
  got.push(event.page.version);
  if (got.length === 5) break;
}
print({ got, connections });`, { token: manager.token }, (line) => line === 'READY' && started());
    await ready;
    for (let v = 1; v <= 5; v += 1) {
      expect((await manager.client.put(`/api/v1/kit/streamed/${page.id}`, { json: { page: { content: `<p>${v}</p>` } } })).status).toBe(200);
      await app.settle();
    }
    const result = await running;
    expect(result.got).toEqual([2, 3, 4, 5, 6]); // the page was made at version 1
    expect(result.connections).toBeGreaterThanOrEqual(2);
  });

  it('waits out a 429 of the server as its Retry-After says, then goes on', async () => {
    const note = await makeNote(app, 'kit', manager.user, { title: 'Busy', slug: 'busy' });
    const page = await makePage(app, note, manager, { title: 'Busy', content: '<p>0</p>' });
    // the token's one stream, held by another program: the SDK's stream is refused with 429 until it closes
    const holder = new AbortController();
    const held = await fetch(`${app.baseUrl}/api/v1/events`, { headers: { Authorization: `Bearer ${manager.token}`, Accept: 'text/event-stream' }, signal: holder.signal });
    expect(held.status).toBe(200);
    let refused!: () => void;
    const wasRefused = new Promise<void>((resolve) => (refused = resolve));
    const running = program(`${PRELUDE}
const statuses = [];
const counting = (request, init) => fetch(request, init).then((response) => {
  statuses.push(response.status);
  if (response.status === 429) console.log('REFUSED ' + response.headers.get('retry-after'));
  return response;
});
const streaming = sdk.createClient({ baseUrl: input.baseUrl, token: input.token, backoffMs: 5, fetch: counting });
const started = Date.now();
for await (const event of sdk.events(streaming, { note: 'kit/busy' })) {
  print({ statuses, type: event.type, waited: Date.now() - started });
  break;
}`, { token: manager.token }, (line) => line.startsWith('REFUSED') && refused());
    await wasRefused;
    holder.abort();
    // the held stream is gone once the server sees it closed: write until the SDK's stream, admitted, shows a change
    let done = false;
    void running.finally(() => (done = true));
    for (let v = 1; !done && v < 50; v += 1) {
      await manager.client.put(`/api/v1/kit/busy/${page.id}`, { json: { page: { content: `<p>${v}</p>` } } });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const result = await running;
    expect(result.type).toBe('page.updated');
    expect(result.statuses[0]).toBe(429);
    expect(result.statuses.at(-1)).toBe(200);
    // Retry-After: 1 (s) was waited, not the backoff of 5 ms
    expect(result.waited).toBeGreaterThanOrEqual(900);
  });

  it('verifyWebhook accepts a delivery the server signed and refuses it altered or replayed', async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver: Server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const worker = new WebhookWorker(app.database.orm, app.config.webhooks, createLogger('silent'));
    try {
      const made = await manager.client.post('/api/v1/teams/kit/webhooks', { json: { webhook: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['note.created'] } } });
      expect(made.status, made.text).toBe(200);
      expect((await manager.client.post('/api/v1/notes', { json: { note: { title: 'Hooked', team: 'kit' } } })).status).toBe(200);
      for (let round = 0; round < 50 && received.length === 0; round += 1) {
        await app.settle();
        await worker.runOnce();
      }
      expect(received.length).toBeGreaterThan(0);
      const delivery = received[0]!;
      const result = await program(`${PRELUDE}
const check = (body, headers, options) => sdk.verifyWebhook(input.secret, headers, body, options).then((event) => event.type, (error) => error.name);
print({
  genuine: await check(input.body, input.headers),
  altered: await check(input.body.replace('"note.created"', '"note.deleted"'), input.headers),
  replayed: await check(input.body, input.headers, { now: new Date(Date.now() + 3600e3) }),
  unsigned: await check(input.body, { ...input.headers, 'webhook-signature': undefined }),
});`, { secret: made.body.secret, headers: delivery.headers, body: delivery.body });
      expect(result).toEqual({ genuine: 'note.created', altered: 'WebhookVerificationError', replayed: 'WebhookVerificationError', unsigned: 'WebhookVerificationError' });
    } finally {
      await worker.stop();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('authorizes a command-line app through a loopback redirect with PKCE, and uses its token', async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const { clientId } = await makeClient(app, { name: 'Kit CLI', redirectUris: [redirectUri] });
    const password = await givePassword(app, member.user);
    const browser = new CookieBrowser(app.baseUrl);
    const result = await program(`${PRELUDE}
const tokens = await sdk.authorizeWithLoopback({ baseUrl: input.baseUrl, clientId: input.clientId, redirectUri: input.redirectUri, scope: 'read',
  openBrowser: (url) => console.log('OPEN ' + url) });
const authorized = sdk.createClient({ baseUrl: input.baseUrl, token: sdk.refreshingToken(tokens, { baseUrl: input.baseUrl, clientId: input.clientId }) });
const { data: me } = await sdk.getMe({ client: authorized });
const write = await sdk.createNote({ client: authorized, body: { note: { title: 'Not allowed', team: 'kit' } } }).then(() => 'written', (error) => error.code);
print({ username: me.username, scope: tokens.scope, refreshable: typeof tokens.refresh_token, write });`, { clientId, redirectUri }, (line) => {
      if (!line.startsWith('OPEN ')) return;
      // the user's browser: sign in, allow, and follow the redirect to the app's loopback address
      void (async () => {
        const url = new URL(line.slice(5));
        const consent = await browser.signIn(`${url.pathname}${url.search}`, member.user.username, password);
        const decided = await browser.decide(consent, 'allow');
        await fetch(decided.location!);
      })();
    });
    expect(result).toMatchObject({ username: member.user.username, scope: 'read', refreshable: 'string', write: 'insufficient_scope' });
  });
});

describe('the SDK README', () => {
  it('every TypeScript example type-checks against the package', async () => {
    const readme = readFileSync(path.join(root, 'sdk', 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    const folder = path.join(scratch, 'readme');
    mkdirSync(folder);
    // what the examples take as given (a program's own values), declared when an example does not make them itself
    const given: Record<string, string> = {
      client: `import type { NotesClient } from '@notes-service/sdk';\ndeclare const client: NotesClient;`,
      edited: 'declare const edited: string;',
      rawBody: 'declare const rawBody: string;',
      webhookSecret: 'declare const webhookSecret: string;',
      request: 'declare const request: { headers: Record<string, string> };',
      baseUrl: 'declare const baseUrl: string;',
      clientId: 'declare const clientId: string;',
      save: 'declare const save: (tokens: unknown) => void;',
    };
    blocks.forEach((block, index) => {
      const declared = (name: string) => new RegExp(`\\b(const|let)\\s+${name}\\b|import\\s*\\{[^}]*\\b${name}\\b`).test(block);
      const prelude = Object.entries(given).filter(([name]) => new RegExp(`\\b${name}\\b`).test(block) && !declared(name)).map(([, line]) => line);
      writeFileSync(path.join(folder, `example-${index}.ts`), `${prelude.join('\n')}\n${block}\nexport {};\n`);
    });
    writeFileSync(path.join(folder, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')] },
      include: ['*.ts'],
    }));
    // the package installed in the scratch folder, as a stranger's program finds it
    const tsc = await run(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', folder], { cwd: folder }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }));
    expect(tsc.stdout).toBe('');
  }, 60_000);
});
