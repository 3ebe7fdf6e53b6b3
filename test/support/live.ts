// Headless live-editor clients for the tests: Hocuspocus's own provider over `ws`, with a bearer token (the
// provider's token) or a browser's cookies (and the Origin a page of the site sends), holding a Yjs document with
// the editor's schema (src/modules/live/content.ts turns it into HTML and back).
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { htmlOfYDoc, replaceContent } from '../../src/modules/live/content.ts';
import type { Note } from '../../src/modules/notes/note.entity.ts';
import type { TestApp } from './app.ts';
import { makePage, notePath, type Actor } from './factories.ts';

export type LiveClient = {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  /** Resolves once synced with the server, or rejects with the refusal's reason. */
  ready: Promise<void>;
  /** The close event of the socket, once it closed. */
  closed: Promise<{ code: number; reason: string }>;
  html(): string;
  /** Makes the document hold `html` (the least change), as typing would. */
  write(html: string): void;
  /** Resolves when the document's HTML satisfies `check` (or rejects after `ms`). */
  until(check: (html: string) => boolean, ms?: number): Promise<string>;
  close(): void;
};

/** `how.doc`: the document to connect with (a client's copy kept from an earlier connection); a new one by default. */
export function connectLive(app: TestApp, name: string, how: { token?: string; cookie?: string; origin?: string; doc?: Y.Doc }): LiveClient {
  const url = `${app.baseUrl.replace(/^http/, 'ws')}/live`;
  const headers: Record<string, string> = {};
  if (how.cookie !== undefined) headers.cookie = how.cookie;
  if (how.origin !== undefined || how.cookie !== undefined) headers.origin = how.origin ?? app.baseUrl;
  class WithHeaders extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  }
  let closedWith!: (event: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (closedWith = resolve));
  const socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: WithHeaders, maxAttempts: 1 });
  const doc = how.doc ?? new Y.Doc();
  let synced!: () => void;
  let refused!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    synced = resolve;
    refused = reject;
  });
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name,
    document: doc,
    token: how.token ?? '',
    onSynced: () => synced(),
    onAuthenticationFailed: ({ reason }) => refused(new Error(reason)),
    onClose: ({ event }) => {
      closedWith({ code: event.code, reason: event.reason });
      refused(new Error(`closed ${event.code} ${event.reason}`));
    },
  });
  provider.attach();
  ready.catch(() => undefined);
  return {
    doc,
    provider,
    ready,
    closed,
    html: () => htmlOfYDoc(doc),
    write: (html) => replaceContent(doc, html, null),
    async until(check, ms = 5_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const html = htmlOfYDoc(doc);
        if (check(html)) return html;
        if (Date.now() > deadline) throw new Error(`the live document never matched; it holds ${html}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close() {
      provider.destroy();
      socket.destroy();
    },
  };
}

export type StoredPage = { content: string; version: number };

/**
 * What the live tests of one app share: clients connected through it (closed by `closeAll`), pages opened in a note
 * with their API path and live document name, and the page as stored, read through `reader`'s API.
 */
export function liveKit(app: TestApp, reader: { client: { get(path: string): Promise<{ status: number; text: string; body: unknown }> } }) {
  const clients: LiveClient[] = [];
  let pages = 0;
  const kit = {
    clients,
    live(name: string, how: Parameters<typeof connectLive>[2]): LiveClient {
      const client = connectLive(app, name, how);
      clients.push(client);
      return client;
    },
    /** A new page of `note` by `author`: its id, its API path and its live document's name. */
    async openPage(note: Note, author: Actor, content: string) {
      pages += 1;
      const page = await makePage(app, note, author, { title: `Live ${pages}`, content });
      const path = await notePath(app, note);
      return { page, path: `${path}/${page.id}`, name: `${path.replace(/^\/api\/v1\//, '')}/${page.id}` };
    },
    async stored(path: string): Promise<StoredPage> {
      const answer = await reader.client.get(path);
      if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text}`);
      return answer.body as StoredPage;
    },
    /** The page once its stored version is at least `version` (or as it is after `ms`). */
    async storedAt(path: string, version: number, ms = 10_000): Promise<StoredPage> {
      const deadline = Date.now() + ms;
      let page = await kit.stored(path);
      while (page.version < version && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        page = await kit.stored(path);
      }
      return page;
    },
    closeAll(): void {
      for (const client of clients) client.close();
    },
  };
  return kit;
}
