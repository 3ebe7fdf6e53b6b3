// The check the server makes at start that it has the memory it is sized for: a heap ceiling at least HEAP_LIMIT_MB
// (scripts/serve.sh gives Node that ceiling; a process started another way with a smaller one would meet it in
// ordinary use), and a machine (or the container's memory limit) with room for that heap and what lives outside it:
// the Node binary, buffers and sockets, and on the embedded database PGlite's WebAssembly memory
// (docs/operating.md, Memory, has the figures these reserves come from).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';

const MiB = 1024 * 1024;
/** Resident memory outside the JavaScript heap, in MiB, by database (measured peaks, rounded up). */
export const OUTSIDE_HEAP_MB = { postgres: 192, embedded: 512 } as const;

/** The memory this process may use: the machine's, or less where a cgroup (a container) limits it. */
export function machineBytes(): number {
  let limit = os.totalmem();
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const raw = readFileSync(file, 'utf8').trim();
      if (/^\d+$/.test(raw)) limit = Math.min(limit, Number(raw));
    } catch {
      // no such cgroup file: not limited there
    }
  }
  return limit;
}

export type MemoryFacts = { heapLimitMb: number; embedded: boolean; heapCeilingBytes: number; machineBytes: number };

export function memoryFacts(heapLimitMb: number, embedded: boolean): MemoryFacts {
  return { heapLimitMb, embedded, heapCeilingBytes: v8.getHeapStatistics().heap_size_limit, machineBytes: machineBytes() };
}

/** Why the server cannot run as configured, or undefined when it can. */
export function memoryProblem(facts: MemoryFacts): string | undefined {
  const ceilingMb = Math.floor(facts.heapCeilingBytes / MiB);
  // V8's limit counts the young generation too, a few MiB over --max-old-space-size; a ceiling under the setting
  // by more than that was set some other way
  if (ceilingMb < facts.heapLimitMb) {
    return `the heap's ceiling is ${ceilingMb} MiB, under HEAP_LIMIT_MB=${facts.heapLimitMb}: start the server with scripts/serve.sh (make run), ` +
      `or give node --max-old-space-size=${facts.heapLimitMb}`;
  }
  const neededMb = facts.heapLimitMb + OUTSIDE_HEAP_MB[facts.embedded ? 'embedded' : 'postgres'];
  const haveMb = Math.floor(facts.machineBytes / MiB);
  if (haveMb < neededMb) {
    return `HEAP_LIMIT_MB=${facts.heapLimitMb} needs about ${neededMb} MiB of memory ` +
      `(the heap and ${OUTSIDE_HEAP_MB[facts.embedded ? 'embedded' : 'postgres']} MiB outside it${facts.embedded ? ' with the embedded database' : ''}), ` +
      `and this machine has ${haveMb} MiB: give it more memory, or lower HEAP_LIMIT_MB (keep it at least twice the live heap, docs/operating.md)`;
  }
  return undefined;
}
