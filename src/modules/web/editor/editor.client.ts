// The live editor in the browser (bundled by scripts/build-editor.ts into dist/web/editor.js, served as
// /web/editor.js; never imported by the server). On a page's edit view that carries a mount (`#live-editor`, made by
// views/page-forms.ts only for a page the editor keeps whole), it joins the page's live document over the service's
// WebSocket (/live, the session cookie goes with it) and, once the document arrived, shows the editor in place of the
// HTML text area's form, which stays one click away. Until then, and whenever the editor is refused, the form is the
// editor: nothing here is needed to write the page.
//
// The schema is the server's own (live/schema.ts) plus collaboration and carets, so the browser never holds a node
// the server would drop. The strict Content-Security-Policy allows this file and a socket to this site only: no
// inline script or style (TipTap's injected stylesheet is off, its rules are in web.css; colours are set through
// the CSSOM, which the policy allows).
//
// A lost connection is never picked up again with the same Yjs document. The server keeps each document's Yjs state
// (live_documents), so a reconnection normally meets the items this browser knew; but a state the server could not
// keep (too large, lost) is built afresh from the page's HTML: the same text as new Yjs items, which merged with this
// browser's history would hold every paragraph twice (and be saved so). So each connection has a document of its own
// (a Session). Offline, the editor keeps its document and takes typing; once a
// new connection has the server's document, what was kept goes over: as Yjs updates when the server's document is the
// one this browser had (it holds every client this browser knew), else as the least change to the fresh document
// when it holds what this browser had when the connection went (nobody changed the page meanwhile); and otherwise,
// when this browser has text the server may lack, that text goes into the HTML form, unfolded, whose save merges it
// with the page three ways (merge-on-write), while the editor shows the page as it is now.
import { HocuspocusProvider, WebSocketStatus } from '@hocuspocus/provider';
import { Editor } from '@tiptap/core';
import Collaboration from '@tiptap/extension-collaboration';
import CollaborationCaret from '@tiptap/extension-collaboration-caret';
import type { Node as PmNode } from '@tiptap/pm/model';
import { updateYFragment, yXmlFragmentToProseMirrorRootNode } from '@tiptap/y-tiptap';
import * as Y from 'yjs';
import { editorExtensions, LIVE_FIELD } from '../../live/schema.ts';

/** The interface text, in the reader's language (the view writes it into the mount's `data-strings`). */
type Strings = {
  connecting: string;
  saved: string;
  offline: string;
  refused: string;
  readOnly: string;
  editHtml: string;
  handedOver: string;
  you: string;
  linkPrompt: string;
};

/** Close codes the server ends a connection with for good (live.server.ts CLOSE): reconnecting would not help. */
const FINAL_CLOSES = new Set([4400, 4403, 4404, 4413, 4429]);
/** How long after a lost connection the next one is tried (its provider then backs off by itself). */
const RECONNECT_MS = 1_000;

type Command = 'bold' | 'italic' | 'heading' | 'bulletList' | 'orderedList' | 'link';

/** One connection and its own Yjs document. */
type Session = {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  connected: boolean;
  readOnly: boolean;
  /** Closed for good (lost, or replaced): never connects again. */
  retired: boolean;
  /** The clients the server's document held when it arrived: the same document has them all. */
  known: Set<number>;
};

function start(mount: HTMLElement): void {
  const name = mount.dataset.document ?? '';
  const user = { name: mount.dataset.userName ?? '', color: mount.dataset.userColor ?? '' };
  const strings = JSON.parse(mount.dataset.strings ?? '{}') as Strings;
  const section = document.getElementById('live');
  const status = document.getElementById('live-status');
  const presence = document.getElementById('live-presence');
  const form = document.getElementById('page-edit');
  const toolbar = section?.querySelector<HTMLElement>('[role=toolbar]');
  const textarea = form?.querySelector('textarea');
  if (!section || !status || !presence || !form || !toolbar || !textarea) return;

  let said = '';
  const say = (text: string) => {
    if (text === said) return;
    said = text;
    status.textContent = text;
  };
  status.hidden = false;
  say(strings.connecting);

  let editor: Editor | undefined;
  let fold: HTMLDetailsElement | undefined;
  /** The session the editor shows, and the one connecting to take over from it. */
  let current: Session | undefined;
  let next: Session | undefined;
  /** The editor's document when the current session's connection went, and whether changes were unsent then. */
  let atLoss: { doc: PmNode; unsent: boolean } | undefined;
  let refusal: string | undefined;
  let handedOver = false;

  function open(): Session {
    const session: Session = { doc: new Y.Doc(), provider: undefined as never, connected: false, readOnly: false, retired: false, known: new Set() };
    session.provider = new HocuspocusProvider({
      url: `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/live`,
      name,
      document: session.doc,
      onAuthenticated: ({ scope }) => {
        session.readOnly = scope === 'readonly';
        settle();
      },
      onAuthenticationFailed: ({ reason }) => refuse(reason),
      onSynced: ({ state }) => {
        if (state && session === next && refusal === undefined) adopt(session);
      },
      onStatus: ({ status: now }) => {
        session.connected = now === WebSocketStatus.Connected;
        settle();
      },
      onClose: ({ event }) => {
        session.connected = false;
        if (FINAL_CLOSES.has(event.code)) return refuse(event.reason || String(event.code));
        lost(session);
      },
      onAwarenessChange: () => {
        if (session === current) listPresence();
      },
    });
    return session;
  }

  /** Stops `session` for good; its document and editor stay until another session takes over. */
  function retire(session: Session): void {
    session.retired = true;
    session.provider.configuration.websocketProvider.disconnect();
  }

  function drop(session: Session): void {
    retire(session);
    session.provider.destroy();
    session.doc.destroy();
  }

  /** A connection closed: an empty one retries by itself; one that holds a document is replaced by a new session. */
  function lost(session: Session): void {
    if (session.retired || refusal !== undefined) return;
    if (session === next) {
      if (session.doc.store.clients.size === 0) return;
      drop(session);
      next = undefined;
    } else if (session === current) {
      retire(session);
      atLoss = { doc: editor!.state.doc, unsent: session.provider.hasUnsyncedChanges };
    } else return;
    settle();
    setTimeout(() => {
      if (next === undefined && refusal === undefined) next = open();
    }, RECONNECT_MS);
  }

  /** `session` has the server's document: the editor moves to it, with what the last one had that the server lacks. */
  function adopt(session: Session): void {
    session.known = new Set(session.doc.store.clients.keys());
    const previous = current;
    current = session;
    next = undefined;
    if (!previous) {
      show();
      return settle();
    }
    const local = editor!.state.doc;
    const fragment = session.doc.getXmlFragment(LIVE_FIELD);
    const same = previous.known.size > 0 && [...previous.known].every((client) => session.known.has(client));
    if (same) {
      Y.applyUpdate(session.doc, Y.encodeStateAsUpdate(previous.doc));
    } else {
      const fresh = yXmlFragmentToProseMirrorRootNode(fragment, editor!.schema);
      const had = atLoss?.doc ?? local;
      if (fresh.eq(had)) {
        if (!local.eq(fresh)) session.doc.transact(() => updateYFragment(session.doc as never, fragment, local, { mapping: new Map(), isOMark: new Map() }));
      } else if (!local.eq(had) || atLoss?.unsent) {
        handOver(editor!.getHTML());
      }
    }
    atLoss = undefined;
    bind(session);
    drop(previous);
    listPresence();
    settle();
  }

  /** The editor on `session`'s document, where the cursor was. */
  function bind(session: Session): void {
    const before = editor ? { from: editor.state.selection.from, to: editor.state.selection.to, focused: editor.isFocused } : undefined;
    editor?.destroy();
    editor = new Editor({
      element: mount,
      injectCSS: false,
      editable: editable(),
      extensions: [
        ...editorExtensions(),
        Collaboration.configure({ document: session.doc, field: LIVE_FIELD }),
        CollaborationCaret.configure({ provider: session.provider, user }),
      ],
      editorProps: { attributes: { role: 'textbox', 'aria-multiline': 'true', 'aria-labelledby': 'live-label', class: 'live-text' } },
      onTransaction: () => pressed(),
    });
    if (before) {
      const end = editor.state.doc.content.size;
      editor.commands.setTextSelection({ from: Math.min(before.from, end), to: Math.min(before.to, end) });
      if (before.focused) editor.commands.focus();
    }
  }

  const editable = () => refusal === undefined && !(current?.readOnly ?? false);

  /** The editor shown for the first time; the text area's form folded under it. */
  function show(): void {
    bind(current!);
    // the view's heading stays in sight above the editor, not folded away with the form
    const heading = form!.querySelector('h1');
    if (heading) status!.before(heading);
    fold = document.createElement('details');
    fold.className = 'card live-html';
    const summary = document.createElement('summary');
    summary.textContent = strings.editHtml;
    fold.append(summary);
    form!.replaceWith(fold);
    fold.append(form!);
    form!.classList.remove('card');
    section!.hidden = false;
    toolbarKeys();
    pressed();
  }

  /** This browser's text, which the server may lack, put in the form (whose save merges it) and the form unfolded. */
  function handOver(html: string): void {
    handedOver = true;
    textarea!.value = html;
    if (fold) fold.open = true;
  }

  /** What the status says and whether the editor takes typing, from what is known now. */
  function settle(): void {
    editor?.setEditable(editable());
    for (const button of toolbar!.querySelectorAll('button')) button.disabled = !editable();
    if (refusal !== undefined) return say(`${strings.refused}${refusal}`);
    if (!current) return say(strings.connecting);
    if (current.readOnly) return say(strings.readOnly);
    if (current.retired || !current.connected) return say(strings.offline);
    say(handedOver ? strings.handedOver : strings.saved);
  }

  function refuse(reason: string): void {
    if (refusal !== undefined) return;
    refusal = reason;
    // the server said no for good: no more tries (the document in hand stays shown, not editable)
    for (const session of [current, next]) if (session) retire(session);
    settle();
    listPresence();
  }

  const run = (command: Command) => {
    if (!editor) return;
    const chain = editor.chain().focus();
    if (command === 'bold') chain.toggleBold().run();
    else if (command === 'italic') chain.toggleItalic().run();
    else if (command === 'heading') chain.toggleHeading({ level: 2 }).run();
    else if (command === 'bulletList') chain.toggleBulletList().run();
    else if (command === 'orderedList') chain.toggleOrderedList().run();
    else if (editor.isActive('link')) chain.extendMarkRange('link').unsetLink().run();
    else {
      const href = window.prompt(strings.linkPrompt, 'https://')?.trim();
      if (href) chain.extendMarkRange('link').setLink({ href }).run();
    }
  };

  /** Each button says whether what it applies is where the cursor is (aria-pressed). */
  function pressed(): void {
    if (!editor) return;
    for (const button of toolbar!.querySelectorAll<HTMLButtonElement>('button[data-command]')) {
      const command = button.dataset.command as Command;
      const on = command === 'heading' ? editor.isActive('heading', { level: 2 }) : editor.isActive(command);
      button.setAttribute('aria-pressed', String(on));
    }
  }

  toolbar.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-command]');
    if (button && !button.disabled) run(button.dataset.command as Command);
  });

  /** The toolbar is one tab stop; the arrow keys, Home and End move along it (ARIA's toolbar pattern). */
  function toolbarKeys(): void {
    const buttons = [...toolbar!.querySelectorAll<HTMLButtonElement>('button')];
    buttons.forEach((button, index) => (button.tabIndex = index === 0 ? 0 : -1));
    toolbar!.addEventListener('keydown', (event) => {
      const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
      if (at < 0) return;
      const to = event.key === 'ArrowRight' ? (at + 1) % buttons.length
        : event.key === 'ArrowLeft' ? (at - 1 + buttons.length) % buttons.length
          : event.key === 'Home' ? 0 : event.key === 'End' ? buttons.length - 1 : -1;
      if (to < 0) return;
      event.preventDefault();
      buttons[at]!.tabIndex = -1;
      buttons[to]!.tabIndex = 0;
      buttons[to]!.focus();
    });
  }

  /** Who has the page open (the awareness states' users), this browser first, each name once; nobody once refused. */
  function listPresence(): void {
    const awareness = current?.provider.awareness;
    const mine = awareness?.clientID;
    const seen = new Set<string>();
    const items: HTMLLIElement[] = [];
    const states = refusal === undefined && awareness ? [...awareness.getStates().entries()] : [];
    states.sort(([a], [b]) => (a === mine ? -1 : b === mine ? 1 : 0));
    for (const [client, state] of states) {
      const person = (state as { user?: { name?: unknown; color?: unknown } }).user;
      if (typeof person?.name !== 'string' || seen.has(person.name)) continue;
      seen.add(person.name);
      const item = document.createElement('li');
      const swatch = document.createElement('span');
      swatch.className = 'live-swatch';
      swatch.setAttribute('aria-hidden', 'true');
      if (typeof person.color === 'string' && /^#[0-9a-f]{6}$/i.test(person.color)) swatch.style.backgroundColor = person.color;
      item.append(swatch, document.createTextNode(client === mine ? `${person.name} ${strings.you}` : person.name));
      items.push(item);
    }
    presence!.replaceChildren(...items);
  }

  next = open();
}

const mount = document.getElementById('live-editor');
if (mount instanceof HTMLElement && mount.dataset.document) start(mount);
