// Live editing: a page's Yjs document shared by everyone who has it open, through Hocuspocus on the service's own
// HTTP server (WebSocket path /live, attach.ts; one socket per open page, the document named `<team>/<note>/<page id>`).
//
// Who: a signed-in browser (its session cookie, and an Origin of this site: another site's page cannot open a
// socket in its name) or a bearer token sent as the provider's token. Whoever may read the page connects; whoever
// may also edit it (a member of its team, a `write` token, not an app that only proposes changes) writes; everyone
// else is read-only, and Hocuspocus drops a read-only connection's updates on the server. Every LIVE_RECHECK_MS each
// connection's access is checked again: a token revoked, a session ended or a member removed is closed (4403), and
// nothing more of theirs is applied.
//
// What is stored: the page's HTML stays the truth of its history. A document is built from the page's latest
// version when first opened (from its kept Yjs state when it has one, live_documents: a browser reconnecting with its
// copy then meets the Yjs items it knew, not the same text built again, which would hold it twice), and saved as a version (live-write.ts: the API's own write, for the person who wrote
// last, naming everyone whose changes it holds) LIVE_SAVE_PAUSE_MS after typing pauses and at least every
// LIVE_SAVE_MAX_MS while it goes on. A write to the page from anywhere else (the API, MCP, a merged request,
// another process) is heard on the change feed and merged into the open document (sync.ts).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Hocuspocus, type Document } from '@hocuspocus/server';
import { WebSocketServer } from 'ws';
import * as Y from 'yjs';
import type { LiveDeps } from './attach.ts';
import { liveAccess, type LiveContext, type LiveSocket } from './access.ts';
import { createSessions } from '../sessions/sessions.ts';
import { DomainError } from '../errors.ts';
import { editabilityOf, editorHtml, htmlOfYDoc, yDocOf } from './content.ts';
import { sanitizeHtml } from '../notes/description.ts';
import { saveLive } from './live-write.ts';
import { callersOf, forgetState, keepState, keptStateOf, pageNow, pageVersions } from './live.repository.ts';
import { localCoordination, redisCoordination } from './coordination.ts';
import { noteName } from '../notes/note.presenter.ts';
import { CLOSE, nameParts, readable, refuse } from './protocol.ts';
import { mergeLive, STORED_ORIGIN, tryApply } from './sync.ts';

/** Notes the change feed names within this long are heard together (heard()). */
const HEAR_TOGETHER_MS = 20;
/** Live saves running at once in a process: pages typed into together reach their longest wait together. */
const SAVES_AT_ONCE = 4;

/** Hocuspocus's heartbeat: a connection that answers nothing for this long is closed (its default). */
const HEARTBEAT_TIMEOUT_MS = 30_000;

/** A document's kept Yjs state may be at most this many times the page content limit. */
const KEPT_STATE_FACTOR = 8;



export type { LiveContext } from './access.ts';
export { CLOSE } from './protocol.ts';


/** What this process knows of an open document: the version it stands on and who changed it since. */
export type LiveState = {
  team: string;
  note: string;
  noteId: number;
  pageId: number;
  /** The stored version the document was built from or last saved as, and that version's content in the editor's HTML. */
  base: { version: number; html: string };
  /** Whether this process saves the document and merges writes into it (coordination.ts: always, for one process). */
  owner: boolean;
  /** One save or merge at a time. */
  busy: Promise<void>;
};

export type Live = {
  hocuspocus: Hocuspocus<LiveContext>;
  states: Map<string, LiveState>;
  /** Serves one WebSocket upgrade of the live path (attach.ts). */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Saves what is open and closes every connection. */
  close(): Promise<void>;
};


export async function createLive({ services, orm, logger, changes }: LiveDeps): Promise<Live> {
  const sessions = createSessions({ secure: services.config.publicUrl.startsWith('https:') });
  const states = new Map<string, LiveState>();
  const sockets = new Map<string, LiveSocket>();
  const access = liveAccess(orm, sessions);
  /** Whether a recheck is running (the next waits for the one before to end). */
  let rechecking = false;
  const perUser = new Map<number, number>();
  const perPage = new Map<string, number>();
  const limit = services.config.limits.pageContentBytes;
  const settings = services.config.live;
  /** Set by close(): nothing more is heard, checked or saved but what close() saves. */
  let closing = false;
  const coordination = settings.redisUrl
    ? await redisCoordination(settings.redisUrl, settings.recheckMs, (ids) => callersOf(orm.em.fork(), ids), logger)
    : localCoordination();



  const hocuspocus = new Hocuspocus<LiveContext>({
    name: 'notes-live',
    extensions: coordination.extensions,
    quiet: true,
    debounce: settings.savePauseMs,
    maxDebounce: settings.saveMaxMs,
    // a socket silent this long (no pong) is closed: not tied to the recheck, which tests and operators set low
    timeout: HEARTBEAT_TIMEOUT_MS,
    unloadImmediately: true,

    async onAuthenticate(data) {
      const { team, note, pageId } = nameParts(data.documentName);
      const { caller, sessionSecret } = await access.callerOf(data);
      const { scope, writable } = await access.pageAccessOf(caller, team, note, pageId);
      // one document per page: the name is the page's own spelling of it
      const canonical = `${scope.team.name}/${noteName(scope.note)}/${scope.page.id}`;
      if (canonical !== data.documentName) throw refuse(`this page's live document is named "${canonical}"`);
      const form = editabilityOf(scope.page.content);
      if (!form.editable) throw refuse(`this page opens in the HTML text area: ${form.reason}`);
      if ((perUser.get(caller.user.id) ?? 0) >= settings.connectionsPerUser) {
        throw refuse(`too many live connections: at most ${settings.connectionsPerUser} per user`);
      }
      if ((perPage.get(canonical) ?? 0) >= settings.connectionsPerPage) {
        throw refuse(`too many live connections to this page: at most ${settings.connectionsPerPage}`);
      }
      perUser.set(caller.user.id, (perUser.get(caller.user.id) ?? 0) + 1);
      perPage.set(canonical, (perPage.get(canonical) ?? 0) + 1);
      data.connectionConfig.readOnly = !writable;
      const context: LiveContext = { caller, team, note, noteId: scope.note.id, pageId, writable, sessionSecret, socketId: data.socketId };
      const socket = sockets.get(data.socketId);
      if (socket) socket.context = context;
      return context;
    },

    async onLoadDocument({ document, documentName }) {
      const { team, note, pageId } = nameParts(documentName);
      const em = orm.em.fork();
      const [row, kept, owner] = await Promise.all([pageNow(em, pageId), keptStateOf(orm.em.fork(), pageId), coordination.claim(documentName)]);
      if (!row) throw refuse('the page is gone');
      const stored = editorHtml(row.content);
      const state: LiveState = { team, note, noteId: row.noteId, pageId, base: { version: row.version, html: stored }, owner, busy: Promise.resolve() };
      let changed = true;
      if (kept && tryApply(document, kept.state)) {
        // the kept state stands on its version: a write made since comes in as a merge, by the owner alone (the
        // others have the owner's document through Redis)
        state.base = { version: kept.version, html: kept.content };
        if (owner) {
          changed = mergeLive(document, kept.content, stored) || kept.version !== row.version;
          state.base = { version: row.version, html: stored };
        }
      } else {
        Y.applyUpdate(document, Y.encodeStateAsUpdate(yDocOf(stored, String(pageId))), STORED_ORIGIN);
      }
      states.set(documentName, state);
      if (owner && changed) await keep(state, document);
    },

    async beforeHandleMessage({ context, update, socketId }) {
      // the socket itself is closed with the code (Hocuspocus's own close of a document carries only the reason); the
      // throw stops the message and the connection's queue
      const refused = (code: number, reason: string) => {
        sockets.get(socketId)?.ws.close(code, reason);
        return refuse(reason, code);
      };
      if (update.byteLength > limit && context?.writable) {
        throw refused(CLOSE.tooLarge, `an update is larger than the page content limit (${limit} bytes)`);
      }
      if (!readable(update)) throw refused(CLOSE.malformed, 'a message whose update Yjs cannot read');
    },

    async onChange({ documentName, document, context, transactionOrigin }) {
      const state = states.get(documentName);
      const origin = transactionOrigin as { source?: string } | undefined;
      if (!state) return;
      // typing on another process reaches the owner through Redis, where Hocuspocus schedules no save: the owner does
      if (origin?.source === 'redis' && state.owner) {
        void hocuspocus.storeDocumentHooks(document, { instance: hocuspocus, clientsCount: document.getConnectionsCount(), document, lastContext: {}, lastTransactionOrigin: transactionOrigin, documentName } as never);
        return;
      }
      if (origin?.source !== 'connection' || !context?.writable) return;
      coordination.noteAuthor(documentName, context.caller);
    },

    async onStoreDocument({ documentName, document }) {
      await store(documentName, document);
    },

    async onDisconnect({ context, documentName }) {
      if (!context?.caller) return;
      const user = context.caller.user.id;
      perUser.set(user, (perUser.get(user) ?? 1) - 1);
      if (perUser.get(user)! <= 0) perUser.delete(user);
      perPage.set(documentName, (perPage.get(documentName) ?? 1) - 1);
      if (perPage.get(documentName)! <= 0) perPage.delete(documentName);
    },

    async afterUnloadDocument({ documentName }) {
      const state = states.get(documentName);
      states.delete(documentName);
      if (state?.owner) await coordination.release(documentName);
    },
  });

  function closeDocument(documentName: string, code: number, reason: string): void {
    for (const { ws, context } of sockets.values()) {
      if (context && `${context.team}/${context.note}/${context.pageId}` === documentName) ws.close(code, reason);
    }
  }

  /**
   * Keeps the document's Yjs state with the version it stands on (live_documents), after every change the server
   * makes to it and every save: a browser that reconnects with its copy then meets the same Yjs items, not the same
   * text built again. A state past KEPT_STATE_FACTOR times the content limit is not kept (the next opening builds
   * the document from the page's HTML).
   */
  async function keep(state: LiveState, document: Y.Doc): Promise<void> {
    const update = Y.encodeStateAsUpdate(document);
    const em = orm.em.fork();
    if (update.byteLength > KEPT_STATE_FACTOR * limit) {
      logger.warn({ page: state.pageId, bytes: update.byteLength }, 'a live document\'s Yjs state is too large to keep');
      await forgetState(em, state.pageId);
      return;
    }
    await keepState(em, state.pageId, { version: state.base.version, content: state.base.html, state: update });
  }

  /** At most SAVES_AT_ONCE saves at a time; the others wait their turn (in the order they came). */
  let savesRunning = 0;
  const savesWaiting: (() => void)[] = [];
  async function inSaveSlot<T>(work: () => Promise<T>): Promise<T> {
    while (savesRunning >= SAVES_AT_ONCE) await new Promise<void>((resolve) => savesWaiting.push(resolve));
    savesRunning += 1;
    try {
      return await work();
    } finally {
      savesRunning -= 1;
      savesWaiting.shift()?.();
    }
  }

  /** One save or merge of a document after the other. */
  function serially(state: LiveState, work: () => Promise<void>): Promise<void> {
    const next = state.busy.then(work, work);
    state.busy = next.catch(() => undefined);
    return next;
  }

  async function store(documentName: string, document: Document): Promise<void> {
    const state = states.get(documentName);
    if (!state) return;
    await serially(state, async () => {
      const html = htmlOfYDoc(document);
      // every process closes its own connections to a document past the limit; the owner alone saves
      if (Buffer.byteLength(html, 'utf8') > limit) {
        logger.warn({ document: documentName }, 'a live document grew past the page content limit: not saved, connections closed');
        closeDocument(documentName, CLOSE.tooLarge, `the page grew past the content limit (${limit} bytes): the last save is kept`);
        return;
      }
      if (!state.owner) return;
      const authors = await coordination.takeAuthors(documentName);
      if (authors.length === 0 || html === state.base.html) return;
      // the version is the last typist's; it names the others (versions.writer.ts)
      const writer = authors[authors.length - 1]!;
      const coAuthorIds = authors.slice(0, -1).map((author) => author.user.id);
      try {
        const content = sanitizeHtml(html);
        const saved = await inSaveSlot(() => saveLive(services, orm, logger, writer, {
          team: state.team, note: state.note, pageId: state.pageId, content, baseVersion: state.base.version, coAuthorIds,
        }));
        // merged with a write made since the base: what the save stored comes back into the document
        state.base = { version: saved.version, html: editorHtml(saved.content) };
        mergeLive(document, editorHtml(content), state.base.html);
        await keep(state, document);
      } catch (error) {
        await coordination.giveBack(documentName, authors);
        if (error instanceof DomainError && error.kind === 'not_found') {
          closeDocument(documentName, CLOSE.gone, 'the page was deleted or moved');
          return;
        }
        logger.error({ error: error instanceof Error ? error.message : String(error), document: documentName }, 'saving a live document failed');
        throw error;
      }
    });
  }

  /**
   * This process became the owner of a document another process owned: it stands on the version the last owner
   * kept the document at, takes in what was written since, and saves what the last owner had not.
   */
  async function takeOver(documentName: string, state: LiveState, document: Document): Promise<void> {
    await serially(state, async () => {
      const [row, kept] = await Promise.all([pageNow(orm.em.fork(), state.pageId), keptStateOf(orm.em.fork(), state.pageId)]);
      if (!row) return closeDocument(documentName, CLOSE.gone, 'the page was deleted');
      const base = kept ? { version: kept.version, html: kept.content } : state.base;
      const stored = editorHtml(row.content);
      mergeLive(document, base.html, stored);
      state.base = { version: row.version, html: stored };
      state.owner = true;
      await keep(state, document);
    });
    await store(documentName, document);
  }

  /**
   * Notes the change feed named, heard together: a burst of writes (this process's own saves among them) costs one
   * statement for the versions of the open pages of those notes, and a page's content is read only when its version
   * moved past the one its document stands on.
   */
  const heardNotes = new Set<number>();
  let hearing: NodeJS.Timeout | undefined;

  function hear(noteIds: Iterable<number>): void {
    for (const noteId of noteIds) heardNotes.add(noteId);
    hearing ??= setTimeout(() => {
      hearing = undefined;
      const notes = new Set(heardNotes);
      heardNotes.clear();
      void heard(notes).catch((error: unknown) => logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'hearing writes to live documents failed'));
    }, HEAR_TOGETHER_MS);
  }

  /** Pages of `noteIds` may have been written elsewhere: their open documents are brought up to date. */
  async function heard(noteIds: Set<number>): Promise<void> {
    if (closing) return;
    const open = [...states].filter(([documentName, state]) => noteIds.has(state.noteId) && hocuspocus.documents.has(documentName));
    if (open.length === 0) return;
    const versions = await pageVersions(orm.em.fork(), open.map(([, state]) => state.pageId));
    for (const [documentName, state] of open) {
      const version = versions.get(state.pageId);
      if (version === undefined) {
        closeDocument(documentName, CLOSE.gone, 'the page was deleted');
        continue;
      }
      // the owner alone merges (another process's document gets the owner's merge through Redis)
      if (!state.owner || version <= state.base.version) continue;
      const document = hocuspocus.documents.get(documentName);
      if (!document) continue;
      await serially(state, async () => {
        const row = await pageNow(orm.em.fork(), state.pageId);
        if (!row) {
          closeDocument(documentName, CLOSE.gone, 'the page was deleted');
          return;
        }
        if (row.version <= state.base.version) return;
        const stored = editorHtml(row.content);
        mergeLive(document, state.base.html, stored);
        state.base = { version: row.version, html: stored };
        await keep(state, document);
      }).catch((error: unknown) => logger.warn({ error: error instanceof Error ? error.message : String(error), document: documentName }, 'merging a write into a live document failed'));
    }
  }

  changes.subscribe((change) => {
    if (states.size === 0) return;
    if ('everything' in change) return hear([...states.values()].map((state) => state.noteId));
    hear(change.tags.filter((tag) => tag.startsWith('n')).map((tag) => Number(tag.slice(1))));
  });


  const recheck = setInterval(() => {
    if (!rechecking && !closing) {
      rechecking = true;
      void access.recheck(sockets.values()).finally(() => (rechecking = false)).catch((error: unknown) => logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'checking live connections again failed'));
    }
    // the owner's lease renewed; a document whose owner is gone is taken over
    for (const [documentName, state] of states) {
      void coordination.claim(documentName).then((owner) => {
        const document = hocuspocus.documents.get(documentName);
        if (owner && !state.owner && document) return takeOver(documentName, state, document);
        state.owner = owner;
      }).catch((error: unknown) => logger.warn({ error: error instanceof Error ? error.message : String(error), document: documentName }, 'taking over a live document failed'));
    }
  }, settings.recheckMs);
  recheck.unref();


  const wss = new WebSocketServer({ noServer: true, maxPayload: limit + 64 * 1024 });

  function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = request.url ?? '';
    wss.handleUpgrade(request, socket, head, (ws) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers.set(name, value);
        else if (Array.isArray(value)) headers.set(name, value.join(', '));
      }
      const webRequest = new Request(`http://${request.headers.host ?? 'localhost'}${url}`, { headers });
      const client = hocuspocus.handleConnection(ws as never, webRequest);
      const socketId = (client as unknown as { socketId: string }).socketId;
      sockets.set(socketId, { ws });
      ws.on('message', (data: Buffer) => client.handleMessage(new Uint8Array(data)));
      ws.on('close', (code, reason) => {
        sockets.delete(socketId);
        client.handleClose({ code, reason: reason.toString() });
      });
      ws.on('error', (error) => logger.warn({ error: error.message }, 'a live connection failed'));
    });
  }

  return {
    hocuspocus,
    states,
    upgrade,
    async close() {
      closing = true;
      clearInterval(recheck);
      if (hearing) clearTimeout(hearing);
      // what is typed and not saved yet is saved now (the owner's part), before the connections go
      await Promise.all([...states.keys()].map((documentName) => {
        const document = hocuspocus.documents.get(documentName);
        return document ? store(documentName, document).catch(() => undefined) : undefined;
      }));
      for (const { ws } of sockets.values()) ws.close(1001, 'the server is shutting down');
      wss.close();
      await coordination.close();
      await hocuspocus.hooks('onDestroy', { instance: hocuspocus }).catch(() => undefined);
    },
  };
}
