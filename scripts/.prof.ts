import { readFileSync } from 'node:fs';
const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8'));
const byId = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n: any) => `${n.callFrame.functionName || '(anon)'} ${(n.callFrame.url || '').replace(/.*node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '')}:${n.callFrame.lineNumber}`;
const self = new Map<string, number>(); const incl = new Map<string, number>(); let total = 0;
let t = profile.startTime; const skip = Number(process.argv[4] ?? 0) * 1e6;
profile.samples.forEach((id: number, i: number) => {
  t += profile.timeDeltas[i];
  if (t - profile.startTime < skip) return;
  const n0 = byId.get(id); if (n0.callFrame.functionName === '(idle)') return;
  total++;
  self.set(name(n0), (self.get(name(n0)) ?? 0) + 1);
  const seen = new Set<string>(); let at: number | undefined = id;
  while (at !== undefined) { const k = name(byId.get(at)); if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + 1); } at = parent.get(at); }
});
console.log('busy samples', total);
console.log('self:'); for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((100 * v / total).toFixed(1).padStart(5), k);
const want = new RegExp(process.argv[3] ?? 'src/');
console.log('inclusive:'); for (const [k, v] of [...incl].filter(([k]) => want.test(k)).sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log((100 * v / total).toFixed(1).padStart(5), k);
