// The change stream's writer process (fan-out.ts forks it): it holds the sockets of the open streams, handed over by
// the server once their answer has begun, and writes them what the server's passes send, each set of events once
// for all the streams that share it. It knows nothing of events, tokens or the database: the server decides who
// gets what and when a stream ends. Plain Node: of the server's code it imports the chunk's framing alone.
import type { Socket } from 'node:net';
import { chunkFrame } from './stream-out.ts';

type Held = { socket: Socket; chunked: boolean };
type Message =
  | { t: 'adopt'; id: number; chunked: boolean; maxBuffered: number }
  | { t: 'write'; parts: { data: Uint8Array; ids: number[] }[] }
  | { t: 'end'; ids: number[] }
  | { t: 'stop' };

const held = new Map<number, Held>();
/** Sockets not yet closed, ended ones included: the process leaves, when stopping, once their last bytes are out. */
let open = 0;
let maxBuffered = 4 * 1024 * 1024;
let stopping = false;
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

const tell = (message: { t: 'closed'; id: number }): void => {
  if (process.connected) process.send!(message);
};

function end(id: number): void {
  const stream = held.get(id);
  if (!stream) return;
  held.delete(id);
  if (stream.chunked && stream.socket.writable) stream.socket.write(LAST_CHUNK);
  stream.socket.end();
  tell({ t: 'closed', id });
}

function maybeExit(): void {
  if (stopping && open === 0) process.exit(0);
}

function stop(): void {
  if (stopping) return;
  stopping = true;
  for (const id of [...held.keys()]) end(id);
  setTimeout(() => process.exit(0), 2000).unref();
  maybeExit();
}

process.on('message', (message: Message, handle?: Socket) => {
  switch (message.t) {
    case 'adopt': {
      maxBuffered = message.maxBuffered;
      if (!handle) {
        tell({ t: 'closed', id: message.id });
        return;
      }
      const socket = handle;
      socket.setNoDelay(true);
      held.set(message.id, { socket, chunked: message.chunked });
      open += 1;
      // read (a stream's client sends nothing), so that a client going away is seen: its stream closes, and the
      // server hears of it
      socket.on('data', () => {});
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        open -= 1;
        if (held.get(message.id)?.socket === socket) {
          held.delete(message.id);
          tell({ t: 'closed', id: message.id });
        }
        maybeExit();
      });
      return;
    }
    case 'write':
      for (const part of message.parts) {
        const plain = Buffer.from(part.data.buffer, part.data.byteOffset, part.data.byteLength);
        let framed: Buffer | undefined;
        for (const id of part.ids) {
          const stream = held.get(id);
          if (!stream || !stream.socket.writable) continue;
          // a client that reads this much slower than events come is dropped; it resumes with Last-Event-ID
          if (stream.socket.writableLength > maxBuffered) {
            end(id);
            continue;
          }
          if (stream.chunked) stream.socket.write(framed ??= chunkFrame(plain));
          else stream.socket.write(plain);
        }
      }
      return;
    case 'end':
      for (const id of message.ids) end(id);
      return;
    case 'stop':
      stop();
  }
});

// the server gone: its streams end (their clients resume elsewhere with Last-Event-ID)
process.on('disconnect', stop);

