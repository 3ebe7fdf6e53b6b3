// The soak (issue 43, point 3): one server started as `make run` starts it (`bash scripts/serve.sh`, development
// settings, this pass's database), loaded for SOAK_SECONDS (default 150) by the project's own flows at once: the role
// matrix on a public and a private note (roles.ts), fuzzing from the document (fuzz.ts), the worst-case answers
// (large.ts), exports imported back (transfer.ts), the change stream held open and resumed (events.ts) and MCP calls
// (mcp.ts). Allowed: any 2xx-4xx, and 503 with Retry-After (the server shedding work under memory pressure, counted).
// Not allowed: any other 5xx, a connection refused or reset, a request with no answer in time, an answer a flow did
// not expect, the process exiting; at the end it must still run, and stop with exit code 0 on SIGTERM.
// The server's resident memory is sampled every 250 ms (/proc, VmRSS; VmHWM at the end) and /metrics scraped every
// 2 s for its heap; one summary line per database goes to the console and to .tmp/soak-<database>.txt, with the
// figures per flow and every failure (the request, its status and the head of its body) after it.
// SOAK_FLOWS=roles,fuzz,large,transfer,events,mcp runs only those (to replay one); SOAK_FUZZ_SEED replays the fuzzing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { State } from '../support/samples.ts';
import { createScratchDatabaseUrl, databaseKind } from '../support/database.ts';
import { freePort, projectRoot } from '../support/processes.ts';
import { EventsFlow } from './events.ts';
import { FuzzFlow, makeFuzzWorld } from './fuzz.ts';
import { LargeFlow, makeLargeWorld, type LargeWorld } from './large.ts';
import { McpFlow } from './mcp.ts';
import { RoleLane } from './roles.ts';
import { MemoryWatch, SoakServer } from './server.ts';
import { Deadline, Traffic } from './traffic.ts';
import { makeTransferWorld, TransferFlow } from './transfer.ts';
import { makeWorld, type World } from './world.ts';

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 150);
/** SOAK_FLOWS=roles,fuzz,...: only these flows (to replay one); all of them unless set. */
const FLOWS = new Set((process.env.SOAK_FLOWS ?? 'roles,fuzz,large,transfer,events,mcp').split(',').map((flow) => flow.trim()));
/** Role matrix lanes: 0 on the public note, 1 on the private one. */
const LANES = 2;
const METRICS_TOKEN = `soak-metrics-${process.pid}-0123456789`;
/** The setup writes ~20 MB through the API (the worst case), then the flows; the teardown waits for a graceful stop. */
const SETUP_MS = 600_000;
const TEARDOWN_MS = 120_000;

let dataDir: string;
let scratch: Awaited<ReturnType<typeof createScratchDatabaseUrl>>;
let server: SoakServer | undefined;
let traffic: Traffic;
let world: World;
let fuzzState: State;
let large: LargeWorld;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-soak-'));
  scratch = await createScratchDatabaseUrl();
  const port = await freePort();
  // as `make run` has it (no NODE_ENV: development), on a port and a data directory of the soak's own; the rate limit
  // lifted, as the flows send far more than a person does in an hour
  const env: NodeJS.ProcessEnv = {
    PATH: `${path.join(projectRoot, 'node_modules', '.bin')}:${process.env.PATH}`,
    HOME: process.env.HOME,
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    ADMIN_USERNAME: 'soak-admin',
    METRICS_TOKEN,
    RATE_LIMIT_PER_HOUR: '10000000',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  };
  server = await SoakServer.start(env);
  traffic = new Traffic(env.PUBLIC_URL!);
  try {
    world = await makeWorld(traffic, env, LANES);
    fuzzState = await makeFuzzWorld(traffic, world);
    large = await makeLargeWorld(traffic, world);
    await makeTransferWorld(traffic, world);
  } catch (error) {
    // what the setup's requests met, and what the server said
    const met = [...traffic.serverErrors, ...traffic.connectionErrors, ...traffic.hangs].join('\n');
    throw new Error(`${(error as Error).message}\n${met}\n${server.report()}`, { cause: error });
  }
}, SETUP_MS);

afterAll(async () => {
  if (server?.alive) await server.stop('SIGKILL');
  await scratch?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('soak', () => {
  it(`one server as make run starts it, loaded ${SOAK_SECONDS} s by every flow at once: no 5xx but shedding, no crash, a clean stop`, { timeout: SOAK_SECONDS * 1000 + TEARDOWN_MS + SETUP_MS }, async () => {
    const soakServer = server!;
    const memory = new MemoryWatch(soakServer, traffic, METRICS_TOKEN);
    const setupRequests = traffic.requests;
    const setupShed = traffic.shed;
    const started = Date.now();
    const deadline = new Deadline(started + SOAK_SECONDS * 1000);
    // the load ends at once when the server is gone: what the flows would send then says nothing more
    soakServer.child.once('exit', () => deadline.end());
    memory.resetPeak();
    memory.start();
    const lanes = Array.from({ length: LANES }, (_, lane) => new RoleLane(traffic, world, lane, deadline));
    const fuzz = new FuzzFlow(traffic, world, fuzzState, deadline);
    const largeFlow = new LargeFlow(traffic, world, large, deadline);
    const transfer = new TransferFlow(traffic, world, deadline);
    const events = new EventsFlow(traffic, world, deadline);
    const mcp = new McpFlow(traffic, world, deadline);
    const runs: [string, () => Promise<void>][] = [
      ...lanes.map((lane, index): [string, () => Promise<void>] => [`roles lane ${index}`, () => lane.run()]),
      ['fuzz', () => fuzz.run()], ['large', () => largeFlow.run()], ['transfer', () => transfer.run()], ['events', () => events.run()], ['mcp', () => mcp.run()],
    ];
    const flows = runs.filter(([name]) => FLOWS.has(name.split(' ')[0]!)).map(([name, run]) => [name, run()] as [string, Promise<void>]);
    const settled = await Promise.allSettled(flows.map(([, flow]) => flow));
    await events.close();
    await memory.stop();
    const seconds = Math.round((Date.now() - started) / 1000);
    // a flow that threw is a mistake in the soak (or an answer it could not read): its stack says which
    const thrown = settled.flatMap((result, index) => (result.status === 'rejected' ? [`${flows[index]![0]}: ${(result.reason as Error)?.stack ?? String(result.reason)}`] : []));

    const aliveAtEnd = soakServer.alive;
    const exitCode = aliveAtEnd ? await soakServer.stop('SIGTERM') : soakServer.exit?.code;

    const requests = traffic.requests - setupRequests;
    const mb = MemoryWatch.mb;
    const summary = `soak ${databaseKind}: ${seconds} s, ${requests} requests (503: ${traffic.shed - setupShed}), peak RSS ${mb(memory.peakRss)}, ` +
      `peak live heap ${mb(memory.peakLive)} (limit ${mb(memory.limit)}), 5xx: ${traffic.serverErrorCount}`;
    const details = [
      `  memory: VmHWM ${mb(memory.hwm)} over the load (reset as it began), child processes' peak RSS ${mb(memory.peakChildrenRss)}, ` +
        `heap used at most ${mb(memory.peakHeapUsed)} (nodejs_heap_size_used_bytes, ${memory.scrapes} scrapes); event loop delay at most ` +
        `${memory.peakLagSeconds === undefined ? 'n/a' : `${memory.peakLagSeconds.toFixed(2)} s`}`,
      `  flows: roles ${lanes.map((lane) => `${lane.rounds} rounds/${lane.cells} cells`).join(' + ')} over ` +
        `${new Set(lanes.flatMap((lane) => [...lane.operations])).size} operations; fuzz ${fuzz.requests} requests (seed ${fuzz.seed}); ` +
        `large ${largeFlow.rounds} rounds, ${mb(largeFlow.bytes)} read; transfer ${transfer.rounds} exports, ${transfer.imported} imported; ` +
        `events ${events.opens} streams opened, ${events.events} events; mcp ${mcp.rounds} rounds, ${mcp.calls} calls`,
      `  requests per flow (count, mean, slowest): ${[...traffic.perFlow].map(([flow, { count, ms, slowestMs, slowest }]) =>
        `${flow} ${count}, ${Math.round(ms / Math.max(1, count))} ms, ${(slowestMs / 1000).toFixed(1)} s (${slowest.slice(0, 80)})`).join('; ')}`,
      `  failures: ${traffic.serverErrorCount} 5xx, ${traffic.connectionErrorCount} connections refused or reset, ${traffic.hangCount} without an answer, ` +
        `${traffic.unexpectedCount} unexpected answers, ${thrown.length} flows that threw; server ${aliveAtEnd ? `alive at the end, exit code on SIGTERM ${exitCode}` : `DIED: ${JSON.stringify(soakServer.exit)}`}`,
    ];
    const failures = [
      ...traffic.serverErrors.map((entry) => `5xx: ${entry}`),
      ...traffic.connectionErrors.map((entry) => `connection: ${entry}`),
      ...traffic.hangs.map((entry) => `hang: ${entry}`),
      ...traffic.unexpected.map((entry) => `unexpected: ${entry}`),
      ...thrown.map((entry) => `threw: ${entry}`),
    ];
    const serverLines = soakServer.errorLines.length > 0 ? ['server error lines:', ...soakServer.errorLines] : [];
    mkdirSync(path.join(projectRoot, '.tmp'), { recursive: true });
    writeFileSync(path.join(projectRoot, '.tmp', `soak-${databaseKind}.txt`), [summary, ...details, ...failures, ...serverLines, ''].join('\n'));
    console.log([summary, ...details].join('\n'));

    const report = () => `${[...failures, ''].join('\n')}\n${soakServer.report()}`;
    expect(aliveAtEnd, `the server died during the soak\n${report()}`).toBe(true);
    expect(traffic.serverErrors, `5xx answers (not 503 with Retry-After)\n${report()}`).toEqual([]);
    expect(traffic.connectionErrors, `connections refused or reset\n${report()}`).toEqual([]);
    expect(traffic.hangs, `requests without a complete answer in time\n${report()}`).toEqual([]);
    expect(traffic.unexpected, `answers the flows did not expect\n${report()}`).toEqual([]);
    expect(thrown, report()).toEqual([]);
    expect(requests, 'the flows sent requests').toBeGreaterThan(SOAK_SECONDS);
    expect(exitCode, `exit code on SIGTERM\n${soakServer.report()}`).toBe(0);
  });
});
