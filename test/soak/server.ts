// The soak's server: one process started exactly as `make run` starts it (`bash scripts/serve.sh`, which execs node,
// so the spawned pid is the server's), with its own output kept as a tail plus every error line (the server logs at
// make run's level for the whole soak: keeping all of it would be tens of MB here), and what the kernel and /metrics
// say about its memory while it is loaded.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { projectRoot } from '../support/processes.ts';
import type { Traffic } from './traffic.ts';

const TAIL_CHARS = 64 * 1024;
const KEEP_ERROR_LINES = 100;
const MB = 1024 * 1024;

export class SoakServer {
  readonly child: ChildProcess;
  /** The last TAIL_CHARS of what it printed. */
  tail = '';
  /** The lines it printed at level error or fatal (pino's 50, 60), or that are not JSON (a crash, a stack). */
  readonly errorLines: string[] = [];
  /** Set once it exits: the code, or the signal that killed it. */
  exit: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
  private pending = '';
  private started = false;

  private constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn('bash', ['scripts/serve.sh'], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const take = (chunk: Buffer) => this.take(chunk.toString());
    this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    this.child.once('exit', (code, signal) => (this.exit = { code, signal, at: Date.now() }));
  }

  /** Starts it and waits until it says where its docs are (it answers then). */
  static async start(env: NodeJS.ProcessEnv): Promise<SoakServer> {
    const server = new SoakServer(env);
    const deadline = Date.now() + 120_000;
    while (!server.tail.includes('API docs:')) {
      if (Date.now() > deadline || server.exit) throw new Error(`the server did not start:\n${server.tail}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    server.started = true;
    return server;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.exit === undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends `signal` and waits for the exit (at most `timeoutMs`); the exit code, or null when killed by a signal. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<number | null | 'still running'> {
    if (!this.alive) return this.exit?.code ?? this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.kill(signal);
    const timeout = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), timeoutMs).unref());
    return Promise.race([exited, timeout]);
  }

  /** What it printed last, and its error lines, for a failure message. */
  report(): string {
    const exit = this.exit ? `exited with code ${this.exit.code}, signal ${this.exit.signal}` : 'still running';
    return `server (pid ${this.pid}) ${exit}\nerror lines (${this.errorLines.length}):\n${this.errorLines.join('\n')}\nlast output:\n${this.tail.slice(-6000)}`;
  }

  private take(text: string): void {
    this.tail = (this.tail + text).slice(-TAIL_CHARS);
    if (!this.started) return;
    this.pending += text;
    const lines = this.pending.split('\n');
    this.pending = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === '' || this.errorLines.length >= KEEP_ERROR_LINES) continue;
      let level = 60;
      try {
        level = (JSON.parse(line) as { level?: number | string }).level as number;
        if (typeof level === 'string') level = level === 'error' ? 50 : level === 'fatal' ? 60 : 30;
      } catch {
        // not a log line: a crash's message or a stack
      }
      if (level >= 50) this.errorLines.push(line.slice(0, 2000));
    }
  }
}

/** One process's memory as the kernel reports it (bytes), or undefined once it is gone. */
function statusOf(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kB = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { rss: kB('VmRSS'), hwm: kB('VmHWM') };
  } catch {
    return undefined;
  }
}

/** The server's child processes (the change stream's fan-out), from every thread's children list. */
function childrenOf(pid: number): number[] {
  try {
    const tasks = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
    return tasks.trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The gauges read off /metrics: prom-client's heap used, and the live-heap gauges when the server has them. */
type Gauges = { heapUsed?: number; live?: number; livePeak?: number; limit?: number; lagMax?: number };

function gaugesOf(text: string): Gauges {
  const value = (name: string) => {
    const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
    return match ? Number(match[1]) : undefined;
  };
  return { heapUsed: value('nodejs_heap_size_used_bytes'), live: value('notes_heap_live_bytes'), livePeak: value('notes_heap_live_peak_bytes'), limit: value('notes_heap_limit_bytes'), lagMax: value('nodejs_eventloop_lag_max_seconds') };
}

const max = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/**
 * Samples the server's resident memory every 250 ms (/proc/<pid>/status, VmRSS; its children's too) and scrapes
 * /metrics every 2 s, from start() to stop(); the peaks.
 */
export class MemoryWatch {
  peakRss = 0;
  peakChildrenRss = 0;
  /** VmHWM read at stop(): the kernel's own peak since resetPeak(). */
  hwm = 0;
  peakHeapUsed: number | undefined;
  peakLive: number | undefined;
  limit: number | undefined;
  /** The longest event loop delay a scrape saw (prom-client's nodejs_eventloop_lag_max_seconds, reset by each scrape). */
  peakLagSeconds: number | undefined;
  scrapes = 0;
  private timers: NodeJS.Timeout[] = [];
  private scraping: Promise<unknown> = Promise.resolve();

  private readonly server: SoakServer;
  private readonly traffic: Traffic;
  private readonly metricsToken: string;

  constructor(server: SoakServer, traffic: Traffic, metricsToken: string) {
    this.server = server;
    this.traffic = traffic;
    this.metricsToken = metricsToken;
  }

  /** Resets the kernel's peak (VmHWM) to the resident memory now (a write of 5 to clear_refs, Linux 4.0 on). */
  resetPeak(): void {
    try {
      writeFileSync(`/proc/${this.server.pid}/clear_refs`, '5');
    } catch {
      // not allowed here: VmHWM then counts the start too
    }
  }

  start(): void {
    this.sample();
    this.timers.push(setInterval(() => this.sample(), 250));
    this.scraping = this.scrape();
    this.timers.push(setInterval(() => (this.scraping = this.scrape()), 2000));
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.sample();
    await this.scraping;
    this.hwm = statusOf(this.server.pid)?.hwm ?? this.hwm;
  }

  /** "412 MB" or "n/a". */
  static mb(bytes: number | undefined): string {
    return bytes === undefined ? 'n/a' : `${Math.round(bytes / MB)} MB`;
  }

  private sample(): void {
    if (!this.server.alive) return;
    const own = statusOf(this.server.pid);
    if (!own) return;
    this.peakRss = Math.max(this.peakRss, own.rss);
    const children = childrenOf(this.server.pid).reduce((sum, pid) => sum + (statusOf(pid)?.rss ?? 0), 0);
    this.peakChildrenRss = Math.max(this.peakChildrenRss, children);
  }

  private async scrape(): Promise<void> {
    if (!this.server.alive) return;
    const answer = await this.traffic.send('metrics', 'GET', '/metrics', { token: this.metricsToken, timeoutMs: 30_000 });
    if (!answer) return;
    if (answer.status !== 200) {
      this.traffic.surprise('metrics', 'GET /metrics', answer);
      return;
    }
    this.scrapes += 1;
    const gauges = gaugesOf(answer.text);
    this.peakHeapUsed = max(this.peakHeapUsed, gauges.heapUsed);
    this.peakLive = max(this.peakLive, max(gauges.live, gauges.livePeak));
    this.limit = gauges.limit ?? this.limit;
    this.peakLagSeconds = max(this.peakLagSeconds, gauges.lagMax);
  }
}
