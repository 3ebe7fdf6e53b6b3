// Multipart bodies as clients send them: browsers (a part with its file name and type), and the old clients, which
// give each part its own Content-Length and Content-Transfer-Encoding: binary headers.
import { request } from 'node:http';
import { Readable } from 'node:stream';

export type Part = {
  name: string;
  /** Absent: a plain field. */
  filename?: string;
  /** Sent as `filename*=UTF-8''...` instead of a raw UTF-8 `filename`. */
  extendedFilename?: boolean;
  type?: string;
  data: Buffer | string;
  /** The old clients' per-part headers. */
  legacyHeaders?: boolean;
};

export const BOUNDARY = '----notes-test-boundary-7MA4YWxkTrZu0gW';
export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

function partHead(part: Part): string {
  const data = Buffer.from(part.data);
  let disposition = `form-data; name="${part.name}"`;
  if (part.filename !== undefined) {
    disposition += part.extendedFilename ? `; filename*=UTF-8''${encodeURIComponent(part.filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}` : `; filename="${part.filename}"`;
  }
  const lines = [`--${BOUNDARY}`, `Content-Disposition: ${disposition}`];
  if (part.type) lines.push(`Content-Type: ${part.type}`);
  if (part.legacyHeaders) lines.push(`Content-Length: ${data.length}`, 'Content-Transfer-Encoding: binary');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export function multipartBody(parts: Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) chunks.push(Buffer.from(partHead(part), 'utf8'), Buffer.from(part.data), Buffer.from('\r\n'));
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

/** `size` deterministic bytes from `seed`, made chunk by chunk (never whole in memory). */
export function generatedBytes(size: number, seed: number, chunkSize = 64 * 1024): Readable {
  let sent = 0;
  const pattern = Buffer.alloc(chunkSize);
  for (let i = 0; i < chunkSize; i += 1) pattern[i] = (seed * 31 + i * 7) & 0xff;
  return new Readable({
    read() {
      if (sent >= size) {
        this.push(null);
        return;
      }
      const length = Math.min(chunkSize, size - sent);
      const chunk = Buffer.from(pattern.subarray(0, length));
      // each chunk differs (its offset and the seed), so no two files or chunks are alike
      if (length >= 16) {
        chunk.writeUInt32BE(seed, 0);
        chunk.writeDoubleBE(sent, 4);
      }
      sent += length;
      this.push(chunk);
    },
  });
}

/** A multipart upload of one generated file, streamed; resolves with the answer (or how far the upload got). */
export function streamUpload(url: string, token: string, options: { size: number; seed: number; filename?: string; abortAfter?: number }): Promise<{ status: number; body: string; sentWhenAnswered: number }> {
  const head = Buffer.from(partHead({ name: 'file', filename: options.filename ?? `big-${options.seed}.bin`, type: 'application/octet-stream', data: '' }));
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = -1;
    const req = request(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': MULTIPART, 'Content-Length': String(head.length + options.size + tail.length) },
    });
    req.on('response', (res) => {
      answered = sent;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), sentWhenAnswered: answered }));
    });
    req.on('error', (error) => (options.abortAfter !== undefined || answered >= 0 ? resolve({ status: 0, body: String(error), sentWhenAnswered: answered }) : reject(error)));
    req.write(head);
    const source = generatedBytes(options.size, options.seed);
    source.on('data', (chunk: Buffer) => {
      if (answered >= 0) {
        source.destroy();
        return;
      }
      sent += chunk.length;
      if (!req.write(chunk)) {
        source.pause();
        req.once('drain', () => source.resume());
      }
      if (options.abortAfter !== undefined && sent >= options.abortAfter) {
        source.destroy();
        req.on('error', () => undefined);
        req.destroy();
        resolve({ status: 0, body: 'aborted by the client', sentWhenAnswered: -1 });
      }
    });
    source.on('end', () => req.end(tail));
  });
}
