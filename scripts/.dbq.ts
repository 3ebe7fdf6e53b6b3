import { openDatabase } from '../src/db/database.ts';
import { preparedQuery } from '../src/db/rows.ts';
const db = await openDatabase({ databaseUrl: process.argv[2] });
const em = db.orm.em.fork();
const text = `select k.token_alive, t.id from (select exists (select 1 from tokens where id = $2) as token_alive) k left join teams t on lower(t.name) = lower($1)`;
let done = 0;
const start = performance.now();
const until = start + 3000;
await Promise.all(Array.from({ length: 50 }, async () => {
  while (performance.now() < until) { await preparedQuery(em, 'x', text, ['bench', 1]); done++; }
}));
console.log('qps', Math.round(done / ((performance.now() - start) / 1000)));
const pool = await (em.getConnection() as any).getNativeClient();
let d2 = 0; const s2 = performance.now(); const u2 = s2 + 3000;
await Promise.all(Array.from({ length: 50 }, async () => { while (performance.now() < u2) { await pool.query({ name: 'y', text, values: ['bench', 1] }); d2++; } }));
console.log('raw pool qps', Math.round(d2 / ((performance.now() - s2) / 1000)), 'pool size', pool.options.max, pool.totalCount);
await db.close();
