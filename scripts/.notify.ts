import { PGlite } from '@electric-sql/pglite';
const db = await PGlite.create();
await db.exec('create table t (id int)');
await db.exec(`create function f() returns trigger language plpgsql as $$ begin perform pg_notify('revisions', 'n1'); return null; end $$; create trigger tr after insert on t for each statement execute function f();`);
await db.exec('listen revisions');
const orig = db.execProtocolRawStream.bind(db);
(db as any).execProtocolRawStream = async (msg: Uint8Array, opts: any) => orig(msg, { ...opts, onRawData: (d: Uint8Array) => { for (let i = 0; i < d.length; i++) if (d[i] === 0x41) void 0; opts.onRawData(d); } });
db.onNotification((ch, payload) => console.log('js notification', ch, payload));
// simple query via raw protocol
const text = Buffer.from("insert into t values (1)\0");
const m = Buffer.alloc(5 + text.length); m[0] = 0x51; m.writeInt32BE(4 + text.length, 1); text.copy(m, 5);
let out = Buffer.alloc(0);
await (db as any).execProtocolRawStream(m, { onRawData: (d: Uint8Array) => { out = Buffer.concat([out, Buffer.from(d)]); } });
console.log('raw out', out.toString('latin1').replace(/[^\x20-\x7e]/g, '.'));
console.log('--- now db.query'); await db.query('insert into t values (2)'); await new Promise(r => setTimeout(r, 50)); console.log('--- done');
await db.close();
