// Where one change stream's bytes go (event-hub.ts). Until its answer has begun they wait here (the `retry` line, a
// `truncated` event, the first events caught up); then they go through the response, which sends the headers. Once
// those bytes are on the socket, the hub writes each set of events to the socket itself, already framed as a chunk
// of the chunked answer (the frame made once per set, whatever the streams that share it: Bytes). A pass writes
// every open stream: through a PassThrough piped to the response a write cost ~29 µs of the server's CPU, to the
// socket ~17 µs (docs/speed.md), and that is most of what the streams cost the writers. The answer is ended
// through the response, which sends the last chunk.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';

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
  /** The stream's life: destroyed when the client goes away (openapi.ts) or when the stream ends (end()). */
  readonly body = new PassThrough();
  /** What was written before the answer began, and whether it was ended meanwhile. */
  #waiting: Buffer[] = [];
  #endWhenAttached = false;
  #res: ServerResponse | undefined;
  /** The socket the hub writes to, once the response's own bytes are on it; whether it takes chunks. */
  #socket: Socket | undefined;
  #chunked = false;

  /** The response is ready (status and headers set, openapi.ts): what waited goes out through it. */
  attach(res: ServerResponse): void {
    if (this.body.destroyed) return;
    if (res.destroyed) {
      this.body.destroy();
      return;
    }
    this.#res = res;
    const waiting = Buffer.concat(this.#waiting);
    this.#waiting = [];
    if (this.#endWhenAttached) {
      res.end(waiting);
      this.body.destroy();
      return;
    }
    res.write(waiting, (error) => {
      // a client already gone: the response's close destroys the body, and the stream leaves
      if (error || res.destroyed || !res.socket || this.body.destroyed) return;
      this.#socket = res.socket;
      // what Node chose for this answer: chunks (HTTP/1.1), or the bytes as they are until the connection closes
      this.#chunked = (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding === true;
    });
  }

  /** Bytes waiting to be sent to this client (a client that reads too slowly is dropped: the hub). */
  get buffered(): number {
    return this.#socket?.writableLength ?? this.#res?.writableLength ?? this.#waiting.reduce((total, part) => total + part.length, 0);
  }

  get ended(): boolean {
    return this.body.destroyed || this.#endWhenAttached;
  }

  write(bytes: Bytes): void {
    if (this.ended) return;
    if (this.#socket) this.#socket.write(this.#chunked ? bytes.framed : bytes.plain);
    else if (this.#res) this.#res.write(bytes.plain);
    else this.#waiting.push(bytes.plain);
  }

  /** Ends the answer (its last chunk) and the stream's life: the hub lets the stream go. */
  end(): void {
    if (this.ended) return;
    if (this.#res) {
      if (!this.#res.writableEnded) this.#res.end();
      this.body.destroy();
    } else this.#endWhenAttached = true;
  }
}
