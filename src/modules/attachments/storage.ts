// Where attachment bytes live, behind one small interface: content-addressed by their SHA-256 (hex), so the same
// bytes are stored once however many attachments (uploads, forks) refer to them. Two implementations: a local
// directory under DATA_DIR (the default) and an S3-compatible object store (s3-storage.ts), chosen by configuration.
// An upload is first received into a temporary file (upload.ts) in `tempDir`; `put` then moves it into place.
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../../config.ts';
import { S3Storage } from './s3-storage.ts';
import { CHECKSUM, requireChecksum, type ByteRange, type Storage } from './storage.contract.ts';

export type { ByteRange, Storage };

/**
 * `<root>/ab/cd/abcd…` for the bytes, `<root>/tmp/` for uploads in flight (the same file system, so a rename is
 * atomic: a file is either absent or whole, whatever crashes when).
 */
export class LocalStorage implements Storage {
  readonly root: string;
  readonly tempDir: string;

  constructor(root: string) {
    this.root = root;
    this.tempDir = path.join(root, 'tmp');
  }

  pathOf(checksum: string): string {
    requireChecksum(checksum);
    return path.join(this.root, checksum.slice(0, 2), checksum.slice(2, 4), checksum);
  }

  async has(checksum: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(checksum))).isFile();
    } catch {
      return false;
    }
  }

  async put(checksum: string, tempPath: string): Promise<void> {
    const target = this.pathOf(checksum);
    await mkdir(path.dirname(target), { recursive: true });
    // replacing an existing file with the same bytes is harmless; the rename itself is atomic
    await rename(tempPath, target);
  }

  async read(checksum: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(checksum);
    // opened before answering, so a missing file is an error here rather than a cut-off 200
    // 1 MiB reads: far fewer system calls than the 64 KiB default (docs/speed.md, Attachments), for one buffer per
    // download in flight
    const stream = createReadStream(file, { highWaterMark: 1024 * 1024, ...(range ? { start: range.start, end: range.end } : {}) });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  async delete(checksum: string): Promise<void> {
    await rm(this.pathOf(checksum), { force: true });
  }

  async *list(): AsyncIterable<string> {
    const level = async (directory: string) => (await readdir(directory, { withFileTypes: true }).catch(() => []));
    for (const first of await level(this.root)) {
      if (!first.isDirectory() || !/^[0-9a-f]{2}$/.test(first.name)) continue;
      for (const second of await level(path.join(this.root, first.name))) {
        if (!second.isDirectory()) continue;
        for (const file of await level(path.join(this.root, first.name, second.name))) {
          if (file.isFile() && CHECKSUM.test(file.name)) yield file.name;
        }
      }
    }
  }
}

const storages = new WeakMap<Config, Storage>();

/** The storage the configuration names (one per configuration, so per app). */
export function storageFor(config: Config): Storage {
  let storage = storages.get(config);
  if (!storage) {
    const local = path.join(config.dataDir, 'attachments');
    storage = config.storage.kind === 's3' ? new S3Storage(config.storage, path.join(local, 'tmp')) : new LocalStorage(local);
    storages.set(config, storage);
  }
  return storage;
}
