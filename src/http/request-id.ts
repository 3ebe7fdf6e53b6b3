import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pathOnly, type Logger } from './logger.ts';

const acceptableId = /^[A-Za-z0-9._-]{8,128}$/;

/** Gives every request an id (a sane incoming X-Request-Id is kept), echoes it, and logs the request when it ends. */
export function requestIdAndLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    req.requestId = incoming && acceptableId.test(incoming) ? incoming : randomUUID();
    req.log = logger.child({ request_id: req.requestId });
    res.setHeader('X-Request-Id', req.requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      req.log.info('request', {
        method: req.method,
        path: pathOnly(req.originalUrl),
        status: res.statusCode,
        duration_ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        user_id: req.caller?.user.id,
      });
    });
    next();
  };
}
