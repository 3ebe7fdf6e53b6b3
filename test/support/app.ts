// The service under test: the real app on a real database, listening on a free loopback port.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createLogger } from '../../src/http/logger.ts';
import { openTestDatabase } from './database.ts';

export type TestApp = {
  baseUrl: string;
  config: Config;
  database: Database;
  /** A fresh entity manager, for factories and for checking stored state. */
  em(): EntityManager;
  close(): Promise<void>;
};

export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const database = await openTestDatabase();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({ NODE_ENV: 'test', PUBLIC_URL: baseUrl, PORT: String(port), LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env });
  const app = buildApp({ config, orm: database.orm, logger: createLogger(config.logLevel) });
  server.on('request', app);
  return {
    baseUrl,
    config,
    database,
    em: () => database.orm.em.fork(),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database.close();
    },
  };
}
