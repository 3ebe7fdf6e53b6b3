// createClient: the generated client (generated/client), configured the way every program of this service needs it:
// the token on every call (a fixed one, or a provider that refreshes), errors thrown as NotesApiError, a timeout per
// attempt and the caller's AbortSignal, and retries with exponential backoff and jitter.
//
// What is retried, and why only that:
// - 429 (rate limited), for every method: the service refuses such a request before doing anything, so sending it
//   again cannot do it twice. The wait is the answer's `Retry-After` when it has one.
// - A `Retry-After` longer than `maxRetryWaitMs` (a minute unless set) is not waited at all: the answer is thrown at
//   once as a NotesApiError carrying the wait (`retryAfterMs`), so that a program is never held for an hour without
//   knowing why; it decides whether to come back later (the OpenAI and Stripe SDKs do the same).
// - 503 and network errors (the connection refused or cut before an answer), for the idempotent methods only (GET,
//   HEAD, PUT, DELETE, OPTIONS): a POST or PATCH may have been done before the connection broke, and the service
//   takes no idempotency keys, so the SDK does not guess; it throws, and the program decides.
// - A timeout is not retried (the request may still be running on the server).
import { createClient as createGeneratedClient, createConfig, type Client } from '../../generated/client/client/index.ts';
import { errorOfAnswer, NotesApiError } from './errors.ts';
import { retryAfterMs } from './retry-after.ts';

/** A token, or a function giving the current one (an OAuth token provider that refreshes: oauth.ts). */
export type TokenSource = string | (() => string | Promise<string>);

export type NotesClientOptions = {
  /** Where the service is, e.g. `https://notes.example.com` (no `/api/v1`: the paths carry it). */
  baseUrl: string;
  /** A personal access token (`nt_...`), an OAuth access token, or a function that gives one. */
  token?: TokenSource | undefined;
  /** Attempts after the first for a request that may be retried (above); default 3. 0 turns retries off. */
  retries?: number | undefined;
  /** Milliseconds one attempt may take before it is aborted (a `timeout` NotesApiError); default 30,000. */
  timeoutMs?: number | undefined;
  /** The first backoff in milliseconds (doubled each attempt, with full jitter, at most 30 s); default 250. */
  backoffMs?: number | undefined;
  /**
   * The longest `Retry-After` (in milliseconds) a retry waits; default 60,000. An answer asking for longer is thrown
   * at once, without waiting, as a NotesApiError whose `retryAfterMs` is the wait asked for. 0 waits none (only
   * `Retry-After: 0` is still retried); `Infinity` waits whatever the server says.
   */
  maxRetryWaitMs?: number | undefined;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch | undefined;
};

/** The generated client with the SDK's settings; pass it to any operation: `listNotes({ client })`. */
export type NotesClient = Client & { readonly notes: Required<Pick<NotesClientOptions, 'baseUrl' | 'retries' | 'timeoutMs' | 'backoffMs' | 'maxRetryWaitMs'>> & { token: TokenSource | undefined; fetch: typeof fetch } };

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const MAX_BACKOFF_MS = 30_000;
/** The longest delay setTimeout keeps (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

export function createClient(options: NotesClientOptions): NotesClient {
  const settings = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    retries: options.retries ?? 3,
    timeoutMs: options.timeoutMs ?? 30_000,
    backoffMs: options.backoffMs ?? 250,
    maxRetryWaitMs: options.maxRetryWaitMs ?? 60_000,
    token: options.token,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
  };
  if (!(settings.maxRetryWaitMs >= 0)) throw new RangeError(`maxRetryWaitMs must be 0 or more milliseconds, got ${options.maxRetryWaitMs}`);
  const client = createGeneratedClient(createConfig({
    baseUrl: settings.baseUrl,
    auth: () => tokenOf(settings.token),
    fetch: (input: RequestInfo | URL, init?: RequestInit) => fetchWithRetries(settings, new Request(input, init)),
    throwOnError: true,
  }));
  // every answer of 400 or more, as the one error type
  // (a network error or timeout already is one; the caller's abort stays the AbortError it is)
  client.interceptors.error.use((error: unknown, response: Response | undefined) => (error instanceof NotesApiError || response === undefined ? error : errorOfAnswer(error, response)));
  return Object.assign(client, { notes: settings }) as NotesClient;
}

/** The current token of a source (undefined: no Authorization header). */
export async function tokenOf(source: TokenSource | undefined): Promise<string | undefined> {
  return typeof source === 'function' ? source() : source;
}

type RetrySettings = Pick<NotesClient['notes'], 'retries' | 'timeoutMs' | 'backoffMs' | 'maxRetryWaitMs' | 'fetch'>;

/** One request, retried as the header comment says. */
export async function fetchWithRetries(settings: RetrySettings, request: Request): Promise<Response> {
  const idempotent = IDEMPOTENT.has(request.method.toUpperCase());
  for (let attempt = 0; ; attempt += 1) {
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    const signal = AbortSignal.any([request.signal, timeout]);
    let wait: number;
    try {
      const response = await settings.fetch(request.clone(), { signal });
      const retryable = response.status === 429 || (response.status === 503 && idempotent);
      if (!retryable || attempt >= settings.retries) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      // longer than the caller agreed to wait: the answer goes back now, and errorOfAnswer puts the wait on the error
      if (asked !== undefined && asked > settings.maxRetryWaitMs) return response;
      wait = asked ?? backoff(settings.backoffMs, attempt);
      await response.body?.cancel();
    } catch (error) {
      if (request.signal.aborted) throw error;
      if (timeout.aborted) throw new NotesApiError(0, undefined, { code: 'timeout', message: `${request.method} ${request.url}: no answer within ${settings.timeoutMs} ms`, cause: error });
      if (!idempotent || attempt >= settings.retries) throw new NotesApiError(0, undefined, { code: 'network_error', message: `${request.method} ${request.url}: ${(error as Error).message}`, cause: error });
      wait = backoff(settings.backoffMs, attempt);
    }
    await sleep(wait, request.signal);
  }
}

/** Exponential backoff with full jitter: a random wait up to base x 2^attempt, at most 30 s. */
export function backoff(baseMs: number, attempt: number): number {
  return Math.random() * Math.min(MAX_BACKOFF_MS, baseMs * 2 ** attempt);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.min(ms, MAX_TIMER_MS));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
