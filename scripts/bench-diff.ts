// Benchmark of renderDiff (src/modules/pages/diff.ts): the median of 5 runs per input pair, as a ratio
// against a baseline measured in the same run (renderDiff of two identical 1 MiB texts), one line per case.
// Run: node scripts/bench-diff.ts
import { renderDiff } from '../src/modules/pages/diff.ts';

/** Deterministic pseudo-random lines (LCG), ~52 characters each. */
function randomLines(seed: number, count: number): string[] {
  let state = seed >>> 0;
  const next = (): string => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state.toString(36).padStart(7, '0');
  };
  return Array.from({ length: count }, (_, i) => `s${seed} line ${i} ${next()} ${next()} ${next()} ${next()} ${next()}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function measure(before: string, after: string): { ms: number; bounded: boolean } {
  let bounded = renderDiff(before, after).bounded; // warm-up
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const start = performance.now();
    bounded = renderDiff(before, after).bounded;
    times.push(performance.now() - start);
  }
  return { ms: median(times), bounded };
}

const mib = randomLines(1, 20_000); // 1.04 MiB
const mibText = mib.join('\n');
const kib = randomLines(3, 2_000); // 100 KiB

const shuffled = [...mib];
for (let i = shuffled.length - 1; i > 0; i--) {
  const j = (i * 7919) % (i + 1);
  [shuffled[i], shuffled[j]] = [shuffled[j] ?? '', shuffled[i] ?? ''];
}

const cases: Array<[string, string, string]> = [
  ['1 MiB unrelated (20,000 distinct lines each)', mibText, randomLines(2, 20_000).join('\n')],
  ['1 MiB nearly identical (4 lines edited)', mibText, mib.map((l, i) => (i % 5_000 === 7 ? l.replace(' line ', ' LINE ') : l)).join('\n')],
  ['100 KiB half changed (every other line edited)', kib.join('\n'), kib.map((l, i) => (i % 2 ? l.replace(' line ', ' LINE ') : l)).join('\n')],
  ['1 MiB same lines reordered (edit-length bound)', mibText, shuffled.join('\n')],
];

const baseline = measure(mibText, mib.join('\n'));
const label = (name: string): string => name.padEnd(50);
console.log(`${label('baseline: identical 1 MiB')} ${baseline.ms.toFixed(1).padStart(7)} ms  ratio 1.0`);
for (const [name, before, after] of cases) {
  const { ms, bounded } = measure(before, after);
  console.log(`${label(name)} ${ms.toFixed(1).padStart(7)} ms  ratio ${(ms / baseline.ms).toFixed(1)}  bounded ${bounded}`);
}
