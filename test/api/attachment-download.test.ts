// downloadAttachment: the bytes, streamed, with headers that keep a browser from running anything, and ETag/Range.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, type Actor } from '../support/factories.ts';
import { MULTIPART, multipartBody } from '../support/multipart.ts';
import { makeScenario } from '../support/scenario.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');

let app: TestApp;
let member: Actor, outsider: Actor;
let open: Note, secret: Note;
let teamName: string;

beforeAll(async () => {
  app = await startTestApp();
  const cast = await makeScenario(app, { notes: { open: {}, secret: { isPrivate: true } } });
  ({ member, outsider } = cast);
  ({ open, secret } = cast.notes);
  teamName = cast.team.name;
});
afterAll(async () => app?.close());

async function uploaded(note: Note, data: Buffer | string, filename: string, type = 'application/octet-stream', extendedFilename = false): Promise<number> {
  const body = multipartBody([{ name: 'file', filename, type, data, extendedFilename }]);
  const answer = await member.client.post(`/api/v1/${teamName}/${note.slug}/attachments`, { raw: { body, contentType: MULTIPART } });
  expect(answer.status, answer.text).toBe(200);
  return Number(answer.body.filelink.split('/').pop());
}

async function download(id: number, headers: Record<string, string> = {}, actor = member) {
  const response = await fetch(`${app.baseUrl}/api/v1/attachments/${id}`, { headers: { Authorization: `Bearer ${actor.token}`, ...headers } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('downloadAttachment', () => {
  it('streams a safe image inline with its sniffed type, nosniff, a sandboxing CSP and an ETag', async () => {
    const id = await uploaded(open, PNG, 'screen shot.png', 'text/html');
    const answer = await download(id);
    expect(answer.status).toBe(200);
    expect(answer.bytes).toEqual(PNG);
    expect(answer.headers.get('content-type')).toBe('image/png');
    expect(answer.headers.get('content-length')).toBe(String(PNG.length));
    expect(answer.headers.get('content-disposition')).toBe('inline; filename="screen shot.png"');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('content-security-policy')).toMatch(/default-src 'none'.*; sandbox$/);
    expect(answer.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    expect(answer.headers.get('accept-ranges')).toBe('bytes');
    expect(answer.headers.get('cache-control')).toBe('private, no-cache');
  });

  it('offers HTML, SVG and text as attachments, whatever type the uploader claimed', async () => {
    const html = await download(await uploaded(open, '<html><script>alert(1)</script></html>', 'page.html', 'text/html'));
    expect(html.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(html.headers.get('content-disposition')).toBe('attachment; filename="page.html"');
    const svg = await download(await uploaded(open, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'x.svg', 'image/svg+xml'));
    expect(svg.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(svg.headers.get('content-type')).not.toMatch(/svg|html/);
    const binary = await download(await uploaded(open, Buffer.from([0, 1, 2, 3, 255, 254]), 'blob', 'image/png'));
    expect(binary.headers.get('content-type')).toBe('application/octet-stream');
    expect(binary.headers.get('content-disposition')).toBe('attachment; filename="blob"');
  });

  it('shows a PDF inline (without sandbox, which PDF viewers refuse) and names Japanese files by RFC 5987', async () => {
    const answer = await download(await uploaded(open, PDF, '議事録 2024年.pdf'));
    expect(answer.headers.get('content-type')).toBe('application/pdf');
    expect(answer.headers.get('content-disposition')).toBe(
      `inline; filename="___ 2024_.pdf"; filename*=UTF-8''${encodeURIComponent('議事録 2024年.pdf')}`,
    );
    expect(answer.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    expect(answer.headers.get('content-security-policy')).not.toMatch(/sandbox/);
    const quoted = await download(await uploaded(open, 'x', `it's "q" (1).txt`, 'text/plain', true));
    expect(quoted.headers.get('content-disposition')).toBe(`attachment; filename="it's _q_ (1).txt"; filename*=UTF-8''it%27s%20%22q%22%20%281%29.txt`);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const id = await uploaded(open, 'cached', 'c.txt');
    const { headers } = await download(id);
    const again = await download(id, { 'If-None-Match': `"other", ${headers.get('etag')}` });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    expect((await download(id, { 'If-None-Match': '"other"' })).status).toBe(200);
  });

  it('answers a Range with 206, an unsatisfiable one with 416, and ignores what it does not support', async () => {
    const data = Buffer.from('0123456789abcdefghij');
    const id = await uploaded(open, data, 'r.txt');
    const first = await download(id, { Range: 'bytes=2-5' });
    expect([first.status, first.bytes.toString(), first.headers.get('content-range'), first.headers.get('content-length')]).toEqual([206, '2345', 'bytes 2-5/20', '4']);
    const tail = await download(id, { Range: 'bytes=-3' });
    expect([tail.status, tail.bytes.toString(), tail.headers.get('content-range')]).toEqual([206, 'hij', 'bytes 17-19/20']);
    const open_ = await download(id, { Range: 'bytes=15-' });
    expect([open_.status, open_.bytes.toString()]).toEqual([206, 'fghij']);
    const past = await download(id, { Range: 'bytes=50-60' });
    expect([past.status, past.headers.get('content-range'), JSON.parse(past.bytes.toString()).code]).toEqual([416, 'bytes */20', 'range_not_satisfiable']);
    expect((await download(id, { Range: 'bytes=0-1,4-5' })).status).toBe(200);
    expect((await download(id, { Range: 'lines=1-2' })).status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect((await download(id, { Range: 'bytes=0-1', 'If-Range': etag })).status).toBe(206);
    const stale = await download(id, { Range: 'bytes=0-1', 'If-Range': '"older"' });
    expect([stale.status, stale.bytes.toString()]).toEqual([200, data.toString()]);
  });

  it('answers fileurl with ?access_token= for those who may read the note, 404 to others, 401 without a token', async () => {
    const id = await uploaded(secret, PNG, 'private.png');
    const withQuery = await fetch(`${app.baseUrl}/api/v1/attachments/${id}?access_token=${member.token}`);
    expect(withQuery.status).toBe(200);
    expect(Buffer.from(await withQuery.arrayBuffer())).toEqual(PNG);
    const outside = await download(id, {}, outsider);
    expect([outside.status, JSON.parse(outside.bytes.toString()).code]).toEqual([404, 'not_found']);
    expect((await download(999999)).status).toBe(404);
    expect((await anonymous(app).get(`/api/v1/attachments/${id}`)).status).toBe(401);
    // HEAD: the same headers, no body
    const head = await fetch(`${app.baseUrl}/api/v1/attachments/${id}`, { method: 'HEAD', headers: { Authorization: `Bearer ${member.token}` } });
    expect([head.status, head.headers.get('content-length'), (await head.arrayBuffer()).byteLength]).toEqual([200, String(PNG.length), 0]);
  });
});
