// The server's own connection to the embedded database, without a socket: node-postgres writes its protocol
// messages into this stream and PGlite answers them in-process. Over the Unix socket each message crossed the kernel
// twice and waited for its own turn of the event loop; here a whole exchange (Parse, Bind, Execute, Sync) runs in one
// go. The socket (pglite-socket) still serves the admin command line while the server runs.
//
// PGlite is one database session. This stream holds it exclusively (PGlite's own `runExclusive`, which the socket
// server also takes for every message) from its first message until an exchange ends outside a transaction: the
// admin command line's statements can then never land inside one of ours, nor between our Parse and our Sync; and
// ours never start inside one of the admin command's transactions (openSession waits for it to end).
import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';

type Session = { close(): void };

/** Enters PGlite's exclusive section and stays in it until `close()`. */
function enterExclusive(db: PGlite): Promise<Session> {
  return new Promise((resolve, reject) => {
    db.runExclusive(() => new Promise<void>((close) => resolve({ close }))).catch(reject);
  });
}

/**
 * The session, for an exchange of ours. The socket server holds PGlite exclusively for one message at a time only,
 * so between two statements of an admin command's transaction the session is free but inside that transaction:
 * ours must not run there (it would be part of their transaction, and holding the session until "our" transaction
 * ends, we would wait forever for theirs). So we let go and come back until their transaction is over.
 */
async function openSession(db: PGlite): Promise<Session> {
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    const session = await enterExclusive(db);
    if (!db.isInTransaction()) return session;
    session.close();
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'

export class PGliteStream extends Duplex {
  readonly #db: PGlite;
  #buffer: Buffer = Buffer.alloc(0);
  #startupDone = false;
  #session: Session | undefined;

  constructor(db: PGlite) {
    super();
    this.#db = db;
  }

  // what node-postgres expects of a socket
  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    this.#drain().then(() => callback(), (error: Error) => callback(error));
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#endSession().then(() => {
      this.push(null);
      callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#endSession().then(() => callback(error), () => callback(error));
  }

  /** The complete messages at the head of the buffer. */
  #takeMessages(): Uint8Array[] {
    const messages: Uint8Array[] = [];
    for (;;) {
      const buffer = this.#buffer;
      if (!this.#startupDone) {
        // the startup message has no type byte: int32 length, int32 protocol version, parameters
        if (buffer.length < 4) break;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) break;
        messages.push(buffer.subarray(0, length));
        this.#buffer = buffer.subarray(length);
        this.#startupDone = true;
        continue;
      }
      if (buffer.length < 5) break;
      const length = 1 + buffer.readInt32BE(1);
      if (buffer.length < length) break;
      messages.push(buffer.subarray(0, length));
      this.#buffer = buffer.subarray(length);
    }
    return messages;
  }

  async #drain(): Promise<void> {
    const messages = this.#takeMessages();
    for (const message of messages) {
      if (message[0] === TERMINATE && this.#startupDone) {
        await this.#endSession();
        continue;
      }
      this.#session ??= await openSession(this.#db);
      await this.#db.execProtocolRawStream(message, { onRawData: (data: Uint8Array) => this.push(Buffer.from(data)) });
      // an exchange is over at Sync (or a simple Query); outside a transaction the session is free for others
      const type = message[0];
      if ((type === SYNC || type === QUERY) && !this.#db.isInTransaction() && this.#buffer.length === 0) {
        this.#session.close();
        this.#session = undefined;
      }
    }
  }

  async #endSession(): Promise<void> {
    if (!this.#session) return;
    try {
      if (this.#db.isInTransaction()) await this.#db.execProtocolRaw(rollbackMessage());
    } finally {
      this.#session.close();
      this.#session = undefined;
    }
  }
}

/** A simple-protocol `ROLLBACK`. */
function rollbackMessage(): Uint8Array {
  const text = Buffer.from('ROLLBACK\u0000', 'utf8');
  const message = Buffer.alloc(5 + text.length);
  message[0] = QUERY;
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}
