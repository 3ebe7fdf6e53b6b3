// The live editor's server (src/modules/live) over real WebSockets, with Hocuspocus's own provider: who may connect
// and who may write, a live save stored as a version through the API's write, and an API write merged into the
// open document with the typing kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlOfYDoc } from '../../src/modules/live/content.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makePage, notePath } from '../support/factories.ts';
import { liveKit, type connectLive, type LiveClient } from '../support/live.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let cast: Scenario<'open' | 'secret'>;
let kit: ReturnType<typeof liveKit>;

beforeAll(async () => {
  app = await startTestApp();
  cast = await makeScenario(app, { notes: { open: {}, secret: { isPrivate: true } } });
  kit = liveKit(app, cast.manager);
});
afterAll(async () => {
  kit?.closeAll();
  await app?.close();
});

const live = (name: string, how: Parameters<typeof connectLive>[2]): LiveClient => kit.live(name, how);
const openPage = (content: string) => kit.openPage(cast.notes.open, cast.manager, content);
const stored = (path: string) => kit.stored(path);
const storedAt = (path: string, version: number) => kit.storedAt(path, version);

/** Waits until this process has let the document go (its last connection closed and it was saved). */
async function unloaded(name: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (app.live()!.hocuspocus.documents.has(name) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(app.live()!.hocuspocus.documents.has(name), 'the document was let go').toBe(false);
}

describe('live editing', () => {
  it('a member edits: the document is saved as a version through the API write, named for its author', async () => {
    const { path, name } = await openPage('<p>first words</p>');
    const client = live(name, { token: cast.member.token });
    await client.ready;
    expect(client.html()).toBe('<p>first words</p>');
    client.write('<p>first words and more</p>');
    const deadline = Date.now() + 8_000;
    let page = await stored(path);
    while (page.version < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      page = await stored(path);
    }
    expect(page).toMatchObject({ content: '<p>first words and more</p>', version: 2 });
    const versions = await cast.manager.client.get(`${path}/histories`);
    const newest = (versions.body as { index: number; user: { username: string } }[]).find((version) => version.index === 2);
    expect(newest?.user.username).toBe(cast.member.user.username);
  });

  it('a reader connects read-only: a crafted update changes neither the document nor the page', async () => {
    const { path, name } = await openPage('<p>read me</p>');
    const reader = live(name, { token: cast.reader.token });
    const writer = live(name, { token: cast.member.token });
    await Promise.all([reader.ready, writer.ready]);
    reader.write('<p>defaced</p>');
    // the server drops the reader's update: the writer's next change reaches the reader, the reader's never leaves
    writer.write('<p>read me, please</p>');
    await reader.until((html) => html.includes('please'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(writer.html()).toBe('<p>read me, please</p>');
    expect(htmlOfYDoc(app.live()!.hocuspocus.documents.get(name)!)).toBe('<p>read me, please</p>');
    expect((await stored(path)).content).not.toContain('defaced');
  });

  it('refuses whoever may not read, an unknown token, and a name that is not a page', async () => {
    const secret = await makePage(app, cast.notes.secret, cast.manager, { title: 'Hidden', content: '<p>x</p>' });
    const secretName = `${(await notePath(app, cast.notes.secret)).replace(/^\/api\/v1\//, '')}/${secret.id}`;
    await expect(live(secretName, { token: cast.outsider.token }).ready).rejects.toThrow(/not there or not yours/);
    await expect(live(secretName, { token: 'nope' }).ready).rejects.toThrow(/token is not valid/);
    await expect(live('just-a-name', { token: cast.member.token }).ready).rejects.toThrow(/does not name a page/);
    await expect(live(secretName, {}).ready).rejects.toThrow(/sign in first/);
  });

  it('an API write to an open page is merged into the document, the typing kept', async () => {
    const { path, name } = await openPage('<p>alpha</p><p>beta</p>');
    const client = live(name, { token: cast.member.token });
    await client.ready;
    client.write('<p>alpha typed</p><p>beta</p>');
    const written = await cast.manager.client.put(path, { json: { page: { content: '<p>alpha</p><p>beta from the API</p>', base_version: 1 } } });
    expect(written.status).toBe(200);
    const html = await client.until((text) => text.includes('beta from the API'), 3_000);
    expect(html).toBe('<p>alpha typed</p><p>beta from the API</p>');
  });

  it('a browser that reconnects with its copy after the server let the document go holds its text once, with what was written meanwhile and what it typed offline', async () => {
    const { path, name } = await openPage('<p>one</p>');
    const first = live(name, { token: cast.member.token });
    await first.ready;
    first.write('<p>one two</p>');
    expect((await storedAt(path, 2)).content).toBe('<p>one two</p>');
    // the connection goes; the browser keeps its document. The server saves and lets the document go
    first.close();
    await unloaded(name);
    const written = await cast.manager.client.put(path, { json: { page: { content: '<p>one two</p><p>three</p>', base_version: 2 } } });
    expect(written.status, written.text).toBe(200);
    first.write('<p>one two four</p>');
    // back with the same Yjs document: it meets the items it knew, not the same text built again
    const again = live(name, { token: cast.member.token, doc: first.doc });
    await again.ready;
    const merged = await again.until((html) => html.includes('three') && html.includes('four'));
    expect(merged).toBe('<p>one two four</p><p>three</p>');
    const server = app.live()!.hocuspocus.documents.get(name)!;
    await expect.poll(() => htmlOfYDoc(server)).toBe('<p>one two four</p><p>three</p>');
    expect((await storedAt(path, 4)).content).toBe('<p>one two four</p><p>three</p>');
    // and a second reconnection, with nothing changed, changes nothing
    again.close();
    await unloaded(name);
    const third = live(name, { token: cast.member.token, doc: first.doc });
    await third.ready;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(third.html()).toBe('<p>one two four</p><p>three</p>');
    const rows = await app.em().execute<{ version: number }[]>('select version from live_documents where page_id = ?', [Number(name.split('/')[2])]);
    expect(rows[0]?.version).toBe(4);
  });
});
