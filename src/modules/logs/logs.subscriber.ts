// The activity log: one row per change a user makes, written from the domain events in the same transaction as the
// change. `summary` keeps what describes the object (its title), so an entry stays readable after the object is gone.
import type { EntityManager } from '@mikro-orm/postgresql';
import { subscribe, type DomainEvent } from '../events/events.ts';
import { Log, type LogType } from './log.entity.ts';

type Entry = {
  type: LogType;
  action: string;
  teamId: number | null;
  noteId?: number | null;
  pageId?: number | null;
  issueId?: number | null;
  commentId?: number | null;
  requestId?: number | null;
  summary: Record<string, unknown>;
};

function entryFor(event: DomainEvent): Entry {
  const [, action] = event.type.split('.') as [string, string];
  switch (event.type) {
    case 'note.created':
    case 'note.updated':
      return { type: 'note', action, teamId: event.note.team.id, noteId: event.note.id, summary: { title: event.note.title } };
    case 'note.deleted':
      // the note's row goes, and with it every entry that points at it: this one keeps the team and the title
      return { type: 'note', action, teamId: event.note.team.id, noteId: null, summary: { note_id: event.note.id, title: event.note.title } };
    case 'page.created':
    case 'page.updated':
    case 'page.restored':
    case 'page.deleted':
      return {
        type: 'page',
        action,
        teamId: event.note.team.id,
        noteId: event.note.id,
        pageId: event.type === 'page.deleted' ? null : event.page.id,
        summary: { page_id: event.page.id, title: event.page.title, ...(event.type === 'page.updated' ? { changed: event.changed } : {}) },
      };
    case 'comment.created':
    case 'comment.deleted':
      return {
        type: 'comment',
        action,
        teamId: event.note.team.id,
        noteId: event.note.id,
        commentId: event.type === 'comment.deleted' ? null : event.comment.id,
        summary: { comment_id: event.comment.id, on: event.comment.type },
      };
    case 'issue.created':
    case 'issue.updated':
    case 'issue.deleted':
      // the issue's row may go: the entry keeps its id, index and title (and what an update changed)
      return {
        type: 'issue',
        action,
        teamId: event.note.team.id,
        noteId: event.note.id,
        issueId: event.type === 'issue.deleted' ? null : event.issue.id,
        summary: {
          issue_id: event.issue.id,
          index: event.issue.index,
          title: event.issue.title,
          ...(event.type === 'issue.updated' ? { changed: event.changed } : {}),
        },
      };
    case 'team.created':
    case 'team.renamed':
      return { type: 'team', action, teamId: event.team.id, summary: { name: event.team.name, ...(event.type === 'team.renamed' ? { from: event.from } : {}) } };
    case 'team.deleted':
      return { type: 'team', action, teamId: null, summary: { team_id: event.team.id, name: event.team.name } };
    case 'membership.added':
    case 'membership.changed':
      return { type: 'team', action: `member_${action}`, teamId: event.team.id, summary: { user_id: event.user.id, username: event.user.username, role: event.role } };
    case 'membership.removed':
      return { type: 'team', action: 'member_removed', teamId: event.team.id, summary: { user_id: event.user.id, username: event.user.username } };
    case 'fork.created':
    case 'fork.pulled':
      return forkEntry(event, action);
    case 'request.created':
    case 'request.opened':
    case 'request.closed':
    case 'request.merged':
      return requestEntry(event, action);
  }
}

/** A fork made (`forked`) or brought up to date (`pulled`): on the fork, naming the original. */
function forkEntry(event: Extract<DomainEvent, { type: 'fork.created' | 'fork.pulled' }>, action: string): Entry {
  return {
    type: 'note',
    action: action === 'created' ? 'forked' : 'pulled',
    teamId: event.note.team.id,
    noteId: event.note.id,
    summary: { title: event.note.title, original_id: event.original.id, ...(event.type === 'fork.pulled' ? { pages: event.pages } : {}) },
  };
}

/** A request's creation or change of state: on the note it is to (the original). */
function requestEntry(event: Extract<DomainEvent, { type: `request.${string}` }>, action: string): Entry {
  return {
    type: 'request',
    action,
    teamId: event.note.team.id,
    noteId: event.note.id,
    requestId: event.request.id,
    summary: { request_id: event.request.id, index: event.request.index, from_note_id: event.request.fromNote.id },
  };
}

async function writeLog(em: EntityManager, event: DomainEvent): Promise<void> {
  const entry = entryFor(event);
  em.create(Log, {
    user: event.actor.id,
    action: entry.action,
    type: entry.type,
    team: entry.teamId,
    note: entry.noteId ?? null,
    page: entry.pageId ?? null,
    issue: entry.issueId ?? null,
    comment: entry.commentId ?? null,
    request: entry.requestId ?? null,
    attachment: null,
    summary: entry.summary,
  });
}

export function subscribeActivityLog(): void {
  subscribe('activity-log', writeLog);
}
