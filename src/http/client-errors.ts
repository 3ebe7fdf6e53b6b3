// What node's HTTP parser refuses before express sees a request (a request line or headers past its 16 KiB limit,
// bytes that are not HTTP) was answered by node with a bare status line and no body. It is answered here as problem
// details like every other refusal: 431 `headers_too_large`, or 400 `malformed_body`. Nothing has been routed or
// logged yet, so `request_id` is `unknown`. A socket that is already gone is just closed.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, title, code, detail] = error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request line or the headers are larger than 16 KiB']
      : [400, 'Bad Request', 'malformed_body', 'the request is not valid HTTP'];
    const body = JSON.stringify({ type: 'about:blank', title, status, detail, code, request_id: 'unknown' });
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
