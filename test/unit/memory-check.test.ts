// The start's memory check as a table: a ceiling under HEAP_LIMIT_MB, a machine too small for the heap and what lives
// outside it (more with the embedded database), and the settings that fit.
import { describe, expect, it } from 'vitest';
import { memoryProblem, OUTSIDE_HEAP_MB, type MemoryFacts } from '../../src/http/memory-check.ts';

const MiB = 1024 * 1024;
const facts = (over: Partial<MemoryFacts>): MemoryFacts => ({ heapLimitMb: 512, embedded: false, heapCeilingBytes: 530 * MiB, machineBytes: 24 * 1024 * MiB, ...over });

describe('memoryProblem', () => {
  it.each([
    ['the default on a large machine', facts({}), undefined],
    ['a ceiling set larger than the setting', facts({ heapCeilingBytes: 1100 * MiB }), undefined],
    ['a ceiling under the setting', facts({ heapCeilingBytes: 150 * MiB }), /heap's ceiling is 150 MiB, under HEAP_LIMIT_MB=512/],
    ['just enough memory with PostgreSQL', facts({ machineBytes: (512 + OUTSIDE_HEAP_MB.postgres) * MiB }), undefined],
    ['too little memory with PostgreSQL', facts({ machineBytes: 700 * MiB }), /needs about 704 MiB .* this machine has 700 MiB/],
    ['the same machine with the embedded database', facts({ machineBytes: 800 * MiB, embedded: true }), /needs about 1024 MiB .*embedded database.* 800 MiB/],
  ])('%s', (_name, given, expected) => {
    const problem = memoryProblem(given);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });
});
