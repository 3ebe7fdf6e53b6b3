// The editors of `make bench`'s collab case (scripts/bench-collab.ts): headless live-editor clients in a child process
// of their own, away from both servers' event loops, so that a busy server does not stamp its own updates and the
// editors' work does not count as the server's. Each editor is Hocuspocus's provider on a socket of its own (as a
// browser tab holds one per open page) with a Yjs document, and edits the XmlFragment the editor binds ('default',
// src/modules/live/schema.ts) as TipTap's y-prosemirror does when someone types: its own paragraph (a Y.XmlElement
// 'paragraph' holding a Y.XmlText) appended once, then one character at a time inserted at the end of that text, and
// with carets on, the caret moved in the awareness state as CollaborationCaret does on every keystroke.
//
// Timing: every typed character is its own update, and its send time is noted by its Yjs id (the typing document's
// clientID, the editor, and the clock of the character, a sequence number) just before the insert (the provider
// sends it synchronously from the document's update event). Each receiver notes the arrival of each character by the
// same id, from its document's afterTransaction event: the latency of one delivery is arrival - send, on this
// process's monotonic clock, for every typed character and every other editor of its page. All editors of a page
// live in the same process. Changes made by anyone else (the server rewriting a document after a save) are counted
// apart.
//
// Driven over IPC (fork, serialization 'advanced' for the typed arrays):
//   - { type: 'open', url, editors }: connects every editor (20 at a time), each until its provider is synced or
//     refused; replies { type: 'opened', editors, refused } (the refusals' reasons, with counts).
//   - { type: 'type', seconds, charsPerSecond, graceMs, carets }: each editor appends its paragraph and waits until it
//     has its peers' paragraphs; then each types charsPerSecond characters a second for `seconds` (evenly, each from
//     a phase of its own); then waits (graceMs at most) for every character to reach every peer; replies with the
//     latencies and counts (EditorsReply 'typed').
//   - { type: 'close' }: disconnects every editor, replies { type: 'closed' } (the process may open again).
// Exits on SIGTERM or when its parent goes away.
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';

/** One editor: the page it is on (its editors form a group), the document's name, and its bearer token ('' for none). */
export type EditorSpec = { page: number; documentName: string; token: string };
export type EditorsRequest =
  | { type: 'open'; url: string; editors: EditorSpec[] }
  | { type: 'type'; seconds: number; charsPerSecond: number; graceMs: number; carets: boolean }
  | { type: 'close' };
export type TypedReply = {
  type: 'typed';
  /** One per delivery (typed character x other editor of its page) that came: milliseconds from send to arrival. */
  latencies: Float64Array;
  /** For each of those, when its character was typed: milliseconds into the typing window. */
  typedAt: Float64Array;
  /** Characters typed in the window, and those that could not be typed on time (the process was late). */
  sent: number;
  skipped: number;
  /** Deliveries expected (typed x peers), and those that came within the grace. */
  expected: number;
  arrived: number;
  /** Typed characters that had reached every peer by the end of the typing window. */
  deliveredInWindow: number;
  /** The typing window's length, seconds (as measured), and the time before it to add the lines, milliseconds. */
  seconds: number;
  preparedMs: number;
  /** Changes (Yjs clocks: characters, paragraphs, deletions' items) received from no editor of the page: the server's. */
  foreign: number;
  /** Pages whose editors' documents differ once the grace is over. */
  diverged: number;
  /** Connections that closed once synced (before or while typing), with the close's code and reason. */
  closed: string[];
  /** This process's CPU time over the call, and the call's time, milliseconds. */
  cpuMs: number;
  wallMs: number;
};
export type EditorsReply =
  | { type: 'opened'; editors: number; refused: string[] }
  | TypedReply
  | { type: 'closed' }
  | { type: 'error'; message: string };

/** Monotonic milliseconds. */
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const send = (reply: EditorsReply) => process.send?.(reply);

/** What is typed, a character at a time, so that saved pages hold words. */
const WORDS = 'the quick brown fox jumps over the lazy dog and types on ';

type Editor = {
  spec: EditorSpec;
  doc: Y.Doc;
  socket: HocuspocusProviderWebsocket;
  provider: HocuspocusProvider;
  fragment: Y.XmlFragment;
  /** Its own line, once appended. */
  text?: Y.XmlText;
  /** When its next character is due. */
  due: number;
  closing: boolean;
  closed?: string;
};

/** Per typing editor (by its document's clientID), per clock: when it was typed and how many peers have it. */
type Typing = { page: number; peers: number; sentAt: Float64Array; arrivals: Uint8Array; completeAt: Float64Array };

/**
 * `ws` with its errors taken: closing a socket that is still connecting (an editor refused, or closed at the end)
 * emits one, which would otherwise end the process. What went wrong is the provider's to say (its close event).
 */
class QuietWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols);
    this.on('error', () => undefined);
  }
}

let editors: Editor[] = [];
const typing = new Map<number, Typing>();
let recording = false;
let latencies: number[] = [];
let typedAt: number[] = [];
let windowStart = 0;
let arrived = 0;
let foreign = 0;
const usedClientIds = new Set<number>();

function connect(url: string, spec: EditorSpec): Promise<Editor> {
  const doc = new Y.Doc();
  // clientIDs are random 32-bit numbers: a repeat among a few hundred is unlikely, and would merge two editors' ids
  while (usedClientIds.has(doc.clientID)) doc.clientID = Math.floor(Math.random() * 2 ** 31);
  usedClientIds.add(doc.clientID);
  const socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: QuietWebSocket, maxAttempts: 1,
    // no reconnecting behind the benchmark's back: a socket with nothing to read for a while (its page's other
    // editors still connecting) stays open, and one the server closes is counted as closed
    messageReconnectTimeout: 3_600_000 });
  return new Promise<Editor>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('not synced within 60 s')), 60_000);
    const editor: Editor = {
      spec, doc, socket, fragment: doc.getXmlFragment('default'), due: 0, closing: false,
      provider: new HocuspocusProvider({
        websocketProvider: socket,
        name: spec.documentName,
        document: doc,
        token: spec.token,
        onSynced: () => {
          clearTimeout(timer);
          resolve(editor);
        },
        onAuthenticationFailed: ({ reason }) => {
          clearTimeout(timer);
          reject(new Error(reason));
        },
        onClose: ({ event }) => {
          if (editor.closing) return;
          editor.closed ??= `${event.code} ${event.reason}`.trim();
          clearTimeout(timer);
          reject(new Error(`closed ${editor.closed}`));
        },
      }),
    };
    editor.provider.attach();
    observe(editor);
  }).catch((error: unknown) => {
    socket.destroy();
    throw error;
  });
}

/**
 * Notes the arrival of every character typed by another editor of the page: a remote transaction brings, for each
 * client it changed, the clocks from the client's state before it to its state after it.
 */
function observe(editor: Editor): void {
  editor.doc.on('afterTransaction', (transaction: Y.Transaction) => {
    if (transaction.local || !recording) return;
    const at = now();
    for (const [client, after] of transaction.afterState) {
      const before = transaction.beforeState.get(client) ?? 0;
      if (after <= before) continue;
      const typist = typing.get(client);
      if (!typist || typist.page !== editor.spec.page) {
        foreign += after - before;
        continue;
      }
      for (let clock = before; clock < after; clock += 1) {
        const sentAt = typist.sentAt[clock];
        if (sentAt === undefined || Number.isNaN(sentAt)) continue;
        latencies.push(at - sentAt);
        typedAt.push(sentAt - windowStart);
        arrived += 1;
        typist.arrivals[clock]! += 1;
        if (typist.arrivals[clock] === typist.peers) typist.completeAt[clock] = at;
      }
    }
  });
}

async function open(url: string, specs: EditorSpec[]): Promise<EditorsReply> {
  const refused = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < specs.length) {
      const spec = specs[next++]!;
      try {
        editors.push(await connect(url, spec));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        refused.set(reason, (refused.get(reason) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  return { type: 'opened', editors: editors.length, refused: [...refused].map(([reason, count]) => `${count} x ${reason}`) };
}

/** The clientIDs of the paragraphs in `fragment`, by who inserted them. */
function paragraphAuthors(fragment: Y.XmlFragment): Set<number> {
  const authors = new Set<number>();
  for (const child of fragment.toArray()) if (child instanceof Y.XmlElement && child._item) authors.add(child._item.id.client);
  return authors;
}

async function type(request: Extract<EditorsRequest, { type: 'type' }>): Promise<TypedReply> {
  const cpuBefore = process.cpuUsage();
  const asked = now();
  const byPage = new Map<number, Editor[]>();
  for (const editor of editors) byPage.set(editor.spec.page, [...(byPage.get(editor.spec.page) ?? []), editor]);
  const capacity = Math.ceil(request.seconds * request.charsPerSecond * 1.2) + 64;
  // each editor's own line: a paragraph at the end, as pressing Enter at the end of the page makes
  for (const editor of editors) {
    const paragraph = new Y.XmlElement('paragraph');
    const text = new Y.XmlText();
    paragraph.insert(0, [text]);
    editor.fragment.insert(editor.fragment.length, [paragraph]);
    editor.text = text;
    const peers = byPage.get(editor.spec.page)!.length - 1;
    typing.set(editor.doc.clientID, {
      page: editor.spec.page, peers,
      sentAt: new Float64Array(capacity).fill(Number.NaN), arrivals: new Uint8Array(capacity), completeAt: new Float64Array(capacity).fill(Number.NaN),
    });
    if (request.carets) editor.provider.awareness?.setLocalStateField('user', { name: `editor ${editor.doc.clientID}`, color: '#3366cc' });
  }
  // typing starts once every editor has its peers' lines: every page is in the same state before the clock runs
  for (const deadline = now() + 30_000; ; await sleep(50)) {
    const ready = editors.every((editor) => {
      const authors = paragraphAuthors(editor.fragment);
      return byPage.get(editor.spec.page)!.every((peer) => authors.has(peer.doc.clientID));
    });
    if (ready) break;
    if (now() > deadline) throw new Error("the editors did not get their peers' lines within 30 s");
  }

  const interval = 1000 / request.charsPerSecond;
  let sent = 0;
  let skipped = 0;
  let expected = 0;
  latencies = [];
  typedAt = [];
  arrived = 0;
  foreign = 0;
  recording = true;
  const started = now();
  windowStart = started;
  const preparedMs = started - asked;
  const end = started + request.seconds * 1000;
  for (const editor of editors) editor.due = started + Math.random() * interval;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const at = now();
      if (at >= end) {
        clearInterval(timer);
        resolve();
        return;
      }
      for (const editor of editors) {
        if (editor.closed || at < editor.due) continue;
        // a process that fell behind types on from now: the characters it missed are counted, not sent in a burst
        if (at - editor.due > interval) {
          skipped += Math.floor((at - editor.due) / interval);
          editor.due = at;
        }
        editor.due += interval;
        const { doc, text } = editor;
        const typist = typing.get(doc.clientID)!;
        const clock = Y.getState(doc.store, doc.clientID);
        if (clock >= capacity) continue;
        typist.sentAt[clock] = now();
        text!.insert(text!.length, WORDS[text!.length % WORDS.length]!);
        sent += 1;
        expected += typist.peers;
        if (request.carets) {
          // as y-tiptap's cursor plugin puts a caret in a text: on the character before it (assoc -1)
          const caret = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(text!, text!.length, -1));
          editor.provider.awareness?.setLocalStateField('cursor', { anchor: caret, head: caret });
        }
      }
    };
    const timer = setInterval(tick, 5);
  });
  const seconds = (now() - started) / 1000;
  for (const deadline = now() + request.graceMs; arrived < expected && now() < deadline; ) await sleep(20);
  recording = false;

  let deliveredInWindow = 0;
  for (const typist of typing.values()) for (const at of typist.completeAt) if (at <= end) deliveredInWindow += 1;
  let diverged = 0;
  for (const group of byPage.values()) {
    const first = group[0]!.fragment.toString();
    if (group.some((editor) => editor.fragment.toString() !== first)) diverged += 1;
  }
  const cpu = process.cpuUsage(cpuBefore);
  return {
    type: 'typed', latencies: Float64Array.from(latencies), typedAt: Float64Array.from(typedAt), sent, skipped, expected, arrived, deliveredInWindow, seconds, preparedMs, foreign, diverged,
    closed: editors.filter((editor) => editor.closed).map((editor) => `${editor.spec.documentName}: ${editor.closed}`),
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: now() - asked,
  };
}

function close(): void {
  for (const editor of editors) {
    editor.closing = true;
    editor.provider.destroy();
    editor.socket.destroy();
  }
  editors = [];
}

process.on('message', (request: EditorsRequest) => {
  const answer = async (): Promise<EditorsReply> => {
    if (request.type === 'open') return open(request.url, request.editors);
    if (request.type === 'type') return type(request);
    close();
    return { type: 'closed' };
  };
  answer().then(
    (reply) => send(reply),
    (error: unknown) => send({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
