// What every place that keeps attachment bytes offers (storage.ts: the local directory and the choice by
// configuration; s3-storage.ts: an S3-compatible store), in a file of its own so neither implementation imports the
// module that chooses between them.
import type { Readable } from 'node:stream';

/** A byte range, both ends included (as in `Range: bytes=start-end`). */
export type ByteRange = { start: number; end: number };

export interface Storage {
  /** Where uploads are received before `put`: a directory on a local disk. */
  readonly tempDir: string;
  /** True when the bytes with this checksum are stored. */
  has(checksum: string): Promise<boolean>;
  /** Stores the file at `tempPath` as `checksum` (it may move the file away). Never leaves half an object. */
  put(checksum: string, tempPath: string, byteSize: number): Promise<void>;
  /** The bytes (or a range of them), streamed. */
  read(checksum: string, range?: ByteRange): Promise<Readable>;
  /** Removes the bytes; nothing happens when they are not stored. */
  delete(checksum: string): Promise<void>;
  /** Every checksum stored (for the sweep of bytes no attachment refers to any more, sweep.ts). */
  list(): AsyncIterable<string>;
}

export const CHECKSUM = /^[0-9a-f]{64}$/;
export function requireChecksum(checksum: string): string {
  if (!CHECKSUM.test(checksum)) throw new Error(`not a SHA-256 checksum: ${checksum}`);
  return checksum;
}
