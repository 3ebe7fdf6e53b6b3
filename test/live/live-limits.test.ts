// The live editor's limits and bad input, over real WebSockets (settings lowered so the limits are reached): too many
// connections per user and per page, an update larger than the page content limit, a document grown past it by small
// updates, bytes that are not an update, a token revoked and a member removed while connected, and HTML a crafted
// document carries that the sanitizer never lets into a version. Each ends with a reason in words and nothing of it
// stored.
import * as encoding from 'lib0/encoding';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { LIVE_FIELD } from '../../src/modules/live/schema.ts';
import { htmlOfYDoc } from '../../src/modules/live/content.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/factories.ts';
import { liveKit, type connectLive, type LiveClient } from '../support/live.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

const LIMIT = 4096;
let app: TestApp;
let cast: Scenario<'open' | 'secret'>;
let kit: ReturnType<typeof liveKit>;

beforeAll(async () => {
  app = await startTestApp({
    LIMIT_PAGE_CONTENT_BYTES: String(LIMIT),
    LIVE_CONNECTIONS_PER_USER: '3',
    LIVE_CONNECTIONS_PER_PAGE: '3',
    LIVE_RECHECK_MS: '300',
    LIVE_SAVE_PAUSE_MS: '400',
    LIVE_SAVE_MAX_MS: '1000',
  });
  cast = await makeScenario(app, { notes: { open: {}, secret: { isPrivate: true } } });
  kit = liveKit(app, cast.manager);
});
afterAll(async () => {
  kit?.closeAll();
  await app?.close();
});

const live = (name: string, how: Parameters<typeof connectLive>[2]): LiveClient => kit.live(name, how);
const openPage = (content: string, note: 'open' | 'secret' = 'open') => kit.openPage(cast.notes[note], cast.manager, content);
const stored = (path: string) => kit.stored(path);
const storedAt = (path: string, version: number) => kit.storedAt(path, version, 8_000);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live editing: limits', () => {
  it('a user holds at most LIVE_CONNECTIONS_PER_USER connections; one closed makes room again', async () => {
    const opened = await Promise.all([1, 2, 3].map(() => openPage('<p>one of three</p>')));
    const held = opened.map(({ name }) => live(name, { token: cast.reader.token }));
    await Promise.all(held.map((client) => client.ready));
    const fourth = await openPage('<p>the fourth</p>');
    await expect(live(fourth.name, { token: cast.reader.token }).ready).rejects.toThrow('too many live connections: at most 3 per user');
    held[0]!.close();
    let again: LiveClient | undefined;
    await expect.poll(async () => {
      again?.close();
      again = live(fourth.name, { token: cast.reader.token });
      return again.ready.then(() => 'admitted', (error: Error) => error.message);
    }, { timeout: 5_000 }).toBe('admitted');
    for (const client of [...held, again!]) client.close();
  });

  it('a page has at most LIVE_CONNECTIONS_PER_PAGE connections', async () => {
    const { name } = await openPage('<p>crowded</p>');
    const three = [cast.manager, cast.member, cast.outsider].map((actor) => live(name, { token: actor.token }));
    await Promise.all(three.map((client) => client.ready));
    // a fourth person, with no connection of their own yet
    const fourth = await makeUser(app);
    await expect(live(name, { token: fourth.token }).ready).rejects.toThrow('too many live connections to this page: at most 3');
    for (const client of three) client.close();
  });

  it('an update larger than the page content limit closes the connection (4413) and is not applied', async () => {
    const { path, name } = await openPage('<p>small</p>');
    const writer = live(name, { token: cast.member.token });
    const watcher = live(name, { token: cast.manager.token });
    await Promise.all([writer.ready, watcher.ready]);
    writer.write(`<p>small ${'x'.repeat(LIMIT + 100)}</p>`);
    const closed = await writer.closed;
    expect(closed).toEqual({ code: 4413, reason: `an update is larger than the page content limit (${LIMIT} bytes)` });
    await pause(500);
    expect(watcher.html()).toBe('<p>small</p>');
    expect(htmlOfYDoc(app.live()!.hocuspocus.documents.get(name)!)).toBe('<p>small</p>');
    expect(await stored(path)).toMatchObject({ content: '<p>small</p>', version: 1 });
  });

  it('a document grown past the limit by small updates is not saved: its connections close (4413), the last save kept', async () => {
    const { path, name } = await openPage('<p>growing</p>');
    const writer = live(name, { token: cast.member.token });
    await writer.ready;
    writer.write('<p>growing, saved</p>');
    expect((await storedAt(path, 2)).content).toBe('<p>growing, saved</p>');
    let text = '<p>growing, saved</p>';
    // six updates in a row, each under the limit, together past it (sent before a pause could save half of them)
    for (let step = 0; step < 6; step += 1) {
      text += `<p>${'y'.repeat(900)}</p>`;
      writer.write(text);
    }
    const closed = await writer.closed;
    expect(closed.code).toBe(4413);
    expect(closed.reason).toMatch(/grew past the content limit/);
    await pause(500);
    expect(await stored(path)).toMatchObject({ content: '<p>growing, saved</p>', version: 2 });
  });

  it('bytes that are not an update close that connection (4400); the document and the server go on', async () => {
    const { path, name } = await openPage('<p>steady</p>');
    const writer = live(name, { token: cast.member.token });
    const watcher = live(name, { token: cast.manager.token });
    await Promise.all([writer.ready, watcher.ready]);
    // a sync message (type 0, step "update" 2) of this document whose update is garbage
    const message = encoding.createEncoder();
    encoding.writeVarString(message, name);
    encoding.writeVarUint(message, 0);
    encoding.writeVarUint(message, 2);
    encoding.writeVarUint8Array(message, new Uint8Array([0xff, 0xfe, 0x07, 0x01, 0x99, 0x42]));
    writer.provider.configuration.websocketProvider.webSocket!.send(encoding.toUint8Array(message));
    // and a socket that sends nothing Hocuspocus can read at all
    const raw = new WebSocket(`${app.baseUrl.replace(/^http/, 'ws')}/live`);
    const rawClosed = new Promise<number>((resolve) => raw.on('close', (code) => resolve(code)));
    raw.on('open', () => raw.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])));
    await rawClosed;
    await pause(300);
    const refused = await writer.closed;
    expect(refused).toEqual({ code: 4400, reason: 'a message whose update Yjs cannot read' });
    expect(htmlOfYDoc(app.live()!.hocuspocus.documents.get(name)!)).toBe('<p>steady</p>');
    expect(watcher.html()).toBe('<p>steady</p>');
    watcher.write('<p>steady, still</p>');
    expect((await storedAt(path, 2)).content).toBe('<p>steady, still</p>');
    expect((await cast.manager.client.get('/api/v1/me')).status).toBe(200);
  });

  it('a token revoked while connected is closed within the recheck, and nothing more of it is stored', async () => {
    const { path, name } = await openPage('<p>before</p>');
    const { token, secret } = await issueToken(app.em(), cast.member.user, { scope: 'write' });
    const writer = live(name, { token: secret });
    await writer.ready;
    expect((await cast.member.client.delete(`/api/v1/me/tokens/${token.id}`)).status).toBe(204);
    const closed = await writer.closed;
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(/revoked/);
    writer.write('<p>after the revocation</p>');
    await pause(800);
    expect(await stored(path)).toMatchObject({ content: '<p>before</p>', version: 1 });
  });

  it('a member removed while connected: from a private note the connection closes, and nothing more of theirs is stored', async () => {
    const { path, name } = await openPage('<p>team only</p>', 'secret');
    const { scenario, token } = await removable();
    const writer = live(name, { token });
    await writer.ready;
    const removed = await cast.manager.client.delete(`/api/v1/teams/${cast.team.name}/users/${scenario.id}`);
    expect(removed.status, removed.text).toBe(200);
    const closed = await writer.closed;
    expect(closed.code).toBe(4403);
    writer.write('<p>team only, defaced</p>');
    await pause(800);
    expect(await stored(path)).toMatchObject({ content: '<p>team only</p>', version: 1 });
  });
});

describe('live editing: what a crafted document carries', () => {
  it('a javascript: link, an event handler and unknown elements never reach a version', async () => {
    const { path, name } = await openPage('<p>safe</p>');
    const writer = live(name, { token: cast.member.token });
    await writer.ready;
    // written as Yjs directly, past any editor: a link mark with a javascript: URL, an image with an onerror
    // attribute, and an element the schema does not know
    writer.doc.transact(() => {
      const fragment = writer.doc.getXmlFragment(LIVE_FIELD);
      const paragraph = new Y.XmlElement('paragraph');
      const text = new Y.XmlText();
      text.insert(0, 'click me', { link: { href: 'javascript:alert(1)', target: '_blank' } });
      paragraph.insert(0, [text]);
      const image = new Y.XmlElement('image');
      image.setAttribute('src', 'javascript:alert(2)');
      image.setAttribute('onerror', 'alert(3)' as never);
      const script = new Y.XmlElement('script');
      script.insert(0, [new Y.XmlText('alert(4)')]);
      fragment.insert(fragment.length, [paragraph, image, script]);
    });
    const saved = await storedAt(path, 2);
    expect(saved.version).toBe(2);
    expect(saved.content).toContain('click me');
    expect(saved.content).not.toMatch(/javascript:|onerror|<script|alert\(/);
  });
});

/** A user added to the team as a member, with a write token, to be removed. */
async function removable(): Promise<{ scenario: { id: number }; token: string }> {
  const user = await makeUser(app);
  const added = await cast.manager.client.post(`/api/v1/teams/${cast.team.name}/users`, { json: { username: user.user.username, role: 'member' } });
  expect(added.status, added.text).toBe(200);
  return { scenario: { id: user.user.id }, token: user.token };
}
