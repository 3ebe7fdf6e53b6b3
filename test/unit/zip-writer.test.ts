// The export's zip writer (src/modules/exports/zip.ts), read back by yauzl (the import's reader): entries known whole
// and streamed ones (with a data descriptor), the same bytes for the same entries, ZIP64 past 65,535 entries, the
// reader's pace reaching the writer, a streamed source that fails, and a reader that goes away.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { ExportCancelled, zipOf, type ZipWriter } from '../../src/modules/exports/zip.ts';

async function bytesOf(output: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of output) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function zipped(write: (zip: ZipWriter) => Promise<void>): Promise<Buffer> {
  return bytesOf(zipOf(write, (error) => {
    throw error;
  }));
}

type Read = { names: string[]; files: Map<string, Buffer>; entryCount: number; modes: number[] };

async function unzip(zip: Buffer, { contents = true } = {}): Promise<Read> {
  const file = await yauzl.fromBufferPromise(zip, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true });
  const entries = await new Promise<yauzl.Entry[]>((resolve, reject) => {
    const all: yauzl.Entry[] = [];
    file.on('entry', (entry: yauzl.Entry) => {
      all.push(entry);
      file.readEntry();
    });
    file.once('end', () => resolve(all));
    file.once('error', reject);
    file.readEntry();
  });
  const read: Read = { names: [], files: new Map(), entryCount: file.entryCount, modes: [] };
  for (const entry of entries) {
    read.names.push(entry.fileName);
    read.modes.push(entry.externalFileAttributes >>> 16);
    if (contents) read.files.set(entry.fileName, await bytesOf(await file.openReadStreamPromise(entry)));
  }
  file.close();
  return read;
}

describe('ZipWriter', () => {
  it('writes entries known whole and streamed ones that read back byte for byte, in order', async () => {
    const big = randomBytes(300 * 1024);
    const streamed = ['{"format":', '"notes-export",', ` "text": "${'会議'.repeat(40_000)}"}`];
    const zip = await zipped(async (writer) => {
      await writer.add('note.json', Readable.from(streamed));
      await writer.add('pages/1/1.html', '<p>議事録</p>');
      await writer.add('pages/1/2.html', '');
      await writer.add('attachments/big', big);
      await writer.add('attachments/streamed-big', Readable.from([big.subarray(0, 1000), big.subarray(1000)]));
    });
    const read = await unzip(zip);
    expect(read.names).toEqual(['note.json', 'pages/1/1.html', 'pages/1/2.html', 'attachments/big', 'attachments/streamed-big']);
    expect(read.files.get('note.json')!.toString('utf8')).toBe(streamed.join(''));
    expect(read.files.get('pages/1/1.html')!.toString('utf8')).toBe('<p>議事録</p>');
    expect(read.files.get('pages/1/2.html')!.length).toBe(0);
    expect(read.files.get('attachments/big')!.equals(big)).toBe(true);
    expect(read.files.get('attachments/streamed-big')!.equals(big)).toBe(true);
    expect(new Set(read.modes)).toEqual(new Set([0o100644]));
    // the end record is the classic one, without ZIP64 records, below 65,535 entries
    expect(zip.readUInt32LE(zip.length - 22)).toBe(0x06054b50);
    expect(zip.indexOf(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(-1);
  });

  it('gives the same bytes for the same entries (no clock in them)', async () => {
    const write = async (writer: ZipWriter) => {
      await writer.add('note.json', Readable.from(['{"a":1}']));
      await writer.add('pages/7/1.html', '<p>one</p>');
    };
    const first = await zipped(write);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await zipped(write)).equals(first)).toBe(true);
  });

  it('writes the ZIP64 records past 65,535 entries, which readers take', async () => {
    const count = 65_540;
    const zip = await zipped(async (writer) => {
      for (let at = 0; at < count; at += 1) await writer.add(`pages/${at}/1.html`, `<p>${at}</p>`);
    });
    const read = await unzip(zip, { contents: false });
    expect(read.entryCount).toBe(count);
    expect(read.names.length).toBe(count);
    expect(read.names[count - 1]).toBe(`pages/${count - 1}/1.html`);
    // the classic end record says "see ZIP64" for its counts
    expect(zip.readUInt16LE(zip.length - 22 + 10)).toBe(0xffff);
    expect(zip.readUInt32LE(zip.length - 22 - 20)).toBe(0x07064b50);
  });

  it('waits for its reader: entries are made only as fast as the zip is read', async () => {
    let added = 0;
    const output = zipOf(async (writer) => {
      for (let at = 0; at < 50; at += 1) {
        await writer.add(`attachments/${at}`, randomBytes(32 * 1024));
        added += 1;
      }
    }, (error) => {
      throw error;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // nothing read yet: the output's buffer (64 KiB) holds a few entries at most
    expect(added).toBeLessThanOrEqual(3);
    const read = await unzip(await bytesOf(output), { contents: false });
    expect(added).toBe(50);
    expect(read.names.length).toBe(50);
  });

  it('stops adding when its reader goes away', async () => {
    let failure: unknown;
    let reported: Error | undefined;
    const stopped = new Promise<void>((resolve) => {
      const output = zipOf(async (writer) => {
        try {
          for (let at = 0; at < 50; at += 1) await writer.add(`attachments/${at}`, randomBytes(32 * 1024));
        } catch (error) {
          failure = error;
          throw error;
        } finally {
          resolve();
        }
      }, (error) => {
        reported = error;
      });
      output.once('data', () => output.destroy());
    });
    await stopped;
    expect(failure).toBeInstanceOf(ExportCancelled);
    // a cancelled export is not an error to report
    expect(reported).toBeUndefined();
  });

  it('cuts the zip short and reports the error when a streamed entry\'s source fails', async () => {
    let reported: Error | undefined;
    const source = new Readable({ read() {} });
    const output = zipOf(async (writer) => {
      await writer.add('pages/1/1.html', '<p>first</p>');
      await writer.add('attachments/broken', source);
      await writer.add('pages/1/2.html', '<p>never</p>');
    }, (error) => {
      reported = error;
    });
    source.push(Buffer.from('a start'));
    setTimeout(() => source.destroy(new Error('the disk went away')), 20);
    await expect(bytesOf(output)).rejects.toThrow('the disk went away');
    expect(reported?.message).toBe('the disk went away');
  });

  it('stops a streamed entry when its reader goes away, and lets go of the source', async () => {
    const source = new Readable({ read() {} });
    source.push(randomBytes(200 * 1024));
    let failure: unknown;
    const output = zipOf(async (writer) => {
      try {
        await writer.add('attachments/endless', source);
      } catch (error) {
        failure = error;
        throw error;
      }
    }, () => undefined);
    output.once('data', () => output.destroy());
    await new Promise<void>((resolve) => source.once('close', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(source.destroyed).toBe(true);
    expect(failure).toBeInstanceOf(ExportCancelled);
  });
});
