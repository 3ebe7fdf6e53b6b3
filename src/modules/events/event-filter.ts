// What a caller of the change stream asked for (GET /api/v1/events: ?team, ?note, ?types), and who listens: the
// stream's loop (event-hub.ts) and the JSON form (events.handlers.ts) narrow the change log by the same filter.
import type { ChangeRow } from './events.repository.ts';
import type { EventType } from './event-presenter.ts';

/** What a stream (or a JSON page) asked for. */
export type EventFilter = { teamId: number | null; noteId: number | null; types: ReadonlySet<EventType> | null };

export type Listener = { userId: number; tokenId: number; filter: EventFilter };

/** The stored types a filter's types are read from (`page.moved` is stored as a `page.updated`). */
export function storedTypes(types: ReadonlySet<EventType> | null): string[] | null {
  if (types === null) return null;
  const stored = new Set<string>(types);
  if (types.has('page.moved')) stored.add('page.updated');
  return [...stored];
}

export function matches(filter: EventFilter, change: ChangeRow, type: EventType): boolean {
  return (filter.teamId === null || change.team_id === filter.teamId)
    && (filter.noteId === null || change.note_id === filter.noteId)
    && (filter.types === null || filter.types.has(type));
}

