// events(): the change stream (GET /api/v1/events, server-sent events) as an async iterator that never loses its
// place. It reconnects by itself when the connection ends or breaks, sending the last id it delivered as
// `Last-Event-ID`, so the events continue right after it, none missed and none twice (the service guarantees the
// order and the resume). Heartbeat comments are read and dropped. It stops when the caller breaks out of the loop or
// aborts its signal; an answer that retrying cannot mend (401, 403, 400) is thrown as a NotesApiError, and so is a
// 429 or 5xx whose `Retry-After` is longer than the client's `maxRetryWaitMs` (the error's `retryAfterMs` says it).
import type { ChangeEvent } from '../../generated/client/types.gen.ts';
import { backoff, sleep, tokenOf, type NotesClient } from './client.ts';
import { errorOfAnswer } from './errors.ts';
import { retryAfterMs } from './retry-after.ts';

/** An event of the stream: a change (`ChangeEvent`), or `truncated` when the events asked for are past the retention. */
export type StreamEvent = ChangeEvent | { id: number; type: 'truncated'; oldest_id: number };

export type EventsOptions = {
  /** Start after this id (an event's id, or 0 for everything kept); without it, the stream starts now. */
  since?: number | string | undefined;
  /** Only these types (`['page.updated', 'issue.created']`). */
  types?: readonly ChangeEvent['type'][] | undefined;
  /** Only the events of this team (its name), or of this note (`team/note`). */
  team?: string | undefined;
  note?: string | undefined;
  /** Ends the iteration (the loop's `break` does too). */
  signal?: AbortSignal | undefined;
};

export async function* events(client: NotesClient, options: EventsOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
  const { baseUrl, fetch: send, backoffMs, maxRetryWaitMs } = client.notes;
  let lastId = options.since === undefined ? undefined : String(options.since);
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let failures = 0;
  try {
    while (!signal.aborted) {
      const url = new URL(`${baseUrl}/api/v1/events`);
      if (options.types?.length) url.searchParams.set('types', options.types.join(','));
      if (options.team !== undefined) url.searchParams.set('team', options.team);
      if (options.note !== undefined) url.searchParams.set('note', options.note);
      const headers = new Headers({ Accept: 'text/event-stream' });
      const token = await tokenOf(client.notes.token);
      if (token !== undefined) headers.set('Authorization', `Bearer ${token}`);
      if (lastId !== undefined) headers.set('Last-Event-ID', lastId);
      let response: Response;
      try {
        response = await send(url, { headers, signal });
      } catch {
        // refused or cut before an answer: try again after a backoff
        if (signal.aborted) return;
        failures += 1;
        await sleep(backoff(backoffMs, Math.min(failures, 8)), signal).catch(() => undefined);
        continue;
      }
      if (response.status === 429 || response.status >= 500) {
        failures += 1;
        const asked = retryAfterMs(response.headers.get('retry-after'));
        if (asked !== undefined && asked > maxRetryWaitMs) throw errorOfAnswer(await bodyOf(response), response);
        const wait = asked ?? backoff(backoffMs, Math.min(failures, 8));
        await response.body?.cancel();
        await sleep(wait, signal).catch(() => undefined);
        continue;
      }
      if (!response.ok || response.body === null) throw errorOfAnswer(await bodyOf(response), response);
      failures = 0;
      try {
        for await (const event of readEvents(response.body)) {
          if (event.id !== undefined) lastId = event.id;
          if (event.data === undefined || event.data === '') continue;
          const data = JSON.parse(event.data) as Record<string, unknown>;
          yield (event.event === 'truncated' ? { id: Number(event.id ?? lastId ?? 0), type: 'truncated', ...data } : data) as StreamEvent;
        }
      } catch {
        if (signal.aborted) return;
        // the connection broke mid-stream: reconnect from the last id
        failures += 1;
      }
      if (!signal.aborted) await sleep(backoff(backoffMs, Math.min(failures, 8)), signal).catch(() => undefined);
    }
  } finally {
    // a `break` in the caller's loop ends the connection too
    stop.abort();
  }
}

/** An answer's body, parsed when it is JSON (problem details); its text otherwise, which is then the detail. */
async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type RawEvent = { id?: string; event?: string; data?: string };

/** The events of a text/event-stream body (WHATWG HTML, "Server-sent events": fields, comments, blank-line ends). */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<RawEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: RawEvent = {};
  let data: string[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      if (line === '') {
        if (data.length > 0 || event.id !== undefined) yield { ...event, data: data.join('\n') };
        event = {};
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue; // a comment: the heartbeat
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event.event = value;
      else if (field === 'id' && !value.includes('\0')) event.id = value;
    }
  }
}
