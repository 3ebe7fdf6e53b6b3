import { readFileSync } from 'node:fs';
const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8'));
const target = process.argv[3]!;
const byId = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const counts = new Map<number, number>();
for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
const stacks = new Map<string, number>();
for (const [id, c] of counts) {
  if (byId.get(id).callFrame.functionName !== target) continue;
  const frames: string[] = []; let at = parent.get(id);
  while (at !== undefined && frames.length < 14) { const n = byId.get(at); frames.push(`${n.callFrame.functionName}@${(n.callFrame.url||'').split('/').slice(-2).join('/')}`); at = parent.get(at); }
  const key = frames.join(' < ');
  stacks.set(key, (stacks.get(key) ?? 0) + c);
}
for (const [k, v] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(v, k);
