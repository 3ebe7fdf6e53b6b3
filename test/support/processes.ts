// The server as a separate process, as `make run` and scripts start it: a free port, a start that waits until the
// server says where its docs are, and a stop that waits for the exit. Used by the tests that need real processes
// (admin command line, crash, two processes on one PostgreSQL).
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

export const projectRoot = path.resolve(import.meta.dirname, '..', '..');

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A started server; `output` grows with everything it prints. */
export type ServerProcess = { child: ChildProcess; output: string };

/** Runs `command args` in the project root with `env` and waits until it answers (it prints "API docs:"). */
export async function startServerProcess(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const server: ServerProcess = { child: spawn(command, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] }), output: '' };
  server.child.stdout!.on('data', (chunk: Buffer) => (server.output += chunk.toString()));
  server.child.stderr!.on('data', (chunk: Buffer) => (server.output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!server.output.includes('API docs:')) {
    if (Date.now() > deadline || server.child.exitCode !== null) throw new Error(`server did not start:\n${server.output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return server;
}

/** Sends `signal` and waits for the exit; the exit code (null when killed by a signal, or not running). */
export async function stopServerProcess(server: ServerProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  const child = server?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

/** A service process (`node src/server.ts`) and the address it answers at. */
export type ServiceProcess = ServerProcess & { baseUrl: string };

/**
 * `node src/server.ts` as scripts/serve.sh starts it, on a free port, against `databaseUrl`, with its files in
 * `dataDir` and `env` added (REDIS_URL, LIVE_*, limits): the tests of several processes on one database.
 */
export async function startService(databaseUrl: string, dataDir: string, env: Record<string, string | undefined> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const node = path.join(projectRoot, 'node_modules', '.bin', 'node');
  const server = await startServerProcess(node, ['src/server.ts'], {
    PATH: `${path.join(projectRoot, 'node_modules', '.bin')}:${process.env.PATH}`,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    PORT: String(port),
    PUBLIC_URL: baseUrl,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    ...env,
  });
  return Object.assign(server, { baseUrl });
}
