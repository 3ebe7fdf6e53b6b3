// A zip written as it is read, with yazl: one entry at a time, the next added only when the one before has been
// consumed, so what the export holds is the entry being compressed, whatever the reader's pace (the output's
// backpressure reaches the entry's source). Reproducible: every entry has the same fixed time (DOS fields only: no
// extended timestamp, which would carry the writer's clock) and mode, and deflate at a fixed level; the bytes
// depend only on the entries, their order and zlib's version.
import { PassThrough, Readable } from 'node:stream';
import yazl from 'yazl';

/** 1980-01-01 00:00:00 as local time: the DOS fields say that in every time zone. */
const ENTRY_TIME = new Date(1980, 0, 1, 0, 0, 0);
const ENTRY_OPTIONS = { mtime: ENTRY_TIME, mode: 0o100644, compress: true, compressionLevel: 6, forceDosTimestamp: true } as const;

/**
 * yazl keeps every entry, with the function that gives its stream, until the central directory is written: that
 * function is made here, outside the scope of `add` (a closure keeps its whole scope alive), and forgets the stream
 * once given, so nothing of an entry (its text, its stream, the compressor it was piped into) outlives its writing.
 */
function handOnce(stream: Readable): (give: (error: null, stream: Readable) => void) => void {
  let held: Readable | undefined = stream;
  return (give) => {
    const given = held!;
    held = undefined;
    give(null, given);
  };
}

/**
 * yazl keeps each entry until the central directory is written, so what an entry keeps is what an export of 50,000
 * files grows by (it was 470 bytes each, 23 MB in the 104 MB heap; `make bench`'s export ran the heap to its ceiling).
 * Two things are let go or shared once the entry's bytes are written (yazl 3.3.1's `entries`, `utf8FileName` and
 * `doFileDataPump`; left alone if a later version names them otherwise):
 * - its name: yazl keeps `Buffer.from(name)`, a slice of Node's shared Buffer pool (64 KiB here), and between two
 *   entries the compressor's output takes the rest of that pool, so each kept name held a pool of its own alive: 64
 *   KiB per entry until the zip ends (measured: 2,400 entries held ~190 MB). The names are copied into slabs of
 *   their own, filled one after the other;
 * - the function that pumped its data (a closure over the entry's options and stream function), which yazl never
 *   calls again once the entry is done.
 */
class EntryNames {
  static readonly SLAB = 64 * 1024;
  #slab = Buffer.allocUnsafeSlow(EntryNames.SLAB);
  #used = 0;

  keep(zip: yazl.ZipFile): void {
    const entries = (zip as unknown as { entries?: { utf8FileName?: unknown }[] }).entries;
    const entry = entries?.[entries.length - 1];
    const name = entry?.utf8FileName;
    if (!entry || !Buffer.isBuffer(name)) return;
    if (name.byteLength > EntryNames.SLAB / 4) {
      entry.utf8FileName = Buffer.from(Uint8Array.prototype.slice.call(name));
      return;
    }
    if (this.#used + name.byteLength > EntryNames.SLAB) {
      this.#slab = Buffer.allocUnsafeSlow(EntryNames.SLAB);
      this.#used = 0;
    }
    name.copy(this.#slab, this.#used);
    entry.utf8FileName = this.#slab.subarray(this.#used, this.#used + name.byteLength);
    this.#used += name.byteLength;
  }
}

/** The entries written since the last call, from `from` on, no longer need the function that pumped their data. */
function forgetPumps(zip: yazl.ZipFile, from: number): number {
  const entries = (zip as unknown as { entries?: { state?: unknown; doFileDataPump?: unknown }[] }).entries ?? [];
  let at = from;
  for (; at < entries.length && entries[at]!.state === 3 /* Entry.FILE_DATA_DONE */; at += 1) entries[at]!.doFileDataPump = undefined;
  return at;
}

/** The reader went away: the export stops where it is. */
export class ExportCancelled extends Error {
  constructor() {
    super('the export was cancelled: its reader went away');
  }
}

export class ZipWriter {
  /** The zip's bytes: pipe it to the reader. */
  readonly output: Readable;
  private readonly zip = new yazl.ZipFile();
  private readonly names = new EntryNames();
  private pumped = 0;
  private closed = false;

  constructor() {
    this.output = this.zip.outputStream as Readable;
    this.output.once('close', () => {
      this.closed = true;
    });
  }

  /** Adds one entry and resolves when its bytes have gone into the zip (the reader took all but a few buffers). */
  async add(path: string, content: Readable | Buffer | string): Promise<void> {
    if (this.closed) throw new ExportCancelled();
    this.pumped = forgetPumps(this.zip, this.pumped);
    const source = content instanceof Readable ? content : new PassThrough().end(typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
    this.zip.addReadStreamLazy(path, ENTRY_OPTIONS, handOnce(source));
    this.names.keep(this.zip);
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        source.off('error', failed);
        this.output.off('close', cancelled);
        resolve();
      };
      const failed = (error: Error) => {
        this.output.off('close', cancelled);
        source.off('end', done);
        reject(error);
      };
      const cancelled = () => {
        source.off('end', done);
        source.off('error', failed);
        source.destroy();
        reject(new ExportCancelled());
      };
      source.once('end', done);
      source.once('error', failed);
      this.output.once('close', cancelled);
    });
  }

  /** Writes the central directory: the zip is complete once the output ends. */
  end(): void {
    this.zip.end();
  }

  /** Stops the zip with an error (the reader sees the transfer cut short, never a complete-looking zip). */
  fail(error: Error): void {
    if (!this.closed) this.output.destroy(error);
  }
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
