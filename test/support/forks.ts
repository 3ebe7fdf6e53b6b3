// Helpers for the fork and request tests: big page trees written straight into the database (a thousand POSTs would
// test nothing more), and a fork made through the API.
import type { Note } from '../../src/modules/notes/note.entity.ts';
import type { TestApp } from './app.ts';
import { notePath, type Actor } from './factories.ts';

/**
 * `count` pages in `note`, each with one version written by `authorId`: page i (from 0) is under page i - 1 when
 * i % 10 is not 0 (chains of ten), at the top level otherwise. Three statements whatever the count.
 */
export async function bulkPages(app: TestApp, note: Note, authorId: number, count: number): Promise<void> {
  const em = app.em();
  await em.execute(
    `insert into pages (note_id, parent_id, position, title, content, lock_version, version_sequence, created_at, updated_at)
     select ?, null, i, 'Page ' || i, '<p>Content of page ' || i || '</p>', 1, 1, now(), now() from generate_series(0, ? - 1) i`,
    [note.id, count],
  );
  await em.execute(
    `update pages child set parent_id = parent.id from pages parent
      where child.note_id = ? and parent.note_id = ? and child.position % 10 <> 0 and parent.position = child.position - 1`,
    [note.id, note.id],
  );
  await em.execute(
    `insert into page_versions (page_id, note_id, index, title, content, diff, user_id, created_at)
     select id, note_id, 1, title, content, '<div class="diff"></div>', ?, now() from pages where note_id = ?`,
    [authorId, note.id],
  );
}

/** Forks `note` with `actor`'s client (into their default team unless `team`), answering the fork as the API does. */
export async function forkNote(app: TestApp, note: Note, actor: Actor, body: { title?: string; team?: string } = {}) {
  const path = `${await notePath(app, note)}/forks`;
  const answer = await actor.client.post(path, { json: body });
  if (answer.status !== 200) throw new Error(`forkNote: POST ${path} answered ${answer.status}: ${answer.text}`);
  return answer.body as { id: number; team: { name: string }; title: string };
}
