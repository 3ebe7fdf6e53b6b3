// The baseline of scripts/bench-http.ts: a plain express server (the project's express, default settings) that
// answers every request, whatever its method and path, with the response it was last given: the same status,
// content-type and body bytes the service sent for the case being measured. It runs as a child process (its own
// event loop, like the service), is told what to answer over IPC, and exits when its parent goes away.
import type { AddressInfo } from 'node:net';
import express from 'express';

export type CannedResponse = { status: number; contentType: string; bodyBase64: string };

let current = { status: 503, contentType: 'text/plain; charset=utf-8', body: Buffer.from('no response set yet\n') };

const app = express();
// No body parser: the baseline of a write only has to answer the same method with the same bytes (node reads and
// drops the unread request body before the next request on the connection).
app.all('/{*path}', (_request, response) => {
  response.status(current.status).set('Content-Type', current.contentType).send(current.body);
});

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});

process.on('message', (message: CannedResponse) => {
  current = { status: message.status, contentType: message.contentType, body: Buffer.from(message.bodyBase64, 'base64') };
  process.send?.({ ok: true });
});
process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
