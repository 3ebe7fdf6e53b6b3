// The per-note sequence numbers used in paths (`index` of issues, and of requests), from the `note_counters` table
// (migration 0004). Called inside the transaction that creates the object: the counter row stays locked until it
// commits, so concurrent creations in one note queue here and get consecutive numbers, and a rolled-back creation
// gives its number back. A number is never handed out twice, also after the object that had it is deleted.
import type { EntityManager } from '@mikro-orm/postgresql';

export type CounterKind = 'issue' | 'request';

export async function nextNoteIndex(em: EntityManager, noteId: number, kind: CounterKind): Promise<number> {
  const rows = await em.execute<{ last_index: number }[]>(
    `insert into note_counters (note_id, kind, last_index) values (?, ?, 1)
       on conflict (note_id, kind) do update set last_index = note_counters.last_index + 1
     returning last_index`,
    [noteId, kind],
  );
  return Number(rows[0]!.last_index);
}
