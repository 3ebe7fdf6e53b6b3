import { readFileSync } from 'node:fs';
const file = process.argv[2]!;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const self = new Map<string, number>();
const byId = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]));
const counts = new Map<number, number>();
for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
let total = 0;
for (const [id, c] of counts) {
  const n = byId.get(id);
  const url = (n.callFrame.url || '').replace(/.*node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '');
  const key = `${n.callFrame.functionName || '(anon)'} ${url.split('/').slice(0, 3).join('/')}`;
  self.set(key, (self.get(key) ?? 0) + c);
  total += c;
}
const pkg = new Map<string, number>();
for (const [k, v] of self) { const p = k.split(' ')[1]?.split('/')[0] || '(native)'; pkg.set(p, (pkg.get(p) ?? 0) + v); }
console.log('by package:'); for (const [k, v] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log((100 * v / total).toFixed(1).padStart(5), k);
console.log('top self:'); for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((100 * v / total).toFixed(1).padStart(5), k);
