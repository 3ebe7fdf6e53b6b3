// The floor of the page write in scripts/bench-http.ts: the least a page write can cost on the same kind of
// database. A plain express server (the project's express, default settings) that parses the write's form body as
// the service does (express.urlencoded with the API's options) and, per request, runs one transaction: lock the
// page's row (select ... for update), insert the version with its content, update the page (title, content, version
// counter), commit. It then answers with the bytes the service answered for a write (same status and content-type).
// No authentication, validation, diff, revisions, events or ORM: what is left is the write itself.
//
// It runs as a child process (its own event loop, like the service) and is driven over IPC:
//   - { type: 'setup', database, pages }: creates its tables (pages, page_versions: the columns of
//     src/db/migrations/0001-initial-schema.sql a write touches, with their types), seeds the pages with the given
//     ids, titles and contents, starts listening and replies { type: 'ready', port } (or { type: 'error', message }).
//     On PostgreSQL, a scratch database (bench_write_floor) on the given server, through a pg Pool of
//     POOL_CONNECTIONS (the service's pool has 10); on PGlite, an embedded database of its own in the given directory
//     (PGlite is one session: its transactions queue, as in the service).
//   - { type: 'answer', response }: the bytes to answer every write with; replies { type: 'answered' }.
// `PUT /api/v1/:team/:note/:page` writes the page `:page` (an id given at setup). Exits when its parent goes away.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { PGlite } from '@electric-sql/pglite';
import express from 'express';
import pg from 'pg';
import type { CannedResponse } from './bench-baseline.ts';

export type FloorPage = { id: number; title: string; content: string };
export type FloorDatabase = { kind: 'postgres'; url: string } | { kind: 'pglite'; directory: string };
export type FloorRequest = { type: 'setup'; database: FloorDatabase; pages: FloorPage[] } | { type: 'answer'; response: CannedResponse };
export type FloorReply = { type: 'ready'; port: number } | { type: 'answered' } | { type: 'error'; message: string };

const POOL_CONNECTIONS = 10;
const SCRATCH_DATABASE = 'bench_write_floor';

const SCHEMA = [
  `create table pages (
    id serial primary key,
    title varchar(255) not null,
    content text not null default '',
    version_sequence int not null default 0
  )`,
  `create table page_versions (
    id serial primary key,
    page_id int not null references pages (id) on delete cascade,
    index int not null,
    title varchar(255) not null,
    content text not null
  )`,
  'create unique index page_versions_page_index_unique on page_versions (page_id, index)',
];
const LOCK = 'select title, version_sequence from pages where id = $1 for update';
const INSERT_VERSION = 'insert into page_versions (page_id, index, title, content) values ($1, $2, $3, $4)';
const UPDATE_PAGE = 'update pages set title = $2, content = $3, version_sequence = $4 where id = $1';

type Locked = { title: string; version_sequence: number };
/** One page write, in one transaction; false when the page does not exist. */
type Write = (pageId: number, title: string | undefined, content: string) => Promise<boolean>;
type Store = { write: Write; close(): Promise<void> };

const send = (message: FloorReply) => process.send?.(message);

async function openPostgres(url: string, pages: FloorPage[]): Promise<Store> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${SCRATCH_DATABASE}`);
    await admin.query(`create database ${SCRATCH_DATABASE}`);
  } finally {
    await admin.end();
  }
  const scratch = new URL(url);
  scratch.pathname = `/${SCRATCH_DATABASE}`;
  const pool = new pg.Pool({ connectionString: scratch.toString(), max: POOL_CONNECTIONS });
  for (const statement of SCHEMA) await pool.query(statement);
  for (const page of pages) await pool.query('insert into pages (id, title, content) values ($1, $2, $3)', [page.id, page.title, page.content]);
  await pool.query(`select setval('pages_id_seq', (select max(id) from pages))`);
  await pool.query('analyze');
  // every connection of the pool opened (and its statements prepared on first use), as the service's are by the warm-up
  const clients = await Promise.all(Array.from({ length: POOL_CONNECTIONS }, () => pool.connect()));
  for (const client of clients) client.release();
  return {
    async write(pageId, title, content) {
      const client = await pool.connect();
      let failed = false;
      try {
        await client.query('begin');
        try {
          const locked = await client.query<Locked>({ name: 'floor-lock', text: LOCK, values: [pageId] });
          const row = locked.rows[0];
          if (!row) {
            await client.query('rollback');
            return false;
          }
          const index = row.version_sequence + 1;
          const newTitle = title ?? row.title;
          await client.query({ name: 'floor-version', text: INSERT_VERSION, values: [pageId, index, newTitle, content] });
          await client.query({ name: 'floor-page', text: UPDATE_PAGE, values: [pageId, newTitle, content, index] });
          await client.query('commit');
          return true;
        } catch (error) {
          await client.query('rollback').catch(() => undefined);
          throw error;
        }
      } catch (error) {
        failed = true;
        throw error;
      } finally {
        client.release(failed);
      }
    },
    close: () => pool.end(),
  };
}

async function openPglite(directory: string, pages: FloorPage[]): Promise<Store> {
  // PGlite's own start parameters and the service's (src/db/database.ts): a 32 MB buffer cache
  const defaults = (PGlite as unknown as { defaultStartParams?: string[] }).defaultStartParams ?? [];
  const db = await PGlite.create(directory, { startParams: [...defaults, '-c', 'shared_buffers=32MB', '-c', 'maintenance_work_mem=16MB'] });
  for (const statement of SCHEMA) await db.query(statement);
  for (const page of pages) await db.query('insert into pages (id, title, content) values ($1, $2, $3)', [page.id, page.title, page.content]);
  await db.query(`select setval('pages_id_seq', (select max(id) from pages))`);
  await db.query('analyze');
  return {
    // one session: PGlite runs one transaction at a time, the others wait for it
    write: (pageId, title, content) =>
      db.transaction(async (tx) => {
        const row = (await tx.query<Locked>(LOCK, [pageId])).rows[0];
        if (!row) {
          await tx.rollback();
          return false;
        }
        const index = row.version_sequence + 1;
        const newTitle = title ?? row.title;
        await tx.query(INSERT_VERSION, [pageId, index, newTitle, content]);
        await tx.query(UPDATE_PAGE, [pageId, newTitle, content, index]);
        return true;
      }),
    close: () => db.close(),
  };
}

let store: Store | undefined;
let server: Server | undefined;
let current = { status: 503, contentType: 'text/plain; charset=utf-8', body: Buffer.from('no response set yet\n') };

const app = express();
// the service's form parser for the API (src/app.ts: extended, its default 2 MiB body limit, 2000 fields, depth 5)
app.use(express.urlencoded({ extended: true, limit: 2 * 1024 * 1024, parameterLimit: 2000, depth: 5 } as Parameters<typeof express.urlencoded>[0]));
app.put('/api/v1/:team/:note/:page', async (request, response) => {
  const page = (request.body as { page?: { title?: unknown; content?: unknown } } | undefined)?.page;
  const pageId = Number(request.params.page);
  if (!store || !Number.isSafeInteger(pageId) || typeof page?.content !== 'string' || (page.title !== undefined && typeof page.title !== 'string')) {
    response.status(400).type('text/plain').send('expected PUT /api/v1/:team/:note/:page with page[content] (and page[title])\n');
    return;
  }
  try {
    if (!(await store.write(pageId, page.title as string | undefined, page.content))) {
      response.status(404).type('text/plain').send(`no page ${pageId}\n`);
      return;
    }
  } catch (error) {
    response.status(500).type('text/plain').send(`${error instanceof Error ? error.message : String(error)}\n`);
    return;
  }
  response.status(current.status).set('Content-Type', current.contentType).send(current.body);
});

process.on('message', (message: FloorRequest) => {
  if (message.type === 'answer') {
    current = { status: message.response.status, contentType: message.response.contentType, body: Buffer.from(message.response.bodyBase64, 'base64') };
    send({ type: 'answered' });
    return;
  }
  const { database, pages } = message;
  (database.kind === 'postgres' ? openPostgres(database.url, pages) : openPglite(database.directory, pages)).then(
    (opened) => {
      store = opened;
      server = app.listen(0, '127.0.0.1', () => send({ type: 'ready', port: (server!.address() as AddressInfo).port }));
    },
    (error: unknown) => send({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) }),
  );
});

async function shutdown(): Promise<never> {
  server?.close();
  server?.closeAllConnections();
  await store?.close().catch(() => undefined);
  process.exit(0);
}
process.on('disconnect', () => void shutdown());
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
