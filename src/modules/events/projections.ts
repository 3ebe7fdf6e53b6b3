// Projections of the change log (change-log.ts): what follows from a change after it commits. Each projection has a
// durable cursor (table projection_cursors); a worker applies the rows after it in (tx, id) order, up to the oldest
// transaction still running (migration 0015 says why no row is passed over), and moves the cursor in the same
// transaction as what it wrote. So:
//   - a crash between a commit and its projection loses nothing: the rows are still after the cursor at restart;
//   - several processes on one PostgreSQL share the work: the cursor's row is taken FOR UPDATE SKIP LOCKED, so one
//     process at a time applies a projection, and a process that finds it taken goes on to the next;
//   - rows are applied in batches: a page written 50 times in a second is indexed once per batch, not 50 times.
// The worker wakes when this process answered a write (poke), and every POLL_MS for writes of other processes and
// tools. The embedded database has one connection: the worker's transactions queue with the requests' like any other.
// The horizon is the database's (changesAfter, events.repository.ts): a transaction that runs long in this database (a
// search reindex) holds the projections back until it ends; they lag then, nothing is lost. One in another database
// of the same server does not.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../http/logger.ts';
import type { ChangeRow } from './events.repository.ts';
import { changesAfter, createCursorAtEnd, cursorBehind, lastChangeId, moveCursor, nextChangeId, takeCursor } from './events.repository.ts';

export type Projection = {
  name: string;
  /** Applies the rows (in order) inside the transaction that then moves the cursor past them. */
  apply(em: EntityManager, changes: readonly ChangeRow[]): Promise<void>;
};

const projections = new Map<string, Projection>();

/** Registers a projection under its name (its cursor's row; registering the name again replaces it). */
export function project(projection: Projection): void {
  projections.set(projection.name, projection);
}

/** Rows read and applied per transaction. */
const BATCH = 500;
/** How often the worker looks for changes made by other processes, in milliseconds. */
const POLL_MS = 250;

/** A change that fails alone this many times in a row is passed over (and logged), so that it cannot stop the rest. */
const ATTEMPTS = 3;
const failing = new Map<string, { changeId: string; failures: number }>();

/**
 * Applies the next batch of one projection: how many rows it applied (or passed over), or `busy` when another
 * process holds the projection's cursor. A batch that fails is tried again one change at a time, to find the change
 * that fails; that one is tried ATTEMPTS times (on successive runs: a deadlock or a lost connection passes), then
 * passed over with an error in the log.
 */
export async function projectOnce(em: EntityManager, projection: Projection, log?: Logger): Promise<number | 'busy'> {
  try {
    return await applyNext(em, projection, BATCH, false);
  } catch {
    try {
      return await applyNext(em, projection, 1, false);
    } catch (error) {
      const next = await nextChangeId(em.fork(), projection.name);
      const seen = failing.get(projection.name);
      const failures = seen && seen.changeId === next ? seen.failures + 1 : 1;
      failing.set(projection.name, { changeId: next ?? '', failures });
      if (failures < ATTEMPTS) throw error;
      failing.delete(projection.name);
      log?.error({ err: error, projection: projection.name, change: next }, 'a change could not be projected and is passed over');
      return applyNext(em, projection, 1, true);
    }
  }
}

async function applyNext(em: EntityManager, projection: Projection, batch: number, passOver: boolean): Promise<number | 'busy'> {
  return em.fork().transactional(async (tx) => {
    const cursor = await takeCursor(tx, projection.name);
    if (!cursor) {
      // a projection added since the migrations starts at the end of the log, as its earlier work was done in the
      // writes' transactions (a cursor held by another process looks the same: it is left as it is)
      await createCursorAtEnd(tx, projection.name);
      return 'busy';
    }
    const rows = await changesAfter(tx, cursor, batch);
    if (rows.length === 0) return 0;
    if (!passOver) await projection.apply(tx, rows);
    await moveCursor(tx, projection.name, rows[rows.length - 1]!);
    return rows.length;
  });
}

/** Runs every projection until it has caught up (or another process holds it). */
export async function projectAll(em: EntityManager, log?: Logger): Promise<void> {
  for (const projection of projections.values()) {
    for (;;) {
      const applied = await projectOnce(em, projection, log);
      if (applied === 'busy' || applied < BATCH) break;
    }
  }
}

/** The worker of one process: wakes on poke and on a timer, one run at a time. */
export class ProjectionWorker {
  readonly #em: EntityManager;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(em: EntityManager, log: Logger) {
    this.#em = em;
    this.#log = log;
  }

  start(): void {
    this.#timer = setInterval(() => this.poke(), POLL_MS);
    this.#timer.unref();
    this.poke();
  }

  /** Something was written: run now, or once more after the run in progress. */
  poke(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = projectAll(this.#em, this.#log)
      .catch((error: Error) => this.#log.error({ err: error }, 'a projection of the change log failed; it is tried again'))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.poke();
        }
      });
  }

  /**
   * Resolves when every change committed before the call has been projected (by this process or another): a change
   * held back by a transaction still running elsewhere (see above) is waited for.
   */
  async settle(): Promise<void> {
    while (this.#running) await this.#running;
    const last = await lastChangeId(this.#em.fork());
    for (const projection of projections.values()) {
      for (;;) {
        const applied = await projectOnce(this.#em, projection, this.#log);
        if (applied === 0 && !(await cursorBehind(this.#em.fork(), projection.name, last))) break;
        if (applied === 'busy' || applied === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    while (this.#running) await this.#running;
  }
}
