// The `attachments` case of `make bench` (scripts/bench-http.ts): upload and download throughput of a 25 MiB file
// through the running service (local storage in its DATA_DIR), against `cp` of the same file on the same disk,
// reported as ratios (no goal: reported only). Each round uses a file of its own random bytes (so no upload finds
// its bytes already stored); the figure of each side is the median of the rounds. The files live in a directory
// beside the service's DATA_DIR (the same file system), the download is read to the end and dropped.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, openSync, closeSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';

const MiB = 1024 * 1024;
export const ATTACHMENT_BENCH_BYTES = 25 * MiB;

/** `team`: a team of the token's user, where the case makes a note of its own. */
type Options = { baseUrl: string; token: string; team: string; workDir: string; rounds: number; report(label: string, text: string): void };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function writeRandomFile(file: string, size: number): void {
  const fd = openSync(file, 'w');
  try {
    for (let written = 0; written < size; written += MiB) writeSync(fd, randomBytes(Math.min(MiB, size - written)));
  } finally {
    closeSync(fd);
  }
}

/** Seconds `cp` takes to copy `from` to `to`. */
function timeCp(from: string, to: string): number {
  const started = process.hrtime.bigint();
  const result = spawnSync('cp', [from, to]);
  if (result.status !== 0) throw new Error(`cp failed: ${result.stderr.toString()}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** Streams the file as the multipart part `file`; seconds and the attachment's id. */
function timeUpload(options: Options, file: string, size: number): Promise<{ seconds: number; id: number }> {
  const boundary = 'bench-boundary-3c1f8e';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${path.basename(file)}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(`${options.baseUrl}/api/v1/${options.team}/bench-files/attachments`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${options.token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(head.length + size + tail.length) },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`upload answered ${res.statusCode}: ${text.slice(0, 300)}`));
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        resolve({ seconds, id: Number((JSON.parse(text) as { filelink: string }).filelink.split('/').pop()) });
      });
    });
    req.write(head);
    const source = createReadStream(file);
    source.on('error', reject);
    source.on('end', () => req.end(tail));
    source.pipe(req, { end: false });
  });
}

/** Reads the whole download; seconds. */
async function timeDownload(options: Options, id: number, size: number): Promise<number> {
  const started = process.hrtime.bigint();
  const response = await fetch(`${options.baseUrl}/api/v1/attachments/${id}`, { headers: { Authorization: `Bearer ${options.token}` } });
  if (response.status !== 200 || !response.body) throw new Error(`download answered ${response.status}`);
  let received = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
  }
  if (received !== size) throw new Error(`download gave ${received} bytes of ${size}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

export async function benchAttachments(options: Options): Promise<void> {
  const size = ATTACHMENT_BENCH_BYTES;
  const created = await fetch(`${options.baseUrl}/api/v1/notes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${options.token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ 'note[title]': 'Files', 'note[team]': options.team, 'note[slug]': 'bench-files' }).toString(),
  });
  if (created.status !== 200) throw new Error(`creating the note answered ${created.status}: ${await created.text()}`);
  const directory = path.join(options.workDir, 'bench-attachments');
  mkdirSync(directory, { recursive: true });
  const copies: number[] = [];
  const uploads: number[] = [];
  const downloads: number[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    const file = path.join(directory, `file-${round}.bin`);
    writeRandomFile(file, size);
    copies.push(timeCp(file, path.join(directory, `copy-${round}.bin`)));
    const { seconds, id } = await timeUpload(options, file, size);
    uploads.push(seconds);
    downloads.push(await timeDownload(options, id, size));
  }
  const rate = (seconds: number) => size / MiB / seconds;
  const cp = rate(median(copies));
  const up = rate(median(uploads));
  const down = rate(median(downloads));
  options.report('attachment upload, 25 MiB (vs cp)', `${up.toFixed(0).padStart(6)} MiB/s  cp ${cp.toFixed(0)} MiB/s  ratio ${(up / cp).toFixed(2)}  (no goal)`);
  options.report('attachment download, 25 MiB (vs cp)', `${down.toFixed(0).padStart(6)} MiB/s  cp ${cp.toFixed(0)} MiB/s  ratio ${(down / cp).toFixed(2)}  (no goal)`);
}
