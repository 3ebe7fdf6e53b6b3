// Flow e) the change stream: a few clients (the manager on everything, the member on the team `soak`, the outsider on
// everything it may read) each hold GET /api/v1/events open as server-sent events, read what comes for a few seconds,
// hang up and reconnect with Last-Event-ID, as EventSource does; every fifth time one reads the JSON form instead.
// Every open must answer 200 with the stream (or be shed: 503 with Retry-After), and no stream may end with the
// connection reset.
import { EventStream } from '../support/event-stream.ts';
import { describeError, isShed, sleep } from './traffic.ts';
import { Flow } from './flow.ts';
import type { Actor } from './world.ts';

const MAX_OPENS = 10_000;

export class EventsFlow extends Flow {
  opens = 0;
  events = 0;
  private readonly streams = new Set<EventStream>();

  async run(): Promise<void> {
    const { manager, member, outsider } = this.world;
    await Promise.all([
      this.client(manager, {}, 0),
      this.client(member, { team: 'soak' }, 1),
      this.client(outsider, {}, 2),
      this.client(manager, { types: 'page.created,page.updated' }, 3),
    ]);
  }

  /** Closes what is still open (at the end, or when a flow fails). */
  async close(): Promise<void> {
    await Promise.all([...this.streams].map((stream) => stream.close()));
  }

  private async client(actor: Actor, query: Record<string, string>, seed: number): Promise<void> {
    let lastEventId: string | undefined;
    for (let n = 0; n < MAX_OPENS && !this.deadline.over; n += 1) {
      const path = `/api/v1/events${Object.keys(query).length ? `?${new URLSearchParams(query)}` : ''}`;
      if (n % 5 === 4) {
        const since = lastEventId ?? '0';
        const json = `/api/v1/events?${new URLSearchParams({ ...query, format: 'json', since })}`;
        const answer = await this.traffic.send('events', 'GET', json, { token: actor.token, headers: { Accept: 'application/json' } });
        if (answer && answer.status !== 200 && !isShed(answer) && answer.status < 500) this.traffic.surprise('events', `GET ${json} as ${actor.name} expected 200`, answer);
        continue;
      }
      let stream: EventStream;
      try {
        stream = await EventStream.open(`${this.traffic.baseUrl}${path}`, { token: actor.token, ...(lastEventId ? { lastEventId } : {}) });
      } catch (error) {
        this.traffic.failed('events', 'GET', path, error, false);
        await sleep(1000);
        continue;
      }
      this.opens += 1;
      this.traffic.note('events', 'GET', path, stream.status, stream.headers, stream.body ?? '');
      if (stream.status !== 200 || stream.body !== undefined) {
        if (stream.status < 500 && !(stream.status === 503 && stream.headers.get('retry-after'))) {
          this.traffic.surprise('events', `GET ${path} as ${actor.name} (Last-Event-ID ${lastEventId ?? 'none'}) expected the stream, got ${stream.status}: ${(stream.body ?? '').slice(0, 300)}`);
        }
        await sleep(1000);
        continue;
      }
      this.streams.add(stream);
      // read for 1 to 6 s, or until the soak ends
      const reading = 1000 + ((n * 7 + seed * 3) % 6) * 1000;
      await stream.waitUntil(() => this.deadline.over, Math.max(0, Math.min(reading, this.deadline.at - Date.now())));
      const endedByServer = stream.endedByServer;
      const error = stream.error;
      await stream.close();
      this.streams.delete(stream);
      this.events += stream.events.length;
      if (stream.lastEventId) lastEventId = stream.lastEventId;
      if (error) this.traffic.failed('events', 'GET', `${path} (reading the stream)`, error, false);
      else if (endedByServer) this.traffic.surprise('events', `GET ${path} as ${actor.name}: the server ended the stream after ${stream.events.length} events (${describeError(error)})`);
    }
  }
}
