import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { pinoHttp } from 'pino-http';
import { redactUrl, type Logger } from './logger.ts';

const acceptableId = /^[A-Za-z0-9._-]{8,128}$/;

/**
 * Gives every request an id (a sane incoming X-Request-Id is kept) and echoes it; `req.log` is the logger of this
 * request (with `request_id`), and one line is logged when the request ends (pino-http): method, URL with its
 * credentials redacted (logger.ts), headers (Authorization and Cookie redacted by the logger), status, time taken,
 * the caller's user id and the operationId. The returned function does it to node's request and response (the hot
 * reads answered ahead of express call it too: hot-reads.ts), the app's first layer calls it on every other.
 */
export function requestIdAndLog(logger: Logger, requestPrototype: object): (req: IncomingMessage, res: ServerResponse) => void {
  const middleware = pinoHttp<IncomingMessage, ServerResponse>({
    logger,
    quietReqLogger: true,
    quietResLogger: true,
    customAttributeKeys: { reqId: 'request_id', responseTime: 'duration_ms' },
    genReqId(req, res) {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && acceptableId.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // pino-http binds `req` to a child logger on every request, which neither quiet option uses: that binding is
    // serialized to nothing (it costs nothing), and the line logged at the end carries the request as `request`
    wrapSerializers: false,
    serializers: {
      req: () => undefined,
      request: (req: Request) => ({ method: req.method, url: redactUrl(req.originalUrl ?? req.url), headers: req.headers }),
      res: (res: ServerResponse) => ({ status: res.statusCode }),
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
    customSuccessObject: (req, res, value: Record<string, unknown>) => ({ ...value, ...callerFields(req as Request, res) }),
    customErrorObject: (req, res, _error, value: Record<string, unknown>) => ({ ...value, ...callerFields(req as Request, res) }),
  });
  type Tagged = IncomingMessage & { id?: unknown; requestId?: string };
  if (logger.isLevelEnabled('info')) {
    return (req: Tagged, res) => {
      middleware(req, res);
      req.requestId = String(req.id);
    };
  }
  // Above `info` no request line is written: pino-http's two child loggers and three listeners per request would be
  // spent for nothing, a share of a hot read's time worth saving (docs/operating.md, "What this costs"). The id is
  // given the same way; `req.log` is made when first used, by a getter on the app's request prototype (one
  // defineProperty per app, not per request).
  const ownLog = Symbol('log');
  type WithLog = { [ownLog]?: Logger; requestId: string };
  Object.defineProperty(requestPrototype, 'log', {
    configurable: true,
    get(this: WithLog) {
      return (this[ownLog] ??= logger.child({ request_id: this.requestId }));
    },
    set(this: WithLog, value: Logger) {
      this[ownLog] = value;
    },
  });
  return (req: Tagged, res) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && acceptableId.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', id);
    req.id = id;
    req.requestId = id;
  };
}

function callerFields(req: Request, res: ServerResponse & { locals?: Record<string, unknown> }): Record<string, unknown> {
  // the validator's operation, or the one a hot read answered (hot-reads.ts)
  const operationId = (req as Request & { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId ?? res.locals?.operationId;
  return { request: req, user_id: req.caller?.user.id, operation_id: operationId };
}
