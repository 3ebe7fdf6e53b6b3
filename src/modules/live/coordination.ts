// Who saves a live document and whose changes it holds, in one process or across several.
//
// One process (no REDIS_URL): it serves every live document and saves them; the authors are kept in memory.
//
// Several processes (REDIS_URL): Hocuspocus's Redis extension shares each document's updates and presence between
// the processes that have it open, so each holds the same Yjs document. One of them at a time owns it: a lease in
// Redis (OWNER_LEASE_FACTOR times the recheck interval, renewed at every recheck). The owner alone saves the
// document, merges writes made elsewhere into it and keeps its Yjs state: two processes merging the same write
// would each add its text, and the document would hold it twice. The authors of unsaved changes are noted in Redis
// by whichever process their connection is on, and taken by the owner's save. The extension's own store lock is not
// used: the lease decides who stores, and a save skipped under that lock would wait for the next keystroke.
import { randomUUID } from 'node:crypto';
import type { Extension } from '@hocuspocus/server';
import type { Caller } from '../access/caller.ts';
import type { Logger } from '../../http/logger.ts';

export type Coordination = {
  /** What Hocuspocus needs to share documents between processes (nothing for one process). */
  extensions: Extension[];
  /** Makes this process the owner of `documentName` or keeps it so; answers whether it is. */
  claim(documentName: string): Promise<boolean>;
  release(documentName: string): Promise<void>;
  /** Someone changed the document through a connection of this process. */
  noteAuthor(documentName: string, caller: Caller): void;
  /** The authors of the changes since the last save, who changed it last at the end; taken. */
  takeAuthors(documentName: string): Promise<Caller[]>;
  /** Authors taken for a save that failed, given back. */
  giveBack(documentName: string, authors: readonly Caller[]): Promise<void>;
  close(): Promise<void>;
};

/** A user's caller for a save when the connection that changed the document is on another process. */
export type CallersOf = (userIds: readonly number[]) => Promise<Caller[]>;

export function localCoordination(): Coordination {
  const authors = new Map<string, Map<number, Caller>>();
  return {
    extensions: [],
    claim: async () => true,
    release: async () => undefined,
    noteAuthor(documentName, caller) {
      const pending = authors.get(documentName) ?? new Map<number, Caller>();
      pending.delete(caller.user.id);
      pending.set(caller.user.id, caller);
      authors.set(documentName, pending);
    },
    async takeAuthors(documentName) {
      const pending = authors.get(documentName);
      authors.delete(documentName);
      return pending ? [...pending.values()] : [];
    },
    async giveBack(documentName, taken) {
      const pending = new Map(taken.map((caller) => [caller.user.id, caller]));
      for (const [id, caller] of authors.get(documentName) ?? []) {
        pending.delete(id);
        pending.set(id, caller);
      }
      authors.set(documentName, pending);
    },
    async close() {},
  };
}

/** The owner's lease lasts this many recheck intervals: a process that died is replaced within it. */
export const OWNER_LEASE_FACTOR = 3;

const CLAIM = `local held = redis.call('get', KEYS[1])
if held == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end
if not held then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;
const TAKE = `local taken = redis.call('zrange', KEYS[1], 0, -1) redis.call('del', KEYS[1]) return taken`;

export async function redisCoordination(url: string, recheckMs: number, callersOf: CallersOf, logger: Logger): Promise<Coordination> {
  const [{ Redis: SharedDocuments }, { Redis: IORedis }] = await Promise.all([import('@hocuspocus/extension-redis'), import('ioredis')]);
  const identifier = `notes-${randomUUID()}`;
  const client = () => {
    const made = new IORedis(url, { maxRetriesPerRequest: 2 });
    made.on('error', (error: Error) => logger.warn({ error: error.message }, 'Redis (live documents) failed'));
    return made;
  };
  const lease = String(OWNER_LEASE_FACTOR * recheckMs);
  const redis = client();
  /** What this process believes it owns: kept through a Redis failure, so a document is not left without an owner. */
  const owned = new Set<string>();
  /** Callers of this process's connections, by user: a save for them keeps their token's app. */
  const known = new Map<number, Caller>();
  /** Authors noted in this turn of the event loop, sent to Redis together. */
  const noted = new Map<string, Set<number>>();
  let flush: NodeJS.Immediate | undefined;

  class WithoutStoreLock extends SharedDocuments {
    override async onStoreDocument(): Promise<void> {}
    override async afterStoreDocument(): Promise<void> {}

    /**
     * The extension answers a peer's message with a publish from a listener whose promise nobody awaits: a message
     * arriving while the connections close (at shutdown) rejected unhandled and ended the process. The listener is
     * wrapped to log instead, and what listens stops before what publishes.
     */
    constructor(configuration: ConstructorParameters<typeof SharedDocuments>[0]) {
      super(configuration);
      const self = this as unknown as { handleIncomingMessage: (channel: Buffer, data: Buffer) => Promise<void> };
      const handle = self.handleIncomingMessage;
      this.sub.off('messageBuffer', handle);
      this.sub.on('messageBuffer', (channel: Buffer, data: Buffer) => {
        handle(channel, data).catch((error: Error) => logger.warn({ error: error.message }, 'a live update from another process could not be handled'));
      });
    }

    override async onDestroy(): Promise<void> {
      this.sub.disconnect(false);
      await super.onDestroy();
    }
  }
  const extension = new WithoutStoreLock({ createClient: client, prefix: 'notes-live', identifier });

  const key = (kind: 'owner' | 'authors', documentName: string) => `notes-live:${kind}:${documentName}`;

  function sendNoted(): void {
    flush = undefined;
    const now = Date.now();
    const batch = redis.multi();
    // scored by the time of their latest change: the save is made for whoever changed it last
    for (const [documentName, users] of noted) batch.zadd(key('authors', documentName), ...[...users].flatMap((id) => [now, id]));
    noted.clear();
    batch.exec().catch((error: Error) => logger.warn({ error: error.message }, 'noting live authors in Redis failed'));
  }

  return {
    extensions: [extension as unknown as Extension],
    async claim(documentName) {
      try {
        const held = (await redis.eval(CLAIM, 1, key('owner', documentName), identifier, lease)) === 1;
        if (held) owned.add(documentName);
        else owned.delete(documentName);
        return held;
      } catch (error) {
        logger.warn({ error: error instanceof Error ? error.message : String(error), document: documentName }, 'claiming a live document in Redis failed');
        return owned.has(documentName);
      }
    },
    async release(documentName) {
      owned.delete(documentName);
      await redis.eval(RELEASE, 1, key('owner', documentName), identifier).catch(() => undefined);
    },
    noteAuthor(documentName, caller) {
      known.set(caller.user.id, caller);
      const users = noted.get(documentName) ?? new Set<number>();
      users.add(caller.user.id);
      noted.set(documentName, users);
      flush ??= setImmediate(sendNoted);
    },
    async takeAuthors(documentName) {
      if (flush) {
        clearImmediate(flush);
        sendNoted();
      }
      const ids = ((await redis.eval(TAKE, 1, key('authors', documentName))) as string[]).map(Number);
      const missing = ids.filter((id) => !known.has(id));
      const loaded = new Map((missing.length > 0 ? await callersOf(missing) : []).map((caller) => [caller.user.id, caller]));
      return ids.map((id) => known.get(id) ?? loaded.get(id)).filter((caller): caller is Caller => caller !== undefined);
    },
    async giveBack(documentName, authors) {
      if (authors.length === 0) return;
      // before anything noted since: 'NX' keeps the later change of whoever typed again meanwhile
      const start = Date.now() - 60_000;
      await redis.zadd(key('authors', documentName), 'NX', ...authors.flatMap((caller, at) => [start + at, caller.user.id])).catch(() => undefined);
    },
    async close() {
      if (flush) {
        clearImmediate(flush);
        sendNoted();
      }
      await Promise.all([...owned].map((documentName) => redis.eval(RELEASE, 1, key('owner', documentName), identifier).catch(() => undefined)));
      redis.disconnect();
    },
  };
}
