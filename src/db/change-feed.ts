// The change feed: what the database announces on the channel `revisions` (migrations/0002-revisions.sql): tags of the notes (n),
// teams (t) and tokens (k) that changed, as each transaction commits, whichever process or tool made the change.
// A process keeps views and tokens in memory only while its feed is live; when the feed breaks, listeners are told
// that everything may have changed, and nothing is served from memory until it is live again.
//   - PostgreSQL: a connection of its own that LISTENs, reconnecting with a backoff when it drops.
//   - PGlite: one session for everyone, so the announcements are read from the protocol that flows through it (the
//     server's own connection and the admin command line's socket alike).
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { tagsOf, type Tag } from '../cache/tags.ts';

export type Change = { tags: readonly Tag[] } | { everything: true };
export type ChangeListener = (change: Change) => void;

export type ChangeFeed = {
  /** True while every change is being heard; what is kept in memory may only be served then. */
  readonly live: boolean;
  /** Counts announcements heard; a view built from reads that began before the count moved is not kept. */
  readonly heard: number;
  subscribe(listener: ChangeListener): void;
  /**
   * Resolves once every change committed before the call has been heard: what is in memory may then be served to a
   * request that arrived before the call. Embedded: at once (announcements are read in line with every answer).
   * PostgreSQL: a round trip on the listening connection, which delivers pending notifications before the answer;
   * calls made while one is in flight share the next one (one round trip serves every request waiting).
   */
  sync(): Promise<void>;
  close(): Promise<void>;
};

export const CHANNEL = 'revisions';

function parse(payload: string): Change {
  return payload === '*' ? { everything: true } : { tags: tagsOf(payload) };
}

const settled = Promise.resolve();

class Feed {
  live = false;
  heard = 0;
  sync(): Promise<void> {
    return settled;
  }
  readonly #listeners: ChangeListener[] = [];
  subscribe(listener: ChangeListener): void {
    this.#listeners.push(listener);
  }
  emit(change: Change): void {
    this.heard += 1;
    for (const listener of this.#listeners) listener(change);
  }
}

/** A feed that never goes live: nothing is kept in memory (tools, and databases whose feed is not started). */
export function silentFeed(): ChangeFeed {
  const feed = new Feed();
  return Object.assign(feed, { close: async () => undefined });
}

export function postgresChangeFeed(databaseUrl: string, warn: (message: string) => void = () => undefined): ChangeFeed {
  const feed = new Feed();
  let client: pg.Client | undefined;
  let closed = false;
  let delay = 100;
  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', (message) => {
      if (message.channel === CHANNEL) feed.emit(parse(message.payload ?? '*'));
    });
    const broken = (error?: Error) => {
      if (client !== next) return;
      client = undefined;
      feed.live = false;
      feed.emit({ everything: true });
      if (!closed) {
        if (error) warn(`change feed lost: ${error.message}; reconnecting`);
        setTimeout(() => void connect(), delay).unref();
        delay = Math.min(delay * 2, 10_000);
      }
      next.end().catch(() => undefined);
    };
    next.on('error', broken);
    next.on('end', () => broken());
    try {
      client = next;
      await next.connect();
      await next.query(`LISTEN ${CHANNEL}`);
      if (client === next) {
        delay = 100;
        feed.live = true;
        // anything may have changed while no one was listening
        feed.emit({ everything: true });
      }
    } catch (error) {
      broken(error as Error);
    }
  };
  // at most one round trip in flight; callers arriving meanwhile wait for the one after it (it starts after them)
  let inFlight: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const ping = (): Promise<void> => {
    const current = client;
    if (!current || !feed.live) return settled; // not live: nothing is served from memory anyway
    const done = current.query('').then(() => undefined, () => undefined).finally(() => {
      if (inFlight === done) inFlight = undefined;
    });
    inFlight = done;
    return done;
  };
  feed.sync = () => {
    if (!inFlight) return ping();
    queued ??= inFlight.then(() => {
      queued = undefined;
      return ping();
    });
    return queued;
  };
  void connect();
  return Object.assign(feed, {
    async close() {
      closed = true;
      feed.live = false;
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  });
}

const NOTIFICATION_RESPONSE = 0x41; // 'A': int32 length, int32 pid, channel\0, payload\0

/**
 * Reads NOTIFY announcements out of everything PGlite answers through its protocol (both the server's stream and
 * the socket of the admin command line go through `execProtocolRawStream`). The session LISTENs from the start.
 */
export async function pgliteChangeFeed(db: PGlite): Promise<ChangeFeed> {
  const feed = new Feed();
  const original = db.execProtocolRawStream.bind(db);
  type Options = Parameters<PGlite['execProtocolRawStream']>[1];
  (db as { execProtocolRawStream: PGlite['execProtocolRawStream'] }).execProtocolRawStream = async (message: Uint8Array, options?: Options) => {
    let pending = Buffer.alloc(0);
    await original(message, {
      ...options,
      onRawData: (data: Uint8Array) => {
        pending = pending.length === 0 ? Buffer.from(data) : Buffer.concat([pending, data]);
        while (pending.length >= 5) {
          const length = 1 + pending.readInt32BE(1);
          if (pending.length < length) break;
          if (pending[0] === NOTIFICATION_RESPONSE) {
            const body = pending.subarray(9, length);
            const channelEnd = body.indexOf(0);
            const channel = body.subarray(0, channelEnd).toString('utf8');
            const payload = body.subarray(channelEnd + 1, body.indexOf(0, channelEnd + 1)).toString('utf8');
            // heard before the answer goes on to its reader: a write is forgotten here before its caller goes on
            if (channel === CHANNEL) feed.emit(parse(payload));
          }
          pending = pending.subarray(length);
        }
        options?.onRawData?.(data);
      },
    });
  };
  await db.exec(`LISTEN ${CHANNEL}`);
  feed.live = true;
  return Object.assign(feed, { close: async () => undefined });
}
