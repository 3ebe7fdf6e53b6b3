// A reader of server-sent events over fetch, for the change stream's tests (streamEvents): opens the stream, parses
// it as the HTML standard says (fields, comments, `retry`, events ended by an empty line) while the test goes on, and
// lets the test wait for so many events (or any condition) up to a deadline, then close the stream (abort). Each
// event keeps when it arrived, so a test can measure the delay from a write's answer to its event.
import { performance } from 'node:perf_hooks';
import type { Answer, ApiClient } from './client.ts';

export type StreamedEvent = {
  /** The `id:` field ('' when the event had none). */
  id: string;
  /** The `event:` field ('message' when the event had none, as EventSource does). */
  event: string;
  /** The `data:` lines, joined by a line feed. */
  data: string;
  /** `data` parsed as JSON (undefined when it is not JSON). */
  json: any;
  /** performance.now() when the empty line ending the event was read. */
  receivedAt: number;
};

export type OpenOptions = {
  token?: string;
  /** Send the token as ?access_token= instead of the Authorization header. */
  tokenInQuery?: boolean;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** Last-Event-ID to resume after. */
  lastEventId?: string;
  /** Accept header; `text/event-stream` unless given (null: none sent). */
  accept?: string | null;
};

/** How a wait ended: the condition held, the deadline passed, or the server ended the stream first. */
export type WaitOutcome = 'met' | 'timeout' | 'ended';

export class EventStream {
  readonly status: number;
  readonly headers: Headers;
  /** The whole body when the server did not answer 200 with a stream (a problem document, a JSON array). */
  readonly body: string | undefined;
  /** Every event received so far, in order. */
  readonly events: StreamedEvent[] = [];
  /** Every comment line received so far, without the leading colon and space (`heartbeat`). */
  readonly comments: string[] = [];
  /** Each `retry:` value received, in order. */
  readonly retries: number[] = [];
  /** Everything received so far, as text, in order (the first bytes of a stream included). */
  raw = '';
  /** Whether the server ended the stream (not the test's close()). */
  endedByServer = false;
  /** The error the body's reading ended with other than the test's close() (a reset connection), if any. */
  error: unknown;

  private readonly controller: AbortController;
  private closedByUs = false;
  private done = false;
  private readonly waiters = new Set<() => void>();
  private buffer = '';
  private pending = { id: '', event: '', data: [] as string[], hasData: false };
  private lastId = '';
  private readonly finished: Promise<void>;

  private constructor(response: Response, controller: AbortController, body: string | undefined) {
    this.status = response.status;
    this.headers = response.headers;
    this.controller = controller;
    this.body = body;
    if (body !== undefined || !response.body) {
      this.done = true;
      this.finished = Promise.resolve();
    } else {
      this.finished = this.pump(response.body);
    }
  }

  /** Opens `url` (absolute) and answers once the status and headers are in; a non-stream answer is read whole. */
  static async open(url: string, options: OpenOptions = {}): Promise<EventStream> {
    const target = new URL(url);
    for (const [name, value] of Object.entries(options.query ?? {})) target.searchParams.set(name, value);
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.accept !== null) headers.Accept = options.accept ?? 'text/event-stream';
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
    if (options.token && options.tokenInQuery) target.searchParams.set('access_token', options.token);
    else if (options.token) headers.Authorization = `Bearer ${options.token}`;
    const controller = new AbortController();
    const response = await fetch(target, { headers, signal: controller.signal, redirect: 'manual' });
    const isStream = response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
    return new EventStream(response, controller, isStream ? undefined : await response.text());
  }

  /** The body parsed as JSON (a problem document, or the JSON form's array). */
  get bodyJson(): any {
    return this.body === undefined || this.body === '' ? undefined : JSON.parse(this.body);
  }

  /** The id of the last event received, what a client sends back as Last-Event-ID ('' before the first). */
  get lastEventId(): string {
    return this.lastId;
  }

  /** Whether the stream is over (ended by the server, by a reset, or closed by the test). */
  get ended(): boolean {
    return this.done;
  }

  /** The events that are changes (every one but `truncated`), parsed. */
  get changes(): any[] {
    return this.events.filter((event) => event.event !== 'truncated').map((event) => event.json);
  }

  /** Waits until `condition` holds (checked at once and after each chunk), the deadline passes or the stream ends. */
  async waitUntil(condition: (stream: EventStream) => boolean, timeoutMs: number): Promise<WaitOutcome> {
    if (condition(this)) return 'met';
    if (this.done) return 'ended';
    return new Promise<WaitOutcome>((resolve) => {
      const check = () => {
        if (condition(this)) finish('met');
        else if (this.done) finish('ended');
      };
      const timer = setTimeout(() => finish('timeout'), timeoutMs);
      const finish = (outcome: WaitOutcome) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(outcome);
      };
      this.waiters.add(check);
    });
  }

  /** Reads until at least `count` events are in (all of them counted, `truncated` included) or the deadline; the events. */
  async readEvents(count: number, timeoutMs: number): Promise<StreamedEvent[]> {
    await this.waitUntil((stream) => stream.events.length >= count, timeoutMs);
    return this.events;
  }

  /** Waits for the first change event matching `match`; it, or undefined at the deadline. */
  async waitForChange(match: (change: any) => boolean, timeoutMs: number): Promise<any | undefined> {
    let found: any;
    await this.waitUntil((stream) => (found = stream.changes.find(match)) !== undefined, timeoutMs);
    return found;
  }

  /** Waits until the server ends the stream; whether it did before the deadline. */
  async waitForEnd(timeoutMs: number): Promise<boolean> {
    return (await this.waitUntil((stream) => stream.done, timeoutMs)) !== 'timeout';
  }

  /** Closes the stream from this side (the connection is aborted, as a client that goes away). */
  async close(): Promise<void> {
    if (!this.done) {
      this.closedByUs = true;
      this.controller.abort();
    }
    await this.finished;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          this.endedByServer = true;
          break;
        }
        const text = decoder.decode(value, { stream: true });
        this.raw += text;
        this.feed(text);
        this.notify();
      }
    } catch (error) {
      if (!this.closedByUs) this.error = error;
    } finally {
      this.done = true;
      this.notify();
    }
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Splits the text into lines (CRLF, LF or CR), keeping an unfinished last line for the next chunk. */
  private feed(text: string): void {
    this.buffer += text;
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.buffer);
      // a CR at the very end may be the first half of a CRLF still to come
      if (!match || (match[0] === '\r' && match.index === this.buffer.length - 1)) return;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) {
      this.comments.push(line.slice(1).replace(/^ /, ''));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') {
      if (!value.includes('\0')) this.pending.id = value;
    } else if (field === 'event') {
      this.pending.event = value;
    } else if (field === 'data') {
      this.pending.data.push(value);
      this.pending.hasData = true;
    } else if (field === 'retry') {
      if (/^[0-9]+$/.test(value)) this.retries.push(Number(value));
    }
  }

  private dispatch(): void {
    const { id, event, data, hasData } = this.pending;
    this.pending = { id: '', event: '', data: [], hasData: false };
    if (id !== '') this.lastId = id;
    if (!hasData) return;
    const text = data.join('\n');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    this.events.push({ id, event: event === '' ? 'message' : event, data: text, json, receivedAt: performance.now() });
  }
}

/** Opens the change stream (`GET /api/v1/events`) of the server at `baseUrl`. */
export function openEventStream(baseUrl: string, options: OpenOptions = {}): Promise<EventStream> {
  return EventStream.open(`${baseUrl}/api/v1/events`, options);
}

/** The `rel="next"` target of a Link header, as a path with its query (undefined when there is none). */
export function nextLink(link: string | null): string | undefined {
  const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link ?? '');
  if (!match) return undefined;
  const url = new URL(match[1]!, 'http://link.invalid');
  return url.pathname + url.search;
}

/** The `since` the Link header's next page continues after (undefined when there is no next link or no since). */
export function nextSince(link: string | null): string | undefined {
  const next = nextLink(link);
  return next === undefined ? undefined : new URL(next, 'http://link.invalid').searchParams.get('since') ?? undefined;
}

/**
 * The JSON form read to its end: from `query` on, following each answer's `Link: rel="next"` until a page comes back
 * empty; every item in order, and every page's answer. Throws on an answer other than 200 or a page without a next link.
 */
export async function readJsonEvents(client: ApiClient, query: Record<string, string>, maxPages = 200): Promise<{ items: any[]; pages: Answer[] }> {
  const items: any[] = [];
  const pages: Answer[] = [];
  let answer = await client.get('/api/v1/events', { query: { format: 'json', ...query } });
  for (;;) {
    if (answer.status !== 200) throw new Error(`GET /api/v1/events answered ${answer.status}: ${answer.text}`);
    pages.push(answer);
    items.push(...(answer.body as any[]));
    const next = nextLink(answer.headers.get('link'));
    if (next === undefined) throw new Error(`no Link rel="next" on ${JSON.stringify(query)}: ${answer.headers.get('link')}`);
    if ((answer.body as any[]).length === 0) return { items, pages };
    if (pages.length >= maxPages) throw new Error(`more than ${maxPages} pages`);
    answer = await client.get(next);
  }
}

/** What a received sequence of ids lacks, repeats and has out of order against the stored one: for failure messages. */
export function diagnose(received: readonly number[], stored: readonly number[]): string {
  const seen = new Set(received);
  const missing = stored.filter((id) => !seen.has(id));
  const duplicated = received.filter((id, i) => received.indexOf(id) !== i);
  const backwards = received.filter((id, i) => i > 0 && id < received[i - 1]!);
  return `missing ${JSON.stringify(missing)}, duplicated ${JSON.stringify(duplicated)}, arrived after a higher id ${JSON.stringify(backwards)}`;
}
