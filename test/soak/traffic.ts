// Every request of the soak goes through one Traffic: it sends, reads the answer whole (or hands a live stream to
// its caller), and keeps the account the test asserts on at the end: how many requests, how many were shed (503
// with Retry-After, allowed), every other 5xx, every connection the server refused or reset, every request with no
// answer in time, and every answer a flow did not expect (a role matrix cell, a failed import job, an MCP error).
// Each entry names the request (flow, method, path, status, the head of the body), so a failure shows what to replay.

/** What a flow sends: a JSON, urlencoded or raw body, extra headers, a bearer token. */
export type Outgoing = {
  token?: string | undefined;
  json?: unknown;
  form?: Record<string, string | number | (string | number)[]>;
  raw?: { body: string | Uint8Array; contentType?: string };
  /** A multipart upload (FormData): fetch writes the boundary. */
  upload?: FormData;
  headers?: Record<string, string>;
  /** No complete answer within this: a hang (default REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
};

/** `ok`: a 2xx. */
export type Answered = { status: number; ok: boolean; headers: Headers; text: string; body: any; bytes: number; buffer: Buffer };

/** The longest an answer may take to arrive whole; the worst case waits its turn behind the answer gate, so it is long. */
export const REQUEST_TIMEOUT_MS = 120_000;
/** How many entries of each kind are kept (the counts go on). */
const KEEP = 50;

const head = (text: string, length = 300) => text.replace(/\s+/g, ' ').slice(0, length);
const shortPath = (path: string) => (path.length > 200 ? `${path.slice(0, 200)}...(${path.length} chars)` : path);

export class Traffic {
  requests = 0;
  shed = 0;
  /** Per flow: requests, the time they took in all, the slowest and which it was. */
  readonly perFlow = new Map<string, { count: number; ms: number; slowestMs: number; slowest: string }>();
  /** 5xx other than a 503 with Retry-After. */
  readonly serverErrors: string[] = [];
  serverErrorCount = 0;
  /** The connection refused, reset or closed before an answer. */
  readonly connectionErrors: string[] = [];
  connectionErrorCount = 0;
  /** No complete answer within the request's time. */
  readonly hangs: string[] = [];
  hangCount = 0;
  /** Answers below 500 that a flow did not expect (the role matrix, jobs, MCP results). */
  readonly unexpected: string[] = [];
  unexpectedCount = 0;

  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  /** Sends one request; undefined when no answer came (the failure is recorded). */
  async send(flow: string, method: string, path: string, outgoing: Outgoing = {}): Promise<Answered | undefined> {
    const hangUp = new AbortController();
    const timer = setTimeout(() => hangUp.abort(), outgoing.timeoutMs ?? REQUEST_TIMEOUT_MS);
    const started = performance.now();
    try {
      const response = await fetch(this.baseUrl + path, { ...this.init(method, outgoing), signal: hangUp.signal, redirect: 'manual' });
      const buffer = Buffer.from(await response.arrayBuffer());
      const text = buffer.toString('utf8');
      const type = response.headers.get('content-type') ?? '';
      let body: unknown;
      if (text !== '' && type.includes('json')) {
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
      }
      this.note(flow, method, path, response.status, response.headers, text, performance.now() - started);
      return { status: response.status, ok: response.status >= 200 && response.status < 300, headers: response.headers, text, body, bytes: buffer.length, buffer };
    } catch (error) {
      this.failed(flow, method, path, error, hangUp.signal.aborted, performance.now() - started);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends until the answer is not a shed (503 with Retry-After, each counted), waiting what it asks (2 s at most),
   * for the requests a flow builds on: a fixture that was shed is made again.
   */
  async sendUntilServed(flow: string, method: string, path: string, outgoing: Outgoing = {}, attempts = 20): Promise<Answered | undefined> {
    for (let attempt = 1; ; attempt += 1) {
      const answer = await this.send(flow, method, path, outgoing);
      if (!answer || !isShed(answer) || attempt >= attempts) return answer;
      await sleep(Math.min(2000, 1000 * Number(answer.headers.get('retry-after') ?? 1)));
    }
  }

  /** Counts an answer and records a 5xx that is not a shed; `flow` is its name, then what the entry should say. */
  note(flow: string, method: string, path: string, status: number, headers: Headers, text: string, ms = 0): void {
    this.count(flow, `${method} ${shortPath(path)}`, ms);
    if (status === 503 && headers.get('retry-after')) this.shed += 1;
    else if (status >= 500) {
      this.serverErrorCount += 1;
      if (this.serverErrors.length < KEEP) this.serverErrors.push(`${flow}: ${method} ${shortPath(path)} -> ${status} (request id ${headers.get('x-request-id') ?? '-'}): ${head(text)}`);
    }
  }

  /** A request that got no answer: a hang (aborted at its deadline) or a connection refused or reset. */
  failed(flow: string, method: string, path: string, error: unknown, timedOut: boolean, ms = 0): void {
    this.count(flow, `${method} ${shortPath(path)}`, ms);
    if (timedOut) {
      this.hangCount += 1;
      if (this.hangs.length < KEEP) this.hangs.push(`${flow}: ${method} ${shortPath(path)}: no complete answer in time`);
      return;
    }
    this.connectionErrorCount += 1;
    if (this.connectionErrors.length < KEEP) this.connectionErrors.push(`${flow}: ${method} ${shortPath(path)}: ${describeError(error)}`);
  }

  /** An answer below 500 that the flow did not expect. */
  surprise(flow: string, what: string, answer?: Answered): void {
    this.unexpectedCount += 1;
    if (this.unexpected.length < KEEP) this.unexpected.push(`${flow}: ${what}${answer ? ` -> ${answer.status}: ${head(answer.text)}` : ''}`);
  }

  private count(flow: string, what: string, ms: number): void {
    this.requests += 1;
    const name = flow.split(' ', 1)[0]!;
    const entry = this.perFlow.get(name) ?? { count: 0, ms: 0, slowestMs: 0, slowest: '' };
    entry.count += 1;
    entry.ms += ms;
    if (ms > entry.slowestMs) [entry.slowestMs, entry.slowest] = [ms, what];
    this.perFlow.set(name, entry);
  }

  private init(method: string, outgoing: Outgoing): RequestInit {
    const headers: Record<string, string> = { ...outgoing.headers };
    if (outgoing.token) headers.Authorization = `Bearer ${outgoing.token}`;
    let body: RequestInit['body'];
    if (outgoing.json !== undefined) {
      body = JSON.stringify(outgoing.json);
      headers['Content-Type'] ??= 'application/json';
    } else if (outgoing.form) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(outgoing.form)) {
        for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
      }
      body = params.toString();
      headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    } else if (outgoing.raw) {
      body = outgoing.raw.body as RequestInit['body'];
      if (outgoing.raw.contentType) headers['Content-Type'] = outgoing.raw.contentType;
    } else if (outgoing.upload) {
      body = outgoing.upload;
    }
    return { method, headers, ...(body === undefined || method === 'GET' ? {} : { body }) };
  }
}

/** When the load ends: at its time, or at once when the server is gone (end()). */
export class Deadline {
  at: number;

  constructor(at: number) {
    this.at = at;
  }

  get over(): boolean {
    return Date.now() > this.at;
  }

  end(): void {
    this.at = 0;
  }
}

export const isShed = (answer: Answered) => answer.status === 503 && answer.headers.get('retry-after') !== null;
export const isSuccess = (answer: Answered | undefined): answer is Answered & { ok: true } => answer?.ok === true;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** fetch's "fetch failed" with the socket's reason (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET: other side closed). */
export function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = error instanceof Error ? error.message : String(error);
  return cause ? `${message} (${cause.code ?? ''} ${cause.message ?? ''})`.trim() : message;
}
