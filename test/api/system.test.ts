// The routes outside the API that a browser or a tool fetches: the API reference (a 2.7 MB page) and the bundled
// OpenAPI document go out compressed when the client accepts it, and answer HEAD. Raw node:http requests, because
// fetch asks for compression on its own and decodes the body, hiding what was sent.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

type RawAnswer = { status: number; headers: IncomingHttpHeaders; body: Buffer };

function raw(method: 'GET' | 'HEAD', path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${app.baseUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each([
  { path: '/openapi.json', type: 'application/json', starts: '{' },
  { path: '/docs', type: 'text/html', starts: '<' },
])('$path', ({ path, type, starts }) => {
  it('is sent uncompressed to a client that does not ask for compression', async () => {
    const answer = await raw('GET', path);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toContain(type);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.body.toString('utf8').trimStart().startsWith(starts)).toBe(true);
  });

  it('is sent gzip-compressed with Accept-Encoding: gzip, and decodes to the same bytes', async () => {
    const plain = await raw('GET', path);
    const answer = await raw('GET', path, { 'Accept-Encoding': 'gzip' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(answer.headers.vary).toMatch(/accept-encoding/i);
    expect(answer.body.length).toBeLessThan(plain.body.length / 3);
    expect(gunzipSync(answer.body).equals(plain.body)).toBe(true);
  });

  it('is sent brotli-compressed to a client that prefers br', async () => {
    const plain = await raw('GET', path);
    const answer = await raw('GET', path, { 'Accept-Encoding': 'br, gzip;q=0.5' });
    expect(answer.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(answer.body).equals(plain.body)).toBe(true);
  });

  // `compression` leaves HEAD alone (it would have to compress the body to know the compressed length), so HEAD
  // describes the uncompressed representation.
  it('answers HEAD with the type and length of GET and no body', async () => {
    const plain = await raw('GET', path);
    const answer = await raw('HEAD', path, { 'Accept-Encoding': 'gzip' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toContain(type);
    expect(answer.headers['content-length']).toBe(String(plain.body.length));
    expect(answer.body.length).toBe(0);
  });
});

describe('routes outside the reference and the document', () => {
  it('are not compressed', async () => {
    const answer = await raw('GET', '/healthz', { 'Accept-Encoding': 'gzip' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
  });
});
