import pg from 'pg';
const pool = new pg.Pool({ connectionString: 'postgresql://postgres@127.0.0.1:55432/postgres', max: 1 });
const big = 'x'.repeat(15000);
for (const [label, text] of [['small', 'select 1'], ['15KB literal', `select '${big}' as a`], ['15KB literal, length only', `select length('${big}') as a`]] as const) {
  for (let i = 0; i < 200; i++) await pool.query(text);
  const c0 = process.cpuUsage(); const t0 = performance.now(); const N = 2000;
  for (let i = 0; i < N; i++) await pool.query(text);
  const c = process.cpuUsage(c0);
  console.log(label, 'wall', ((performance.now() - t0) / N).toFixed(3), 'cpu', ((c.user + c.system) / 1000 / N).toFixed(3));
}
await pool.end();
