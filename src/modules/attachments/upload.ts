// Receiving an upload: the multipart body is parsed by busboy as it arrives, and the part named `file` is written to
// a temporary file while its SHA-256 is computed and its size counted; only its first bytes are kept in memory (to
// sniff its type). Past the size limit the upload stops at once with 413, and the temporary file goes; so it does
// when the client goes away mid-upload or the body is malformed. Other parts are read past and ignored.
//
// Old clients send each part with its own `Content-Length` and `Content-Transfer-Encoding: binary` headers and the
// file's own `Content-Type`: busboy ignores the first two (the boundary delimits a part) and the type is never
// believed (content.ts sniffs it).
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, RequestHandler } from 'express';
import busboy from 'busboy';
import { HttpError } from '../../http/errors.ts';
import { badRequest } from '../errors.ts';

/** How many leading bytes are kept to sniff the type (file-type reads at most this many for its signatures). */
export const SNIFF_BYTES = 4100;

export type ReceivedFile = {
  tempPath: string; filename: string; byteSize: number; checksum: string; head: Buffer;
  /** The plain fields of the body (other than `file`), by name: the last value of each (an import's `name`). */
  fields: Record<string, string>;
};

/** 413 naming the limit (in bytes, and in MiB for people). */
export function uploadTooLarge(limit: number): HttpError {
  const mebibytes = limit / (1024 * 1024);
  const human = Number.isInteger(mebibytes) ? `${mebibytes} MiB` : `${limit} bytes`;
  return new HttpError(413, 'payload_too_large', `the file is larger than the limit of ${limit} bytes (${human})`);
}

/** The client went away before the body was whole (nobody reads the answer; the log shows it). */
const uploadAborted = () => new HttpError(400, 'malformed_body', 'the request body was cut off');

/** A file name as stored: the last path segment, no control characters, at most 255 characters (keeping the extension). */
export function cleanFilename(raw: string | undefined): string {
  const last = (raw ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const name = last.replace(/[\u0000-\u001f\u007f]/g, '').normalize('NFC').trim();
  if (name === '' || name === '.' || name === '..') return 'file';
  const characters = [...name];
  if (characters.length <= 255) return name;
  const extension = [...path.extname(name)];
  return characters.slice(0, 255 - extension.length).join('') + extension.join('');
}

/** Hashes, counts and keeps the head of what passes through. */
function meter() {
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headLength = 0;
  let size = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      if (headLength < SNIFF_BYTES) {
        const part = chunk.subarray(0, SNIFF_BYTES - headLength);
        // copied: a slice would keep busboy's whole chunk alive
        head.push(Buffer.from(part));
        headLength += part.length;
      }
      done(null, chunk);
    },
  });
  return { transform, result: () => ({ checksum: hash.digest('hex'), byteSize: size, head: Buffer.concat(head) }) };
}

/**
 * Reads the multipart body of `req` and writes its `file` part to a new file in `tempDir`. Resolves once the whole
 * body is read and the file written; rejects with 400 (malformed body, no `file` part), 413 (past `limit`), or an
 * abort, and then no temporary file is left.
 */
export async function receiveUpload(req: Request, options: { tempDir: string; limit: number }): Promise<ReceivedFile> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // browsers send a UTF-8 file name raw in `filename="..."` (Japanese names included); `filename*` is read too
      defParamCharset: 'utf8',
      // larger slices of the file part than the 64 KiB default: fewer, larger writes (a few per upload in flight)
      fileHwm: 256 * 1024,
      limits: { fileSize: options.limit + 1, fields: 20, fieldSize: 64 * 1024, parts: 40, headerPairs: 50 },
    });
  } catch {
    throw badRequest('the multipart body has no boundary');
  }
  await mkdir(options.tempDir, { recursive: true });
  const tempPath = path.join(options.tempDir, `upload-${randomUUID()}`);

  return new Promise<ReceivedFile>((resolve, reject) => {
    let settled = false;
    let received: Promise<ReceivedFile> | undefined;
    // the temporary file's stream is closed (whether it finished or was destroyed)
    let closed: Promise<unknown> = Promise.resolve();
    let streams: Array<{ destroy(): unknown }> = [];
    const fields = Object.create(null) as Record<string, string>;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      parser.removeAllListeners('close');
      parser.on('error', () => undefined);
      // the rest of the body is dropped (node reads it past once the answer is sent, or closes the connection);
      // the temporary file goes once its stream is closed, so nothing can create it again after
      for (const stream of streams) stream.destroy();
      void closed.then(() => rm(tempPath, { force: true })).finally(() => reject(error));
    };

    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || received) {
        stream.resume();
        return;
      }
      const { transform, result } = meter();
      const out = createWriteStream(tempPath, { flags: 'wx', highWaterMark: 256 * 1024 });
      streams = [stream, transform, out];
      closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
      // busboy stops at `fileSize` bytes and says so: one byte past the limit is too large, the limit itself is not
      stream.once('limit', () => fail(uploadTooLarge(options.limit)));
      received = pipeline(stream, transform, out).then(() => ({ tempPath, filename: cleanFilename(info.filename), ...result(), fields }));
      received.catch(fail);
    });
    parser.on('field', (name, value) => {
      if (name === 'file') fail(badRequest('the part `file` must be a file (with a file name), not a field', [{ pointer: '/file', detail: 'must be a file' }]));
      else fields[name] = value;
    });
    parser.on('error', fail);
    parser.on('close', () => {
      if (!received) {
        fail(badRequest('the multipart body has no part named `file`', [{ pointer: '/file', detail: 'is required' }]));
        return;
      }
      received.then((file) => {
        if (settled) return;
        settled = true;
        resolve(file);
      }, fail);
    });
    req.on('close', () => {
      if (!req.complete) fail(uploadAborted());
    });
    req.pipe(parser);
  });
}

/**
 * Runs before the validator (openapi.ts): a multipart body is left unread for the operation to stream, and the
 * validator is shown the placeholder multer would have left (`file: ''`), so it checks the media type and the rest
 * of the request and routes on. The operation reads the real parts (`receiveUpload`), after its 404/403 checks.
 */
export const deferMultipartBody: RequestHandler = (req, _res, next) => {
  if (req.is('multipart/form-data') && req.body === undefined) req.body = { file: '' };
  next();
};
