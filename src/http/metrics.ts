// /metrics in the Prometheus text format (prom-client), when METRICS_TOKEN is set; a bearer of that token reads it.
// Unset, nothing is measured and /metrics answers 404 like any unknown path.
//   http_requests_total, http_request_duration_seconds  by operation (the operationId; `other` outside the API,
//       `unmatched` for an API path the document does not have), method and status
//   db_pool_connections{state}  the ORM's connection pool (pg-pool): total, idle, and requests waiting for a
//       connection. On the embedded database the pool is one connection in front of PGlite's single session, so
//       `waiting` is PGlite's queue.
//   notes_change_feed_live  1 while the change feed is heard (otherwise nothing is served from memory)
//   notes_heap_live_bytes, notes_heap_live_peak_bytes, notes_heap_limit_bytes  what the last full collection left
//       alive, its largest since the start, and the heap's ceiling (HEAP_LIMIT_MB); notes_memory_refusals the
//       requests refused with 503 `server_busy` while memory was tight (memory-pressure.ts)
//   the default process metrics (CPU, memory, heap, GC, handles), including the event loop lag
//       (nodejs_eventloop_lag_seconds and its percentiles)
import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import client from 'prom-client';
import type { ChangeFeed } from '../db/change-feed.ts';
import type { Orm } from '../db/database.ts';
import { unauthorized } from './errors.ts';
import type { MemoryPressure } from './memory-pressure.ts';
import { asProblem, plainRouter } from './input-guard.ts';

type PoolStats = { totalCount: number; idleCount: number; waitingCount: number };

/**
 * `measure` goes before routing (`measureFrom` measures a request from a moment already taken: the hot reads
 * answered ahead of express); `routes` serves GET /metrics (with the guard and 405 of every plain route).
 */
export type Metrics = {
  measure: RequestHandler;
  measureFrom(req: IncomingMessage, res: ServerResponse, started: bigint): void;
  routes: Router;
};

/** The operationId of an answered request (set by the OpenAPI validator, or by the hot reads), for labels. */
function operationOf(req: Request, res: Response): string {
  const fromValidator = (req as Request & { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
  const fromLocals = res.locals.operationId as string | undefined;
  return fromValidator ?? fromLocals ?? (req.originalUrl.startsWith('/api/') ? 'unmatched' : 'other');
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const match = header && /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function createMetrics(token: string, orm: Orm, changes: ChangeFeed, pressure: MemoryPressure): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const labelNames = ['operation', 'method', 'status'] as const;
  const requests = new client.Counter({ name: 'http_requests_total', help: 'Requests answered, by operationId, method and status', labelNames, registers: [registry] });
  const duration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request arriving to the answer finished, by operationId, method and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  let pool: PoolStats | undefined;
  void orm.em.getConnection().getNativeClient().then((native) => (pool = native as unknown as PoolStats)).catch(() => undefined);
  new client.Gauge({
    name: 'db_pool_connections',
    help: 'Database connections of the pool: total, idle, and requests waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      if (!pool) return;
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  new client.Gauge({
    name: 'notes_change_feed_live',
    help: '1 while the database change feed is heard',
    registers: [registry],
    collect() {
      this.set(changes.live ? 1 : 0);
    },
  });
  const heap = (name: string, help: string, read: () => number) =>
    new client.Gauge({ name, help, registers: [registry], collect() { this.set(read()); } });
  heap('notes_heap_live_bytes', 'Heap left alive by the last full garbage collection, in bytes', () => pressure.state().liveBytes);
  heap('notes_heap_live_peak_bytes', 'The largest heap left alive by a full garbage collection since the start, in bytes', () => pressure.state().peakLiveBytes);
  heap('notes_heap_limit_bytes', "The heap's ceiling (HEAP_LIMIT_MB), in bytes", () => pressure.state().limitBytes);
  heap('notes_memory_refusals', 'Requests refused with 503 server_busy because memory was tight', () => pressure.state().refused);
  // each set of labels' counter and histogram, looked up once (operations x methods x statuses: a few hundred at most)
  const series = new Map<string, { count: client.Counter.Internal; time: client.Histogram.Internal<(typeof labelNames)[number]> }>();
  const measureFrom = (req: IncomingMessage, res: ServerResponse, started: bigint): void => {
    res.once('finish', () => {
      const operation = operationOf(req as Request, res as Response);
      const status = String(res.statusCode);
      const method = req.method ?? 'GET';
      const key = `${operation} ${method} ${status}`;
      let one = series.get(key);
      if (!one) {
        const labels = { operation, method, status };
        series.set(key, (one = { count: requests.labels(labels), time: duration.labels(labels) }));
      }
      one.count.inc();
      one.time.observe(Number(process.hrtime.bigint() - started) / 1e9);
    });
  };
  return {
    measure(req, res, next) {
      measureFrom(req, res, process.hrtime.bigint());
      next();
    },
    measureFrom,
    routes: plainRouter({ refuse: asProblem }, [{
      path: '/metrics',
      async GET(req, res) {
        if (!bearerMatches(req.get('authorization'), token)) throw unauthorized('/metrics needs the bearer token set in METRICS_TOKEN', req.get('authorization') !== undefined);
        res.setHeader('Cache-Control', 'no-store');
        res.type(registry.contentType).send(await registry.metrics());
      },
    }]),
  };
}
