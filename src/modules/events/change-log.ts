// The change log (migration 0015, docs/architecture.md "The change log"): one row per domain event, appended in the
// transaction of the change by recordEvent (events.ts). A row says what happened, who did it (and through which
// app), where (team, note) and to what (the subject's id, and in `payload` the thin data: ids, indexes, version
// numbers, the fields that changed; never content). Projections read it after commit (projections.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DomainEvent } from './domain-events.ts';
import { insertChange, type ChangeData } from './events.repository.ts';


/** The team a change belongs to (none for a team's creation or deletion: no one outside it could hear of it). */
export function teamOf(event: DomainEvent): number | undefined {
  if (event.type === 'team.created' || event.type === 'team.deleted') return undefined;
  return 'note' in event ? event.note.team.id : event.team.id;
}

/** The thin data of an event: what webhooks send and what the change log keeps. */
export function dataOf(event: DomainEvent): ChangeData {
  switch (event.type) {
    case 'note.created':
      return { note_id: event.note.id };
    case 'note.deleted':
      // what the change stream shows of a note that is gone, and whom it may show it to (event-access.ts)
      return { note_id: event.note.id, slug: event.note.slug ?? String(event.note.id), private: event.note.isPrivate };
    case 'note.updated':
      return { note_id: event.note.id, changed: event.changed };
    case 'page.created':
    case 'page.restored':
      return { note_id: event.note.id, page_id: event.page.id, version: event.version.index };
    case 'page.deleted':
      return { note_id: event.note.id, page_id: event.page.id };
    case 'page.updated':
      return { note_id: event.note.id, page_id: event.page.id, changed: event.changed, ...(event.version ? { version: event.version.index } : {}) };
    case 'comment.created':
    case 'comment.deleted': {
      const target = event.target;
      return {
        note_id: event.note.id,
        comment_id: event.comment.id,
        on: target.type,
        ...(target.type === 'page' ? { page_id: target.page.id } : {}),
        ...(target.type === 'issue' ? { issue_id: target.issue.id, issue_index: target.issue.index } : {}),
        ...(target.type === 'request' ? { request_id: target.request.id, request_index: target.request.index } : {}),
      };
    }
    case 'issue.created':
    case 'issue.deleted':
      return { note_id: event.note.id, issue_id: event.issue.id, issue_index: event.issue.index };
    case 'issue.updated':
      return { note_id: event.note.id, issue_id: event.issue.id, issue_index: event.issue.index, changed: event.changed };
    case 'attachment.created':
    case 'attachment.deleted':
      return { note_id: event.note.id, attachment_id: event.attachment.id };
    case 'team.created':
    case 'team.renamed':
    case 'team.deleted':
      return { changed: ['name'] };
    case 'member.added':
    case 'member.changed':
      return { user_id: event.user.id, role: event.role };
    case 'member.removed':
      return { user_id: event.user.id };
    case 'fork.created':
    case 'fork.pulled':
      return { note_id: event.note.id, original_note_id: event.original.id };
    case 'request.created':
    case 'request.opened':
    case 'request.closed':
    case 'request.merged':
      return { note_id: event.note.id, request_id: event.request.id, request_index: event.request.index, from_note_id: event.request.fromNote?.id ?? null };
  }
}

/** Where the subject's id is in an event's data, by the event's kind (a team's own events: the team). */
const SUBJECT_KEY: Record<string, string> = {
  note: 'note_id', fork: 'note_id', page: 'page_id', comment: 'comment_id', issue: 'issue_id',
  attachment: 'attachment_id', member: 'user_id', request: 'request_id',
};

/** The id of what the change is about (the page, issue, comment, attachment, request, member; the note or team itself). */
function subjectOf(event: DomainEvent, data: ChangeData): number {
  const key = SUBJECT_KEY[event.type.slice(0, event.type.indexOf('.'))];
  return key === undefined ? (event as Extract<DomainEvent, { team: unknown }>).team.id : (data[key] as number);
}

/** Appends the event to the change log, in the caller's transaction (one statement). */
export async function appendChange(em: EntityManager, event: DomainEvent): Promise<void> {
  const data = dataOf(event);
  await insertChange(em, {
    type: event.type,
    actorId: event.actor.id,
    clientId: event.actor.clientId ?? null,
    teamId: 'note' in event ? event.note.team.id : event.team.id,
    noteId: 'note' in event ? event.note.id : null,
    subjectId: subjectOf(event, data),
    payload: { ...data, actor: { id: event.actor.id, username: event.actor.username } },
  });
}
