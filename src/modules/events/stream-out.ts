// Where one change stream's bytes go (event-hub.ts). Until its answer has begun they wait here (the `retry` line, a
// `truncated` event, the first events caught up); then they go through the response, which sends the headers. Once
// those bytes are on the socket, the hub writes each set of events to the socket itself, already framed as a chunk
// of the chunked answer (the frame made once per set, whatever the streams that share it: Bytes). A pass writes
// every open stream: through a PassThrough piped to the response a write cost ~29 µs of the server's CPU, to the
// socket ~17 µs (docs/speed.md), and that is most of what the streams cost the writers. With a writer process
// (fan-out.ts) the socket is handed to it instead, and it writes and ends the answer; otherwise the answer is ended
// through the response, which sends the last chunk.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { FanOut } from './fan-out.ts';

const CRLF = Buffer.from('\r\n');

/** `chunk` as one chunk of a chunked answer (RFC 9112 7.1). */
export function chunkFrame(chunk: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, CRLF]);
}

/** The bytes of a set of events, and (made when first needed) the same as a chunk of a chunked answer. */
export class Bytes {
  readonly plain: Buffer;
  #framed: Buffer | undefined;
  constructor(plain: Buffer) {
    this.plain = plain;
  }
  get framed(): Buffer {
    return (this.#framed ??= chunkFrame(this.plain));
  }
}

export class StreamOut {
  /** The stream's life: destroyed when the client goes away or when the stream ends (end()). */
  readonly body = new PassThrough();
  readonly #fanOut: FanOut | undefined;
  /** What is written before the answer's first bytes are on the socket, and whether it was ended meanwhile. */
  #waiting: Bytes[] = [];
  #endRequested = false;
  #res: ServerResponse | undefined;
  /** Where the bytes go once the answer has begun: the socket, written here (and whether it takes chunks), or the writer process. */
  #socket: Socket | undefined;
  #chunked = false;
  #handed: number | undefined;

  constructor(fanOut?: FanOut) {
    this.#fanOut = fanOut;
  }

  /** The response is ready (status and headers set, openapi.ts): the answer begins with what waited. */
  attach(res: ServerResponse): void {
    if (this.body.destroyed) return;
    if (res.destroyed) {
      this.body.destroy();
      return;
    }
    this.#res = res;
    // the client gone: the stream ends (not when this process's copy of a handed socket closes)
    res.on('close', () => {
      if (this.#handed === undefined) this.body.destroy();
    });
    const waiting = this.#take();
    if (this.#endRequested) {
      res.end(waiting);
      this.body.destroy();
      return;
    }
    res.write(waiting, (error) => {
      if (error || res.destroyed || !res.socket || this.body.destroyed) return;
      const socket = res.socket;
      // what Node chose for this answer: chunks (HTTP/1.1), or the bytes as they are until the connection closes
      this.#chunked = (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding === true;
      const later = this.#waiting;
      this.#waiting = [];
      if (this.#endRequested) {
        res.end(Buffer.concat(later.map((bytes) => bytes.plain)));
        this.body.destroy();
        return;
      }
      this.#handed = this.#fanOut?.adopt(socket, this.#chunked, () => this.body.destroy());
      if (this.#handed === undefined) this.#socket = socket;
      for (const bytes of later) this.write(bytes);
    });
  }

  #take(): Buffer {
    const waiting = Buffer.concat(this.#waiting.map((bytes) => bytes.plain));
    this.#waiting = [];
    return waiting;
  }

  /** Bytes waiting to be sent to this client, here (the writer process drops a slow client itself). */
  get buffered(): number {
    return this.#socket?.writableLength ?? this.#waiting.reduce((total, bytes) => total + bytes.plain.length, 0);
  }

  get ended(): boolean {
    return this.body.destroyed || this.#endRequested;
  }

  write(bytes: Bytes): void {
    if (this.ended) return;
    if (this.#handed !== undefined) this.#fanOut!.write(this.#handed, bytes);
    else if (this.#socket) this.#socket.write(this.#chunked ? bytes.framed : bytes.plain);
    else this.#waiting.push(bytes);
  }

  /** Ends the answer (its last chunk) and the stream's life: the hub lets the stream go. */
  end(): void {
    if (this.ended) return;
    if (this.#handed !== undefined) {
      this.#fanOut!.end(this.#handed);
      this.body.destroy();
    } else if (this.#socket) {
      if (!this.#res!.writableEnded) this.#res!.end();
      this.body.destroy();
    } else this.#endRequested = true;
  }
}
