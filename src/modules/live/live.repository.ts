// The live editor's statements: a page's text and version as stored now (a document is built from it, and brought up
// to date with it when the change feed names its note), and the Yjs state a page's document is kept with
// (live_documents, migration 0026).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../access/caller.ts';
import { User } from '../users/user.entity.ts';

export type PageNow = { content: string; version: number; noteId: number };

export async function pageNow(em: EntityManager, pageId: number): Promise<PageNow | undefined> {
  const rows = await em.getConnection().execute<{ content: string; version_sequence: number; note_id: number }[]>(
    'select content, version_sequence, note_id from pages where id = ?',
    [pageId],
  );
  const row = rows[0];
  return row ? { content: row.content, version: row.version_sequence, noteId: row.note_id } : undefined;
}

/** The Yjs state a page's live document was last kept with, and the version (and its editor HTML) it stands on. */
export type KeptState = { version: number; content: string; state: Uint8Array };

export async function keptStateOf(em: EntityManager, pageId: number): Promise<KeptState | undefined> {
  const rows = await em.getConnection().execute<{ version: number; content: string; state: Buffer | Uint8Array }[]>(
    'select version, content, state from live_documents where page_id = ?',
    [pageId],
  );
  const row = rows[0];
  return row ? { version: row.version, content: row.content, state: new Uint8Array(row.state) } : undefined;
}

/** Keeps the document's state (one statement); a page deleted meanwhile keeps nothing. */
export async function keepState(em: EntityManager, pageId: number, kept: KeptState): Promise<void> {
  await em.getConnection().execute(
    `insert into live_documents (page_id, version, content, state, updated_at)
       select id, ?, ?, ?, now() from pages where id = ?
     on conflict (page_id) do update set version = excluded.version, content = excluded.content, state = excluded.state, updated_at = now()`,
    [kept.version, kept.content, Buffer.from(kept.state), pageId],
  );
}

export async function forgetState(em: EntityManager, pageId: number): Promise<void> {
  await em.getConnection().execute('delete from live_documents where page_id = ?', [pageId]);
}

/**
 * Callers for users whose live connections are on another process (their save is made here): the users as they are
 * now, writing as a browser session does. Their access was checked where they are connected, and is checked again
 * by the write itself.
 */
export async function callersOf(em: EntityManager, userIds: readonly number[]): Promise<Caller[]> {
  const users = await em.find(User, { id: { $in: [...userIds] } });
  return users.map((user) => ({ user, tokenId: 0, tokenScope: 'write', tokenConfirmed: true, clientId: null, clientWrites: 'direct' }));
}

/** The versions of pages as stored now, by id (a page not there is left out): one statement for any number. */
export async function pageVersions(em: EntityManager, pageIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await em.getConnection().execute<{ id: number; version_sequence: number }[]>(
    'select id, version_sequence from pages where id = any(?::int[])',
    [`{${pageIds.join(',')}}`],
  );
  return new Map(rows.map((row) => [Number(row.id), Number(row.version_sequence)]));
}
