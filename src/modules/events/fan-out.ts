// The change stream's writer process, as the server sees it. A pass of the hub (event-hub.ts) writes every open
// stream: 200 streams cost the server's one thread 200 socket writes a pass (~17 µs each, docs/speed.md), taken
// from the writers it serves. So once a stream's answer has begun (headers and first lines sent through the
// response: stream-out.ts), its socket is handed to a child process (fan-out.child.ts) over the IPC channel, and a
// pass sends that process one message: each set of events once, with the streams that get it. The server still
// decides everything (who may read what, when a stream ends); the child only writes, and reports the streams whose
// client went away.
// The child is forked when the first stream is handed over, and forked again after it died (its streams end with
// it: their clients resume with Last-Event-ID). Where it cannot run (no IPC, a fork that fails), the server writes
// the sockets itself, as it does for a stream whose socket cannot be handed over (TLS).
import { fork, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import path from 'node:path';
import { TLSSocket } from 'node:tls';
import type { Logger } from '../../http/logger.ts';
import type { Bytes } from './stream-out.ts';

const CHILD = path.join(import.meta.dirname, 'fan-out.child.ts');
/** How long close() waits for the child to end its streams and leave. */
const STOP_MS = 3000;

export class FanOut {
  readonly #log: Logger;
  readonly #maxBuffered: number;
  #child: ChildProcess | undefined;
  #nextId = 1;
  /** Each handed stream's child, and what the server does when the child reports it closed (or dies). */
  readonly #handed = new Map<number, { child: ChildProcess; onClosed: () => void }>();
  /** Writes gathered until the end of the current task: one message for a pass, whatever the streams. */
  #pending = new Map<Bytes, number[]>();
  #ends: number[] = [];
  #flushQueued = false;
  #failed = false;
  #closed = false;

  constructor(log: Logger, maxBuffered: number) {
    this.#log = log;
    this.#maxBuffered = maxBuffered;
  }

  /**
   * Hands the socket of an answer already begun to the child; the id to write to, or undefined when it stays here
   * (the server writes it itself). The server's copy of the socket is closed once the child has it.
   */
  adopt(socket: Socket, chunked: boolean, onClosed: () => void): number | undefined {
    if (this.#closed || this.#failed || socket instanceof TLSSocket || !(socket instanceof Socket) || socket.destroyed) return undefined;
    const child = this.#start();
    if (!child) return undefined;
    const id = this.#nextId++;
    this.#handed.set(id, { child, onClosed });
    // what was gathered for other streams goes first, so nothing overtakes the handle
    this.#flush();
    // not the server's connection any more: the handle is not tracked as a worker's (server.close need not ask the
    // child), and the server forgets the socket once the child has it (its copy closes; the connection stays open)
    (socket as Socket & { server: unknown }).server = null;
    child.send({ t: 'adopt', id, chunked, maxBuffered: this.#maxBuffered }, socket, { keepOpen: true }, (error) => {
      if (error) {
        this.#closedById(id);
        socket.destroy();
        return;
      }
      socket.destroy();
    });
    return id;
  }

  /** The child's process id while it runs. */
  get pid(): number | undefined {
    return this.#child?.connected ? this.#child.pid : undefined;
  }

  /** How many streams the child holds now. */
  get held(): number {
    return this.#handed.size;
  }

  write(id: number, bytes: Bytes): void {
    const ids = this.#pending.get(bytes);
    if (ids) ids.push(id);
    else this.#pending.set(bytes, [id]);
    this.#queueFlush();
  }

  end(id: number): void {
    if (!this.#handed.delete(id)) return;
    this.#ends.push(id);
    this.#queueFlush();
  }

  /** Ends every stream the child holds and waits (a while) for it to leave. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#flush();
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        child.kill();
        resolve();
      }, STOP_MS);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      if (child.connected) child.send({ t: 'stop' });
      else child.kill();
    });
  }

  #queueFlush(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#flushQueued = false;
    const child = this.#child;
    if (!child?.connected) {
      this.#pending.clear();
      this.#ends = [];
      return;
    }
    if (this.#pending.size > 0) {
      const parts = [...this.#pending].map(([bytes, ids]) => ({ data: bytes.plain, ids }));
      this.#pending = new Map();
      child.send({ t: 'write', parts });
    }
    if (this.#ends.length > 0) {
      child.send({ t: 'end', ids: this.#ends });
      this.#ends = [];
    }
  }

  #closedById(id: number): void {
    const handed = this.#handed.get(id);
    this.#handed.delete(id);
    handed?.onClosed();
  }

  #start(): ChildProcess | undefined {
    if (this.#child?.connected) return this.#child;
    try {
      // advanced serialization: the events' bytes go as bytes, not as JSON arrays of numbers
      const child = fork(CHILD, [], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      child.on('message', (message: { t: string; id?: number }) => {
        if (message.t === 'closed' && message.id !== undefined) this.#closedById(message.id);
      });
      child.on('error', (error) => this.#log.warn({ err: error }, 'the change stream\'s writer process failed'));
      child.once('exit', (code, signal) => {
        if (this.#child === child) this.#child = undefined;
        // its streams are gone with it: their clients resume with Last-Event-ID
        for (const [id, handed] of [...this.#handed]) if (handed.child === child) this.#closedById(id);
        if (!this.#closed) this.#log.warn({ code, signal }, 'the change stream\'s writer process left; its streams ended, a new one starts with the next stream');
      });
      // neither the child nor its channel keeps the server's process alive
      child.unref();
      child.channel?.unref();
      this.#child = child;
      return child;
    } catch (error) {
      this.#failed = true;
      this.#log.warn({ err: error }, 'the change stream\'s writer process could not start; this process writes the streams itself');
      return undefined;
    }
  }
}
