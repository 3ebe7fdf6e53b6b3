// Reading a note's export zip (docs/note-export.schema.json) from a temporary file, with yauzl: the central directory
// is read once into a map of names (random access afterwards, in whatever order the import needs the files), and
// every bound is enforced on what is actually read, not only on what the headers declare: how many entries, the
// uncompressed bytes in all, and the ratio of a file's bytes to its compressed size (a zip bomb declares small sizes
// and inflates past them: yauzl's `validateEntrySizes` stops a stream that goes past its declared size, and the
// counts here stop one that stays within it but not within the bounds). Names that escape (absolute, `..`,
// backslashes) are refused by yauzl while the directory is read.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { crc32, inflateRawSync } from 'node:zlib';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';

/** The stable codes of a failed import (Job.error.code in the document). */
export type ImportErrorCode =
  | 'not_a_zip'
  | 'too_many_entries'
  | 'too_large'
  | 'unsafe_path'
  | 'missing_file'
  | 'invalid_note_json'
  | 'unsupported_format_version'
  | 'invalid_archive'
  | 'name_taken'
  | 'interrupted'
  | 'internal';

/** Why an import failed, for the job's `error`; any other error is `internal`. */
export class ImportFailure extends Error {
  readonly code: ImportErrorCode;

  constructor(code: ImportErrorCode, detail: string) {
    super(detail);
    this.code = code;
  }
}

export type ArchiveBounds = {
  /** Files (and folders) in the zip at most. */
  maxEntries: number;
  /** Uncompressed bytes read from the zip in all, at most. */
  maxTotalBytes: number;
  /** Uncompressed bytes per compressed byte of one file at most, once it is past `ratioFromBytes`. */
  maxRatio: number;
  ratioFromBytes: number;
};

/** The bounds an import reads an archive within (README: LIMIT_IMPORT_BYTES, LIMIT_IMPORT_ENTRIES). */
export function boundsFor(limits: { importBytes: number; importEntries: number }): ArchiveBounds {
  return { maxEntries: limits.importEntries, maxTotalBytes: limits.importBytes * 20, maxRatio: 200, ratioFromBytes: 1024 * 1024 };
}

export class ExportArchive {
  readonly #zip: yauzl.ZipFile;
  readonly #reader: BlockReader;
  readonly #entries: Map<string, yauzl.Entry>;
  readonly #bounds: ArchiveBounds;
  #bytesRead = 0;

  private constructor(zip: yauzl.ZipFile, reader: BlockReader, entries: Map<string, yauzl.Entry>, bounds: ArchiveBounds) {
    this.#zip = zip;
    this.#reader = reader;
    this.#entries = entries;
    this.#bounds = bounds;
  }

  /** Opens the zip and reads its directory; fails with `not_a_zip`, `too_many_entries`, `unsafe_path` or `too_large`. */
  static async open(file: string, bounds: ArchiveBounds): Promise<ExportArchive> {
    let zip: yauzl.ZipFile;
    const reader = await BlockReader.open(file);
    try {
      zip = await yauzl.fromRandomAccessReaderPromise(reader, reader.size, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true });
    } catch (error) {
      await reader.handle.close();
      throw new ImportFailure('not_a_zip', `the file is not a zip archive (${(error as Error).message})`);
    }
    try {
      if (zip.entryCount > bounds.maxEntries) {
        throw new ImportFailure('too_many_entries', `the archive has ${zip.entryCount} entries; at most ${bounds.maxEntries} are taken`);
      }
      const entries = await readDirectory(zip, bounds);
      return new ExportArchive(zip, reader, entries, bounds);
    } catch (error) {
      zip.close();
      throw error;
    }
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The declared size of a file (0 when it is absent). */
  sizeOf(name: string): number {
    return this.#entries.get(name)?.uncompressedSize ?? 0;
  }

  /** A file's bytes as UTF-8 text; `missing_file` when absent, `too_large` past `maxBytes` or the bounds. */
  async text(name: string, maxBytes: number): Promise<string> {
    const entry = this.#entry(name, maxBytes);
    let bytes: Buffer;
    if (entry.compressedSize <= BlockReader.BLOCK && entry.uncompressedSize <= SMALL_FILE_BYTES) bytes = await this.#small(entry, name);
    else {
      const chunks: Buffer[] = [];
      await pipeline(await this.#open(name, maxBytes), async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) chunks.push(chunk);
      });
      bytes = Buffer.concat(chunks);
    }
    const text = bytes.toString('utf8');
    // PostgreSQL text cannot hold NUL
    if (text.includes('\u0000')) throw new ImportFailure('invalid_archive', `${name} holds a NUL character`);
    return text;
  }

  /** Writes a file to `target` (a new file), hashing it: its SHA-256 (hex), size and first `headBytes` bytes. */
  async extract(name: string, target: string, maxBytes: number, headBytes: number): Promise<{ checksum: string; size: number; head: Buffer }> {
    const hash = createHash('sha256');
    let size = 0;
    const head: Buffer[] = [];
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        if (size < headBytes) head.push(Buffer.from(chunk.subarray(0, headBytes - size)));
        size += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(await this.#open(name, maxBytes), meter, createWriteStream(target, { flags: 'wx' }));
    return { checksum: hash.digest('hex'), size, head: Buffer.concat(head) };
  }

  close(): void {
    this.#zip.close();
  }

  #entry(name: string, maxBytes: number): yauzl.Entry {
    const entry = this.#entries.get(name);
    if (!entry) throw new ImportFailure('missing_file', `the archive has no file ${name}`);
    if (entry.uncompressedSize > maxBytes) throw new ImportFailure('too_large', `${name} has ${entry.uncompressedSize} bytes; at most ${maxBytes} are taken`);
    return entry;
  }

  /**
   * A small file (a page version: most of an archive's files) read whole from the blocks and inflated at once, with
   * no stream: a stream per file (yauzl's read stream, zlib's, two transforms) cost more than the database's work in
   * an import of 50,000 versions. Its bounds are those of the stream path: it may not inflate past its declared size
   * (maxOutputLength), which the directory's checks and `maxBytes` bound, it must come to exactly that size, and its
   * CRC-32 must be the one declared.
   */
  async #small(entry: yauzl.Entry, name: string): Promise<Buffer> {
    let raw: Buffer;
    try {
      const { fileDataStart } = await this.#zip.readLocalFileHeaderPromise(entry, { minimal: true });
      raw = await this.#reader.range(fileDataStart, fileDataStart + entry.compressedSize);
    } catch (error) {
      throw new ImportFailure('not_a_zip', `${name} cannot be read (${(error as Error).message})`);
    }
    if (raw.length !== entry.compressedSize) throw new ImportFailure('not_a_zip', `${name} is cut short`);
    let bytes: Buffer;
    if (entry.compressionMethod === 0) bytes = raw;
    else if (entry.compressionMethod === 8) {
      try {
        bytes = inflateRawSync(raw, { maxOutputLength: Math.max(entry.uncompressedSize, 1) });
      } catch (error) {
        const past = (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
        throw new ImportFailure(past ? 'too_large' : 'not_a_zip', past ? `${name}: too many bytes in the stream` : `${name}: ${(error as Error).message}`);
      }
    } else throw new ImportFailure('not_a_zip', `${name}: unsupported compression method ${entry.compressionMethod}`);
    if (bytes.length !== entry.uncompressedSize) throw new ImportFailure('not_a_zip', `${name} has ${bytes.length} bytes, not the ${entry.uncompressedSize} its entry declares`);
    if (crc32(bytes) !== entry.crc32) throw new ImportFailure('not_a_zip', `${name}: its CRC-32 is not the one its entry declares`);
    this.#bytesRead += bytes.length;
    if (this.#bytesRead > this.#bounds.maxTotalBytes) throw new ImportFailure('too_large', `the archive holds more than ${this.#bounds.maxTotalBytes} bytes uncompressed`);
    return bytes;
  }

  async #open(name: string, maxBytes: number): Promise<Readable> {
    const entry = this.#entry(name, maxBytes);
    let stream: Readable;
    try {
      stream = await this.#zip.openReadStreamPromise(entry);
    } catch (error) {
      throw new ImportFailure('not_a_zip', `${name} cannot be read (${(error as Error).message})`);
    }
    const bounds = this.#bounds;
    let read = 0;
    const count = (chunk: Buffer) => {
      read += chunk.length;
      this.#bytesRead += chunk.length;
      if (read > maxBytes) return new ImportFailure('too_large', `${name} has more than ${maxBytes} bytes`);
      if (this.#bytesRead > bounds.maxTotalBytes) return new ImportFailure('too_large', `the archive holds more than ${bounds.maxTotalBytes} bytes uncompressed`);
      if (read > bounds.ratioFromBytes && read > bounds.maxRatio * Math.max(entry.compressedSize, 1)) {
        return new ImportFailure('too_large', `${name} is compressed more than ${bounds.maxRatio} to 1 (a zip bomb?)`);
      }
      return undefined;
    };
    const bounded = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        const failure = count(chunk);
        done(failure ?? null, failure ? undefined : chunk);
      },
    });
    // yauzl's own checks (a stream longer than declared, a bad CRC, bad deflate data) fail the read as an archive fault
    stream.on('error', (error: Error) => bounded.destroy(error instanceof ImportFailure ? error : new ImportFailure(/too many bytes/.test(error.message) ? 'too_large' : 'not_a_zip', `${name}: ${error.message}`)));
    return stream.pipe(bounded);
  }
}

/** Files up to this size (and whose compressed bytes fit a block) are read whole, not streamed. */
const SMALL_FILE_BYTES = 8 * 1024 * 1024;

/**
 * The zip file read in blocks kept in memory a few at a time: yauzl reads the central directory and each file's local
 * header with small reads, two per file, which as file system calls took 11 s for 50,000 files; from the blocks they
 * are copies in memory. A file's data larger than a block is streamed from the file.
 */
class BlockReader extends yauzl.RandomAccessReader {
  static readonly BLOCK = 1024 * 1024;
  static readonly KEPT = 8;
  readonly handle: FileHandle;
  readonly size: number;
  readonly #blocks = new Map<number, Promise<Buffer>>();

  private constructor(handle: FileHandle, size: number) {
    super();
    this.handle = handle;
    this.size = size;
  }

  static async open(file: string): Promise<BlockReader> {
    const handle = await open(file, 'r');
    return new BlockReader(handle, (await handle.stat()).size);
  }

  #block(index: number): Promise<Buffer> {
    let block = this.#blocks.get(index);
    if (!block) {
      const length = Math.max(0, Math.min(BlockReader.BLOCK, this.size - index * BlockReader.BLOCK));
      block = this.handle.read(Buffer.alloc(length), 0, length, index * BlockReader.BLOCK).then(({ buffer }) => buffer);
      if (this.#blocks.size >= BlockReader.KEPT) this.#blocks.delete(this.#blocks.keys().next().value!);
      this.#blocks.set(index, block);
    }
    return block;
  }

  async range(start: number, end: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (let at = start; at < end; ) {
      const index = Math.floor(at / BlockReader.BLOCK);
      const block = await this.#block(index);
      const from = at - index * BlockReader.BLOCK;
      const part = block.subarray(from, Math.min(block.length, from + end - at));
      if (part.length === 0) break;
      parts.push(part);
      at += part.length;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (error: Error | null) => void): void {
    this.range(position, position + length).then((bytes) => {
      bytes.copy(buffer, offset);
      callback(bytes.length === length ? null : new Error('unexpected end of the file'));
    }, (error: Error) => callback(error));
  }

  override _readStreamForRange(start: number, end: number): Readable {
    if (end - start > BlockReader.BLOCK) return this.handle.createReadStream({ start, end: end - 1, autoClose: false });
    const range = () => this.range(start, end);
    return Readable.from((async function* () {
      yield await range();
    })());
  }

  override close(callback: (error: Error | null) => void): void {
    this.handle.close().then(() => callback(null), (error: Error) => callback(error));
  }
}

async function readDirectory(zip: yauzl.ZipFile, bounds: ArchiveBounds): Promise<Map<string, yauzl.Entry>> {
  const entries = new Map<string, yauzl.Entry>();
  let declared = 0;
  await new Promise<void>((resolve, reject) => {
    const fail = (error: unknown) => {
      zip.removeAllListeners('entry');
      reject(error);
    };
    zip.on('error', (error: Error) => {
      const unsafe = /absolute path|invalid relative path|invalid characters/.test(error.message);
      fail(new ImportFailure(unsafe ? 'unsafe_path' : 'not_a_zip', unsafe ? `a path in the archive escapes it: ${error.message}` : `the zip cannot be read: ${error.message}`));
    });
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entries.size >= bounds.maxEntries) return fail(new ImportFailure('too_many_entries', `the archive has more than ${bounds.maxEntries} entries`));
      if (!entry.fileName.endsWith('/')) {
        if (entry.isEncrypted()) return fail(new ImportFailure('invalid_archive', `${entry.fileName} is encrypted`));
        if (entries.has(entry.fileName)) return fail(new ImportFailure('invalid_archive', `${entry.fileName} is in the archive twice`));
        declared += entry.uncompressedSize;
        if (declared > bounds.maxTotalBytes) return fail(new ImportFailure('too_large', `the archive holds more than ${bounds.maxTotalBytes} bytes uncompressed`));
        if (entry.uncompressedSize > bounds.ratioFromBytes && entry.uncompressedSize > bounds.maxRatio * Math.max(entry.compressedSize, 1)) {
          return fail(new ImportFailure('too_large', `${entry.fileName} is compressed more than ${bounds.maxRatio} to 1 (a zip bomb?)`));
        }
        forgetRawFields(entry);
        entries.set(entry.fileName, entry);
      }
      zip.readEntry();
    });
    zip.readEntry();
  });
  return entries;
}

/**
 * yauzl keeps with each entry its raw name, extra field and comment as buffers, and the parsed extra fields: three
 * Buffer objects and a few arrays per entry, ~20 MB of heap for 50,000 entries (a heap snapshot of `make bench`'s
 * 1,000 x 50 import at the production heap's limit). Reading an entry needs none of them (yauzl reads its local header
 * again), so they are let go once the directory's checks are done.
 */
function forgetRawFields(entry: yauzl.Entry): void {
  const loose = entry as unknown as Record<string, unknown>;
  for (const key of ['fileNameRaw', 'extraFieldRaw', 'fileCommentRaw', 'extraFields', 'fileComment', 'comment']) loose[key] = undefined;
}
