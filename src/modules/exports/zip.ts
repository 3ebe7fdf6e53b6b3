// A zip written as it is read: one entry at a time, the next added only when the reader has taken the one before
// (the output's backpressure reaches the entry's source), so what the export holds is the entry being compressed
// plus, for the central directory written at the end, that directory's own bytes: about 100 bytes per entry, kept
// as bytes in slabs, not as objects (docs/note-export.md, "Limits and cost"). Reproducible: every entry has the same
// fixed time (DOS fields only, no extended timestamp, which would carry the writer's clock) and mode, and deflate at a
// fixed level; the bytes depend only on the entries, their order and zlib's version.
//
// The format is PKWARE's APPNOTE 6.3: a local header and the deflated data per entry (with a data descriptor after
// the data when the entry is a stream, whose size is known only at its end), then the central directory and its end
// record, with the ZIP64 records when the entries pass 65,535 or an offset passes 4 GiB. A streamed entry (note.json,
// an attachment) is limited to 4 GiB less a byte, which every limit on what it holds keeps far from.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createDeflateRaw, deflateRaw, deflateRawSync } from 'node:zlib';
import { promisify } from 'node:util';

const deflateRawAsync = promisify(deflateRaw);
const LEVEL = 6;
/** Contents up to this size are deflated at once on the main thread; larger ones on libuv's pool. */
const SYNC_DEFLATE_BYTES = 64 * 1024;

const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const CENTRAL_HEADER = 0x02014b50;
const ZIP64_END = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const END = 0x06054b50;
const MAX_16 = 0xffff;
const MAX_32 = 0xffffffff;
/** The size of the slabs the central directory and the output are gathered in. */
const SLAB = 64 * 1024;

/** 1980-01-01 00:00:00 in DOS fields: the same in every time zone. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
/** Bit 11: the name is UTF-8. Bit 3: sizes and CRC-32 follow the data (a streamed entry). */
const UTF8 = 0x0800;
const DESCRIPTOR = 0x0008;
const DEFLATE = 8;
/** Made by: Unix (so the mode below is read), version 4.5 (ZIP64). */
const MADE_BY = (3 << 8) | 45;
const NEEDED = 20;
const NEEDED_ZIP64 = 45;
/** A regular file, rw-r--r--, in the upper half of the external attributes. */
const EXTERNAL_ATTRIBUTES = (0o100644 << 16) >>> 0;

/** The central directory's bytes, written into slabs as the entries are, so an entry keeps no object of its own. */
class Directory {
  readonly #slabs: Buffer[] = [];
  #slab = Buffer.alloc(0);
  #used = 0;
  size = 0;
  count = 0;

  /** Room for `bytes` more, in one slab. */
  take(bytes: number): { buffer: Buffer; at: number } {
    if (this.#used + bytes > this.#slab.length) {
      if (this.#used > 0) this.#slabs.push(this.#slab.subarray(0, this.#used));
      this.#slab = Buffer.allocUnsafeSlow(Math.max(SLAB, bytes));
      this.#used = 0;
    }
    const at = this.#used;
    this.#used += bytes;
    this.size += bytes;
    this.count += 1;
    return { buffer: this.#slab, at };
  }

  /** The whole directory, in order. */
  all(): Buffer[] {
    return this.#used > 0 ? [...this.#slabs, this.#slab.subarray(0, this.#used)] : this.#slabs;
  }
}

type Written = { name: Buffer; flags: number; crc: number; compressed: number; size: number; offset: number };

/** The reader went away: the export stops where it is. */
export class ExportCancelled extends Error {
  constructor() {
    super('the export was cancelled: its reader went away');
  }
}

export class ZipWriter {
  /** The zip's bytes: pipe it to the reader. */
  readonly output: Readable;
  private readonly directory = new Directory();
  private offset = 0;
  private slab = Buffer.alloc(0);
  private slabUsed = 0;
  private closed = false;
  private ended = false;
  /** Resolves when the reader asks for more (set while the output's buffer is full). */
  private drained: (() => void) | undefined;

  constructor() {
    this.output = new Readable({
      highWaterMark: 64 * 1024,
      read: () => {
        const drained = this.drained;
        this.drained = undefined;
        drained?.();
      },
    });
    this.output.once('close', () => {
      this.closed = true;
      const drained = this.drained;
      this.drained = undefined;
      drained?.();
    });
  }

  /** Adds one entry and resolves when its bytes have gone into the zip (the reader took all but a few buffers). */
  async add(path: string, content: Readable | Buffer | string): Promise<void> {
    if (this.closed || this.ended) throw new ExportCancelled();
    const name = Buffer.from(path, 'utf8');
    if (name.length > MAX_16) throw new Error(`a zip entry's name is at most ${MAX_16} bytes: ${path.slice(0, 80)}…`);
    if (content instanceof Readable) await this.addStream(name, content);
    else await this.addBytes(name, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
  }

  /** Writes the central directory: the zip is complete once the output ends. */
  end(): void {
    if (this.closed || this.ended) return;
    this.ended = true;
    const start = this.offset;
    for (const slab of this.directory.all()) this.push(slab);
    const { size, count } = this.directory;
    const zip64 = count >= MAX_16 || start >= MAX_32 || size >= MAX_32;
    if (zip64) {
      const record = Buffer.alloc(56 + 20);
      record.writeUInt32LE(ZIP64_END, 0);
      record.writeBigUInt64LE(44n, 4);
      record.writeUInt16LE(MADE_BY, 12);
      record.writeUInt16LE(NEEDED_ZIP64, 14);
      record.writeBigUInt64LE(BigInt(count), 24);
      record.writeBigUInt64LE(BigInt(count), 32);
      record.writeBigUInt64LE(BigInt(size), 40);
      record.writeBigUInt64LE(BigInt(start), 48);
      record.writeUInt32LE(ZIP64_LOCATOR, 56);
      record.writeBigUInt64LE(BigInt(start + size), 64);
      record.writeUInt32LE(1, 72);
      this.push(record);
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END, 0);
    end.writeUInt16LE(Math.min(count, MAX_16), 8);
    end.writeUInt16LE(Math.min(count, MAX_16), 10);
    end.writeUInt32LE(Math.min(size, MAX_32), 12);
    end.writeUInt32LE(Math.min(start, MAX_32), 16);
    this.push(end);
    this.flush();
    this.output.push(null);
  }

  /** Stops the zip with an error (the reader sees the transfer cut short, never a complete-looking zip). */
  fail(error: Error): void {
    if (!this.closed) this.output.destroy(error);
  }

  /** A content known whole: its sizes and CRC-32 go in the local header. */
  private async addBytes(name: Buffer, data: Buffer): Promise<void> {
    const deflated = data.length <= SYNC_DEFLATE_BYTES ? deflateRawSync(data, { level: LEVEL, chunkSize: outputSize(data.length) }) : await deflateRawAsync(data, { level: LEVEL });
    if (this.closed) throw new ExportCancelled();
    const entry: Written = { name, flags: UTF8, crc: crc32(data), compressed: deflated.length, size: data.length, offset: this.offset };
    this.push(localHeader(entry));
    this.push(deflated);
    this.record(entry);
    await this.room();
  }

  /** A stream: deflated as it is read, its sizes and CRC-32 in a data descriptor after the data. */
  private async addStream(name: Buffer, source: Readable): Promise<void> {
    const entry: Written = { name, flags: UTF8 | DESCRIPTOR, crc: 0, compressed: 0, size: 0, offset: this.offset };
    this.push(localHeader(entry));
    const deflate = createDeflateRaw({ level: LEVEL });
    const piping = pipeline(source, async function* (chunks: AsyncIterable<Buffer | string>) {
      for await (const chunk of chunks) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
        entry.crc = crc32(bytes, entry.crc);
        entry.size += bytes.length;
        yield bytes;
      }
    }, deflate);
    try {
      for await (const chunk of deflate as AsyncIterable<Buffer>) {
        entry.compressed += chunk.length;
        this.push(chunk);
        await this.room();
      }
      await piping;
    } catch (error) {
      source.destroy();
      deflate.destroy();
      await piping.catch(() => undefined);
      if (this.closed) throw new ExportCancelled();
      throw error;
    }
    if (entry.size >= MAX_32 || entry.compressed >= MAX_32) throw new Error(`${name.toString()} is 4 GiB or more, more than a streamed zip entry takes here`);
    this.push(dataDescriptor(entry));
    this.record(entry);
    await this.room();
  }

  /**
   * Adds bytes to the output. Small ones (a header, a page version's few hundred deflated bytes) are copied into a 64
   * KiB slab that goes out when full: a zip of 50,000 entries is ~150 Buffers for the socket, not 150,000, each of
   * which would hold its own allocation outside the heap until a collection.
   */
  private push(bytes: Buffer): void {
    this.offset += bytes.length;
    if (bytes.length >= SLAB / 2) {
      this.flush();
      this.output.push(bytes);
      return;
    }
    if (this.slabUsed + bytes.length > this.slab.length) this.flush();
    if (this.slab.length === 0) this.slab = Buffer.allocUnsafeSlow(SLAB);
    bytes.copy(this.slab, this.slabUsed);
    this.slabUsed += bytes.length;
  }

  /** Sends what the slab holds. */
  private flush(): void {
    if (this.slabUsed === 0) return;
    this.output.push(this.slab.subarray(0, this.slabUsed));
    this.slab = Buffer.alloc(0);
    this.slabUsed = 0;
  }

  /** Resolves once the reader has room for more; throws when it went away. */
  private async room(): Promise<void> {
    while (!this.closed && this.output.readableLength >= this.output.readableHighWaterMark) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
      });
    }
    if (this.closed) throw new ExportCancelled();
  }

  /** The entry's central directory header, with a ZIP64 extra field when its offset passes 4 GiB. */
  private record(entry: Written): void {
    const zip64 = entry.offset >= MAX_32;
    const extra = zip64 ? 12 : 0;
    const { buffer, at } = this.directory.take(46 + entry.name.length + extra);
    buffer.writeUInt32LE(CENTRAL_HEADER, at);
    buffer.writeUInt16LE(MADE_BY, at + 4);
    buffer.writeUInt16LE(zip64 ? NEEDED_ZIP64 : NEEDED, at + 6);
    buffer.writeUInt16LE(entry.flags, at + 8);
    buffer.writeUInt16LE(DEFLATE, at + 10);
    buffer.writeUInt16LE(DOS_TIME, at + 12);
    buffer.writeUInt16LE(DOS_DATE, at + 14);
    buffer.writeUInt32LE(entry.crc, at + 16);
    buffer.writeUInt32LE(entry.compressed, at + 20);
    buffer.writeUInt32LE(entry.size, at + 24);
    buffer.writeUInt16LE(entry.name.length, at + 28);
    buffer.writeUInt16LE(extra, at + 30);
    buffer.writeUInt16LE(0, at + 32); // comment
    buffer.writeUInt16LE(0, at + 34); // disk
    buffer.writeUInt16LE(0, at + 36); // internal attributes
    buffer.writeUInt32LE(EXTERNAL_ATTRIBUTES, at + 38);
    buffer.writeUInt32LE(zip64 ? MAX_32 : entry.offset, at + 42);
    entry.name.copy(buffer, at + 46);
    if (zip64) {
      const field = at + 46 + entry.name.length;
      buffer.writeUInt16LE(0x0001, field);
      buffer.writeUInt16LE(8, field + 2);
      buffer.writeBigUInt64LE(BigInt(entry.offset), field + 4);
    }
  }
}

/**
 * zlib's output buffer for a small content: about its size (deflate adds a few bytes per 16 KiB block to what it cannot
 * shrink; more output takes another buffer), not Node's default 16 KiB, which every page version would allocate.
 */
function outputSize(bytes: number): number {
  return Math.min(Math.max(bytes + 64, 64), SYNC_DEFLATE_BYTES + 1024);
}

/** Headers are made here and copied into the output's slab (short ones; a longer one gets a buffer of its own). */
const SCRATCH = Buffer.allocUnsafeSlow(1024);

/** The local header: sizes and CRC-32 when known, zeros when a data descriptor follows the data. */
function localHeader(entry: Written): Buffer {
  const length = 30 + entry.name.length;
  const header = length <= SCRATCH.length ? SCRATCH.subarray(0, length) : Buffer.alloc(length);
  header.writeUInt32LE(LOCAL_HEADER, 0);
  header.writeUInt16LE(NEEDED, 4);
  header.writeUInt16LE(entry.flags, 6);
  header.writeUInt16LE(DEFLATE, 8);
  header.writeUInt16LE(DOS_TIME, 10);
  header.writeUInt16LE(DOS_DATE, 12);
  header.writeUInt32LE(entry.crc, 14);
  header.writeUInt32LE(entry.compressed, 18);
  header.writeUInt32LE(entry.size, 22);
  header.writeUInt16LE(entry.name.length, 26);
  header.writeUInt16LE(0, 28);
  entry.name.copy(header, 30);
  return header;
}

/** The data descriptor after a streamed entry's data. */
function dataDescriptor(entry: Written): Buffer {
  const descriptor = SCRATCH.subarray(0, 16);
  descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0);
  descriptor.writeUInt32LE(entry.crc, 4);
  descriptor.writeUInt32LE(entry.compressed, 8);
  descriptor.writeUInt32LE(entry.size, 12);
  return descriptor;
}

/** Runs `write` into a new zip and returns the zip's bytes, made as they are read. */
export function zipOf(write: (zip: ZipWriter) => Promise<void>, onError: (error: Error) => void): Readable {
  const zip = new ZipWriter();
  write(zip).then(
    () => zip.end(),
    (error: unknown) => {
      if (error instanceof ExportCancelled) return;
      onError(error as Error);
      zip.fail(error as Error);
    },
  );
  return zip.output;
}
