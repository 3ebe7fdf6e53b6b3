// Settings out of range stop the server before it touches a database, with one line naming the variable.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const node = path.join(root, 'node_modules', '.bin', 'node');

describe('RATE_LIMIT_PER_HOUR', () => {
  it('takes 1 to 10,000,000', () => {
    expect(loadConfig({}).rateLimitPerHour).toBe(5000);
    expect(loadConfig({ RATE_LIMIT_PER_HOUR: '1' }).rateLimitPerHour).toBe(1);
    expect(loadConfig({ RATE_LIMIT_PER_HOUR: '10000000' }).rateLimitPerHour).toBe(10_000_000);
  });

  it.each(['10000001', '0', '-1', '1e3', '5000.5', 'lots'])('refuses %s with a message naming the variable', (value) => {
    expect(() => loadConfig({ RATE_LIMIT_PER_HOUR: value })).toThrow(/^RATE_LIMIT_PER_HOUR must be /);
  });

  it('stops the server with exit status 1 and one line when out of range', () => {
    const result = spawnSync(node, ['src/server.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RATE_LIMIT_PER_HOUR: '10000001', DATA_DIR: '/nonexistent/never-created' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('configuration error: RATE_LIMIT_PER_HOUR must be between 1 and 10000000, got 10000001\n');
    expect(result.stdout).toBe('');
  });
});

describe('METRICS_TOKEN and CORS_ORIGINS', () => {
  it('are off when unset', () => {
    const config = loadConfig({});
    expect(config.metricsToken).toBeUndefined();
    expect(config.corsOrigins).toEqual([]);
  });

  it('take a token of 16 or more characters, and * or a list of origins', () => {
    expect(loadConfig({ METRICS_TOKEN: 'a'.repeat(16) }).metricsToken).toBe('a'.repeat(16));
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:8080/' }).corsOrigins).toEqual(['https://a.example', 'http://localhost:8080']);
  });

  it.each([['METRICS_TOKEN', 'short'], ['METRICS_TOKEN', 'has a space in it, long enough'], ['CORS_ORIGINS', 'a.example'], ['CORS_ORIGINS', 'https://a.example/path'], ['CORS_ORIGINS', 'ftp://a.example'], ['CORS_ORIGINS', 'https://a.example,*']])(
    'refuse %s=%s with a message naming the variable',
    (name, value) => {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be `));
    },
  );
});

describe('PROJECTION_WORKER', () => {
  it('is on by default, takes true or false, and refuses anything else', () => {
    expect(loadConfig({}).projectionWorker).toBe(true);
    expect(loadConfig({ PROJECTION_WORKER: 'false' }).projectionWorker).toBe(false);
    for (const bad of ['no', '0', 'TRUE', ' true']) expect(() => loadConfig({ PROJECTION_WORKER: bad }), bad).toThrow(/PROJECTION_WORKER/);
  });
});

describe('EVENTS_FAN_OUT', () => {
  it('is process by default, takes process or inline, and refuses anything else', () => {
    expect(loadConfig({}).events.fanOut).toBe('process');
    expect(loadConfig({ EVENTS_FAN_OUT: 'inline' }).events.fanOut).toBe('inline');
    for (const bad of ['child', 'INLINE', ' process']) expect(() => loadConfig({ EVENTS_FAN_OUT: bad }), bad).toThrow(/^EVENTS_FAN_OUT/);
  });
});

describe('HEAP_LIMIT_MB', () => {
  it('is 768 by default, takes a whole number of MiB from 256, and refuses anything else', () => {
    expect(loadConfig({}).heapLimitMb).toBe(768);
    expect(loadConfig({ HEAP_LIMIT_MB: '1024' }).heapLimitMb).toBe(1024);
    for (const bad of ['255', '0', '-1', '512.5', 'lots', '1e3']) expect(() => loadConfig({ HEAP_LIMIT_MB: bad }), bad).toThrow(/^HEAP_LIMIT_MB/);
  });

  it('stops scripts/serve.sh with one line when it is not a number, before Node starts', () => {
    const result = spawnSync('bash', ['scripts/serve.sh'], { cwd: root, env: { ...process.env, HEAP_LIMIT_MB: 'lots' }, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe('configuration error: HEAP_LIMIT_MB must be a whole number of MiB, got "lots"');
  });
});

describe('REDIS_URL and the LIVE_* settings', () => {
  it('REDIS_URL is unset by default, takes redis:// or rediss://, and refuses anything else without showing a password', () => {
    expect(loadConfig({}).live.redisUrl).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).live.redisUrl).toBe('redis://127.0.0.1:6379/2');
    expect(loadConfig({ REDIS_URL: 'rediss://user:secret@cache.example:6380' }).live.redisUrl).toBe('rediss://user:secret@cache.example:6380');
    for (const bad of ['localhost:6379', 'http://127.0.0.1:6379', 'redis//x']) expect(() => loadConfig({ REDIS_URL: bad }), bad).toThrow(/^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => loadConfig({ REDIS_URL: 'http://user:secret@127.0.0.1' })).toThrow(/^(?!.*secret)/);
  });

  it('LIVE_* are whole numbers in their ranges, with the documented defaults', () => {
    expect(loadConfig({}).live).toEqual({ savePauseMs: 2_000, saveMaxMs: 10_000, recheckMs: 5_000, connectionsPerUser: 20, connectionsPerPage: 50, redisUrl: undefined });
    expect(loadConfig({ LIVE_CONNECTIONS_PER_PAGE: '3' }).live.connectionsPerPage).toBe(3);
    for (const [name, bad] of [['LIVE_SAVE_PAUSE_MS', '10'], ['LIVE_SAVE_MAX_MS', 'soon'], ['LIVE_RECHECK_MS', '0'], ['LIVE_CONNECTIONS_PER_USER', '0'], ['LIVE_CONNECTIONS_PER_PAGE', '10001']]) {
      expect(() => loadConfig({ [name!]: bad }), `${name}=${bad}`).toThrow(new RegExp(`^${name} must be `));
    }
  });
});
