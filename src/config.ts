// Every setting of the service, read from the environment once and validated here. Nothing else reads process.env.
import path from 'node:path';

export type Config = {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  adminUsername: string;
  environment: 'development' | 'test' | 'production';
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  validateResponses: boolean;
  rateLimitPerHour: number;
  /**
   * CACHE_BYTES: the memory all the in-process caches together may hold (page views, hot reads, team members, page
   * tree orders), divided among them where they are made (src/app.ts). Raise the heap ceiling with it (scripts/serve.sh).
   */
  cacheBytes: number;
  /**
   * HEAP_LIMIT_MB: the JavaScript heap's ceiling in MiB (default 768), which scripts/serve.sh gives Node as
   * --max-old-space-size. It is sized at least twice what is alive at the worst moment measured (docs/operating.md,
   * Memory); the server refuses to start on a machine without the memory it needs (src/http/memory-check.ts).
   */
  heapLimitMb: number;
  /**
   * Express's `trust proxy`: which proxies' `X-Forwarded-For` names the client's address (the sign-in limits count
   * per address). false (the default) takes the connection's address; behind a reverse proxy, set TRUST_PROXY.
   */
  trustProxy: boolean | number | string;
  limits: Limits;
  /** METRICS_TOKEN: who may read /metrics (a bearer of this token); unset, /metrics answers 404. */
  metricsToken: string | undefined;
  /** CORS_ORIGINS: the browser origins allowed to call the API across origins ('*': any); empty, no CORS headers at all. */
  corsOrigins: readonly string[] | '*';
  /** Where attachment bytes live: the local directory `<DATA_DIR>/attachments` (default), or an S3-compatible store. */
  storage: StorageConfig;
  oauth: OAuthSettings;
  webhooks: WebhookSettings;
  /**
   * The change stream (GET /api/v1/events): how many days the change log keeps (EVENTS_RETENTION_DAYS, default 30),
   * the heartbeat interval, in which a deleted or expired token's stream also ends (EVENTS_HEARTBEAT_SECONDS, 15),
   * how many streams a token may hold open in one process (EVENTS_STREAMS_PER_TOKEN, 5), and who writes the open
   * streams' sockets (EVENTS_FAN_OUT): a child process of the server ('process', the default:
   * src/modules/events/fan-out.ts) or the server's own thread ('inline').
   */
  events: { retentionDays: number; heartbeatSeconds: number; streamsPerToken: number; fanOut: 'process' | 'inline' };
  /**
   * Live editing (WebSocket /live, src/modules/live): a document is saved as a version after LIVE_SAVE_PAUSE_MS
   * (2000) without typing and at least every LIVE_SAVE_MAX_MS (10000) while typing goes on; every connection's
   * access is checked again every LIVE_RECHECK_MS (5000); a user may hold LIVE_CONNECTIONS_PER_USER (20) sockets and
   * a page may have LIVE_CONNECTIONS_PER_PAGE (50). With REDIS_URL (redis:// or rediss://), the processes share
   * live documents through Redis (src/modules/live/live-redis.ts); without it one process serves them.
   */
  live: { savePauseMs: number; saveMaxMs: number; recheckMs: number; connectionsPerUser: number; connectionsPerPage: number; redisUrl: string | undefined };
  /**
   * Whether this process runs the projections of the change log (PROJECTION_WORKER: the search index, the webhooks'
   * outbox; src/modules/events/projections.ts). With several processes, any number may: one at a time applies each.
   */
  projectionWorker: boolean;
};

// Webhooks (src/modules/webhooks): the delivery worker's pace, its retries, when a failing webhook is disabled, and
// whether webhook URLs may point at loopback and private addresses (off by default: the SSRF guard).
export type WebhookSettings = {
  /** Whether this process runs the delivery worker (WEBHOOK_WORKER; with several processes, any number may). */
  worker: boolean;
  pollMs: number;
  timeoutMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  disableAfter: number;
  allowPrivate: boolean;
};

// OAuth 2 (src/modules/oauth): token lifetimes, and the brute-force limits of the sign-in page and the password
// grant (attempts per account and per client address, in a fixed window).
export type OAuthSettings = {
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  signInAttemptsPerAccount: number;
  signInAttemptsPerAddress: number;
  signInWindowSeconds: number;
  /** OAUTH_REGISTRATIONS_PER_HOUR: dynamic client registrations (POST /oauth/register) per client address per hour. */
  registrationsPerAddress: number;
  /** OAUTH_REGISTRATION_UNUSED_HOURS: a dynamically registered app no user authorized within this is deleted. */
  registrationUnusedHours: number;
};

export type StorageConfig =
  | { kind: 'local' }
  | { kind: 's3'; bucket: string; region: string; endpoint: string | undefined; prefix: string; forcePathStyle: boolean; accessKeyId: string | undefined; secretAccessKey: string | undefined };

// Limits enforced in code (the fixed schema limits — title 255 chars, 50 mentions, 100 tags, comment 64 KiB — are
// written in the OpenAPI document itself).
export type Limits = {
  requestBodyBytes: number;
  pageContentBytes: number;
  attachmentBytes: number;
  /** The largest note export zip an import takes (importNote, `import` of the admin command line). */
  importBytes: number;
  /** The most files a note export zip an import takes may hold. */
  importEntries: number;
  pageTreeDepth: number;
  /**
   * Stored text (page content, version content and diff) one answer of a list carries at most: a list whose items
   * hold such text ends its page of results early instead (pagination.ts, `budgetedPage`).
   */
  listTextBytes: number;
  /**
   * How many full pages of results (listTextBytes of text each) may be built at once: answers of 256 KiB of text or
   * more share that budget by their size, and wait their turn past it (http/answer-gate.ts).
   */
  largeAnswers: number;
};

export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function redisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!URL.canParse(raw) || !['redis:', 'rediss:'].includes(new URL(raw).protocol)) {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${raw.replace(/\/\/[^@/]*@/, '//…@')}"`);
  }
  return raw;
}

function trustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  if (/^[0-9A-Za-z.:/,\s]+$/.test(raw)) return raw;
  throw new ConfigError(`TRUST_PROXY must be true, false, a number of hops, or addresses/subnets (loopback, 10.0.0.0/8, ...), got "${raw}"`);
}

/** `S3_BUCKET` switches attachment storage to S3; the other `S3_*` variables say where and how (README). */
function storageConfig(env: NodeJS.ProcessEnv): StorageConfig {
  const bucket = env.S3_BUCKET;
  if (!bucket) return { kind: 'local' };
  const endpoint = env.S3_ENDPOINT || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]/.test(endpoint)) throw new ConfigError(`S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  const accessKeyId = env.S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || undefined;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together');
  const prefix = env.S3_PREFIX ?? 'attachments/';
  return {
    kind: 's3',
    bucket,
    region: env.S3_REGION || 'us-east-1',
    endpoint,
    prefix,
    // a self-hosted store (MinIO, Garage, s3rver) answers on paths, not on bucket subdomains
    forcePathStyle: oneOf(env, 'S3_FORCE_PATH_STYLE', endpoint ? 'true' : 'false', ['true', 'false'] as const) === 'true',
    accessKeyId,
    secretAccessKey,
  };
}

function metricsToken(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) throw new ConfigError('METRICS_TOKEN must be 16-256 printable ASCII characters without spaces');
  return raw;
}

/** `*`, or origins separated by commas (`https://notes.example.com,https://app.example.com`). */
function corsOrigins(raw: string | undefined): readonly string[] | '*' {
  if (raw === undefined || raw.trim() === '') return [];
  if (raw.trim() === '*') return '*';
  return raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '').map((entry) => {
    let origin: string | undefined;
    try {
      const url = new URL(entry);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/' && !url.search && !url.hash && !url.username) origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (!origin || entry.replace(/\/$/, '') !== origin) {
      throw new ConfigError(`CORS_ORIGINS must be * or origins separated by commas (scheme://host[:port], no path), got "${entry}"`);
    }
    return origin;
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const environment = oneOf(env, 'NODE_ENV', 'development', ['development', 'test', 'production'] as const);
  const publicUrlRaw = env.PUBLIC_URL || `http://localhost:${port}`;
  let publicUrl: string;
  try {
    const parsed = new URL(publicUrlRaw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
    publicUrl = parsed.toString().replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${publicUrlRaw}"`);
  }
  const adminUsername = env.ADMIN_USERNAME || 'admin';
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$/.test(adminUsername)) {
    throw new ConfigError(`ADMIN_USERNAME must be 1-39 characters of A-Z, a-z, 0-9, _ and -, got "${adminUsername}"`);
  }
  return {
    port,
    host: env.HOST || '127.0.0.1',
    publicUrl,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    adminUsername,
    environment,
    logLevel: oneOf(env, 'LOG_LEVEL', environment === 'test' ? 'silent' : 'info', ['debug', 'info', 'warn', 'error', 'silent'] as const),
    validateResponses: environment !== 'production',
    rateLimitPerHour: integer(env, 'RATE_LIMIT_PER_HOUR', 5000, 1, 10_000_000),
    projectionWorker: oneOf(env, 'PROJECTION_WORKER', 'true', ['true', 'false'] as const) === 'true',
    cacheBytes: integer(env, 'CACHE_BYTES', 16 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024 * 1024),
    heapLimitMb: integer(env, 'HEAP_LIMIT_MB', 768, 256, 1024 * 1024),
    trustProxy: trustProxy(env.TRUST_PROXY),
    limits: {
      requestBodyBytes: integer(env, 'LIMIT_REQUEST_BODY_BYTES', 2 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      pageContentBytes: integer(env, 'LIMIT_PAGE_CONTENT_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
      attachmentBytes: integer(env, 'LIMIT_ATTACHMENT_BYTES', 25 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      importBytes: integer(env, 'LIMIT_IMPORT_BYTES', 256 * 1024 * 1024, 1024, 64 * 1024 * 1024 * 1024),
      importEntries: integer(env, 'LIMIT_IMPORT_ENTRIES', 60_000, 10, 10_000_000),
      pageTreeDepth: integer(env, 'LIMIT_PAGE_TREE_DEPTH', 32, 1, 1000),
      listTextBytes: integer(env, 'LIMIT_LIST_TEXT_BYTES', 4 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
      largeAnswers: integer(env, 'LIMIT_LARGE_ANSWERS', 1, 1, 1000),
    },
    metricsToken: metricsToken(env.METRICS_TOKEN),
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    storage: storageConfig(env),
    oauth: {
      accessTokenSeconds: integer(env, 'OAUTH_ACCESS_TOKEN_SECONDS', 3600, 60, 31_536_000),
      refreshTokenSeconds: integer(env, 'OAUTH_REFRESH_TOKEN_SECONDS', 30 * 86_400, 60, 315_360_000),
      signInAttemptsPerAccount: integer(env, 'SIGN_IN_ATTEMPTS_PER_ACCOUNT', 10, 1, 1_000_000),
      signInAttemptsPerAddress: integer(env, 'SIGN_IN_ATTEMPTS_PER_ADDRESS', 50, 1, 1_000_000),
      signInWindowSeconds: integer(env, 'SIGN_IN_WINDOW_SECONDS', 900, 1, 86_400),
      registrationsPerAddress: integer(env, 'OAUTH_REGISTRATIONS_PER_HOUR', 20, 1, 1_000_000),
      registrationUnusedHours: integer(env, 'OAUTH_REGISTRATION_UNUSED_HOURS', 24, 1, 87_600),
    },
    events: {
      retentionDays: integer(env, 'EVENTS_RETENTION_DAYS', 30, 1, 36_500),
      heartbeatSeconds: integer(env, 'EVENTS_HEARTBEAT_SECONDS', 15, 1, 300),
      streamsPerToken: integer(env, 'EVENTS_STREAMS_PER_TOKEN', 5, 1, 10_000),
      fanOut: oneOf(env, 'EVENTS_FAN_OUT', 'process', ['process', 'inline'] as const),
    },
    live: {
      savePauseMs: integer(env, 'LIVE_SAVE_PAUSE_MS', 2_000, 50, 600_000),
      saveMaxMs: integer(env, 'LIVE_SAVE_MAX_MS', 10_000, 100, 3_600_000),
      recheckMs: integer(env, 'LIVE_RECHECK_MS', 5_000, 100, 600_000),
      connectionsPerUser: integer(env, 'LIVE_CONNECTIONS_PER_USER', 20, 1, 10_000),
      connectionsPerPage: integer(env, 'LIVE_CONNECTIONS_PER_PAGE', 50, 1, 10_000),
      redisUrl: redisUrl(env.REDIS_URL),
    },
    webhooks: {
      worker: oneOf(env, 'WEBHOOK_WORKER', 'true', ['true', 'false'] as const) === 'true',
      pollMs: integer(env, 'WEBHOOK_POLL_MS', 1000, 10, 3_600_000),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', 8, 1, 50),
      retryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 30_000, 1, 86_400_000),
      retryMaxMs: integer(env, 'WEBHOOK_RETRY_MAX_MS', 6 * 3_600_000, 1, 7 * 86_400_000),
      disableAfter: integer(env, 'WEBHOOK_DISABLE_AFTER', 20, 1, 1_000_000),
      allowPrivate: oneOf(env, 'WEBHOOK_ALLOW_PRIVATE', 'false', ['true', 'false'] as const) === 'true',
    },
  };
}
