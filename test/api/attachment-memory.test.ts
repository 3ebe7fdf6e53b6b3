// Uploads never sit whole in memory: ten uploads of 25 MiB (the default limit) at once, sent by a client in another
// process, while this process (the server) samples its memory. Held whole they would take 250 MiB; streamed, the
// growth is a few buffers per upload.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attachment } from '../../src/modules/attachments/attachment.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

const MiB = 1024 * 1024;
const SIZE = 25 * MiB;
const COUNT = 10;
// a collection before each sample, so the samples count what is held, not garbage not yet collected
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const client = fileURLToPath(new URL('../support/upload-client.ts', import.meta.url));

let app: TestApp;
let member: Actor;
let url: string;

beforeAll(async () => {
  app = await startTestApp();
  const cast = await makeScenario(app, { notes: { big: {} } });
  member = cast.member;
  url = `${app.baseUrl}/api/v1/${cast.team.name}/${cast.notes.big.slug}/attachments`;
});
afterAll(async () => app?.close());

function runClient(size: number, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [client, url, member.token, String(size), String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(output) as number[]) : reject(new Error(`upload client exited with ${code}`))));
  });
}

describe('uploads in memory', () => {
  it('stays flat while ten 25 MiB uploads run at once', { timeout: 120_000 }, async () => {
    // warm up: every module and pool an upload touches is loaded before the baseline
    expect(await runClient(MiB, 1)).toEqual([200]);
    collect();
    const baseline = process.memoryUsage();
    const peak = { rss: baseline.rss, buffers: baseline.heapUsed + baseline.arrayBuffers };
    const sampler = setInterval(() => {
      collect();
      const now = process.memoryUsage();
      peak.rss = Math.max(peak.rss, now.rss);
      peak.buffers = Math.max(peak.buffers, now.heapUsed + now.arrayBuffers);
    }, 200);
    let statuses: number[];
    try {
      statuses = await runClient(SIZE, COUNT);
    } finally {
      clearInterval(sampler);
    }
    expect(statuses).toEqual(Array(COUNT).fill(200));
    expect(await app.em().count(Attachment, { byteSize: SIZE })).toBe(COUNT);
    const grewBuffers = (peak.buffers - (baseline.heapUsed + baseline.arrayBuffers)) / MiB;
    const grewRss = (peak.rss - baseline.rss) / MiB;
    console.info(`ten 25 MiB uploads at once: memory held grew by at most ${grewBuffers.toFixed(1)} MiB, RSS by ${grewRss.toFixed(1)} MiB`);
    // 250 MiB went through: held whole, they would hold up to 250 MiB at once. Streamed, each upload in flight holds
    // its buffers (socket, parser, 256 KiB slices on their way to the disk): about 1-2 MiB, 10-20 MiB for ten
    expect(grewBuffers).toBeLessThan(48);
    expect(grewRss).toBeLessThan(125);
  });
});
