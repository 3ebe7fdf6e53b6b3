// While memory is tight the server refuses the work it can refuse (a large answer, an import, an export, a new change
// stream) with 503 `server_busy` and Retry-After, changes nothing, and goes on answering small requests; once the live
// heap is back under half the ceiling, the same requests are served. The heap's readings are the test's own (a
// MemoryPressure reading a heap of 100 MB); everything else is the real server on the real database.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryPressure } from '../../src/http/memory-pressure.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, notePath } from '../support/factories.ts';
import { MULTIPART, multipartBody } from '../support/multipart.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import type { Note } from '../../src/modules/notes/note.entity.ts';
import { PageVersion } from '../../src/modules/pages/page.entity.ts';

const MB = 1024 * 1024;
const heap = { usedBytes: 10 * MB, limitBytes: 100 * MB };
const pressure = new MemoryPressure(() => heap);
const METRICS_TOKEN = 'metrics-token-for-the-memory-test-0123456789';

let app: TestApp;
let cast: Scenario;
let note: Note;
let path: string;
let pageId: number;
const large = `<p>${'many words of a long page '.repeat(12_000)}</p>`; // ~300 KiB: past the answer gate's 256 KiB

function tight(): void {
  pressure.recordLive(60 * MB);
}
function relaxed(): void {
  pressure.recordLive(20 * MB);
}

beforeAll(async () => {
  app = await startTestApp({ METRICS_TOKEN }, { pressure });
  cast = await makeScenario(app, { team: 'heavy' });
  note = await makeNote(app, cast.team, cast.manager.user, { title: 'Heavy', slug: 'heavy' });
  path = await notePath(app, note);
  pageId = (await makePage(app, note, cast.manager, { title: 'Long', content: large })).id;
});
afterAll(async () => app?.close());
afterEach(() => relaxed());

describe('memory pressure', () => {
  it('is tight when the live heap passes half the ceiling, or the heap in use 90 % of it', () => {
    const watch = new MemoryPressure(() => heap);
    expect(watch.tight()).toBe(false);
    watch.recordLive(51 * MB);
    expect(watch.tight()).toBe(true);
    watch.recordLive(49 * MB);
    expect(watch.tight()).toBe(false);
    const full = new MemoryPressure(() => ({ usedBytes: 91 * MB, limitBytes: 100 * MB }));
    expect(full.tight()).toBe(true);
    expect(watch.state()).toMatchObject({ limitBytes: 100 * MB, liveBytes: 49 * MB, peakLiveBytes: 51 * MB, refused: 0 });
  });

  it('refuses a large answer with 503 server_busy and Retry-After, and serves it once memory is back', async () => {
    tight();
    const refused = await cast.manager.client.get(`${path}/pages`);
    expect([refused.status, refused.body.code, refused.headers.get('retry-after')]).toEqual([503, 'server_busy', '5']);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    // small answers go on
    expect((await cast.manager.client.get('/api/v1/me')).status).toBe(200);
    relaxed();
    const served = await cast.manager.client.get(`${path}/pages`);
    expect(served.status).toBe(200);
    expect(served.body.pages.map((page: { id: number }) => page.id)).toEqual([pageId]);
  });

  it('refuses a large page write and stores nothing; a small write goes on', async () => {
    tight();
    const versions = () => app.em().count(PageVersion, { page: pageId });
    const before = await versions();
    const refused = await cast.manager.client.put(`${path}/${pageId}`, { form: { 'page[content]': `${large}<p>more</p>` } });
    expect([refused.status, refused.body.code]).toEqual([503, 'server_busy']);
    expect(await versions()).toBe(before);
    const small = await cast.manager.client.put(`${path}/${pageId}`, { form: { 'page[title]': 'Long, renamed' } });
    expect(small.status).toBe(200);
    relaxed();
  });

  it('refuses an export, an import and a new change stream while tight', async () => {
    tight();
    const exported = await cast.manager.client.get(`${path}/export`);
    expect([exported.status, exported.body.code, exported.headers.get('retry-after')]).toEqual([503, 'server_busy', '5']);
    const imported = await cast.manager.client.post(`/api/v1/teams/${cast.team.name}/imports`, {
      raw: { body: multipartBody([{ name: 'file', filename: 'note.zip', data: Buffer.from('PK not really a zip') }]), contentType: MULTIPART },
    });
    expect([imported.status, imported.body.code]).toEqual([503, 'server_busy']);
    const stream = await cast.manager.client.get('/api/v1/events', { headers: { Accept: 'text/event-stream' } });
    expect([stream.status, stream.body.code]).toEqual([503, 'server_busy']);
    expect(app.events.open).toBe(0);
    // the JSON form of the change log is a small answer: it goes on
    expect((await cast.manager.client.get('/api/v1/events')).status).toBe(200);
    relaxed();
    const again = await cast.manager.client.get(`${path}/export`);
    expect(again.status).toBe(200);
  });

  it('says on /metrics what is alive, its peak, the ceiling and the refusals', async () => {
    const metrics = await fetch(`${app.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = await metrics.text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('notes_heap_limit_bytes')).toBe(100 * MB);
    expect(value('notes_heap_live_bytes')).toBe(20 * MB);
    expect(value('notes_heap_live_peak_bytes')).toBe(60 * MB);
    expect(value('notes_memory_refusals')).toBe(pressure.state().refused);
    expect(pressure.state().refused).toBeGreaterThanOrEqual(5);
  });
});
