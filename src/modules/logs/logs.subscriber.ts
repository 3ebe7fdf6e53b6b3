// The activity log: one row per change a user makes, written from the domain events in the same transaction as the
// change. `summary` keeps what describes the object (its title, and for a note whether it was private), so an entry
// stays readable, by those who could read the object, after the object is gone.
import { requestLabel } from '../requests/request.presenter.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import type { CommentedObject } from '../comments/comment.entity.ts';
import type { Note } from '../notes/note.entity.ts';
import { subscribe } from '../events/events.ts';
import type { DomainEvent } from '../events/domain-events.ts';
import { Log, type LogType } from './log.entity.ts';
import { keepEntriesOfDeletedNote } from './logs.repository.ts';

/** What was done, as the Log schema's `action` enum names it. */
export type LogAction = 'create' | 'update' | 'delete' | 'restore' | 'move' | 'fork' | 'pull' | 'open' | 'close' | 'merge' | 'add_user' | 'update_user' | 'remove_user';

type Entry = {
  type: LogType;
  action: LogAction;
  teamId: number | null;
  noteId?: number | null;
  pageId?: number | null;
  issueId?: number | null;
  commentId?: number | null;
  attachmentId?: number | null;
  requestId?: number | null;
  summary: Record<string, unknown>;
};

/** The commented object's title and page, kept with a comment's entry. */
function commentedSummary(note: Note, target: CommentedObject): Record<string, unknown> {
  switch (target.type) {
    case 'note':
      return { on: 'note', title: note.title };
    case 'page':
      return { on: 'page', page_id: target.page.id, title: target.page.title };
    case 'issue':
      return { on: 'issue', issue_id: target.issue.id, index: target.issue.index, title: target.issue.title };    case 'request':
      return { on: 'request', request_id: target.request.id, index: target.request.index, title: requestLabel(target.request.index) };
  }
}

/** A page change that only moved it (and maybe made it the cover) is a `move`. */
function pageUpdateAction(changed: readonly string[]): LogAction {
  return changed.includes('parent') && !changed.some((field) => field === 'title' || field === 'content') ? 'move' : 'update';
}

function entryFor(event: DomainEvent): Entry {
  switch (event.type) {
    case 'note.created':
    case 'note.updated':
      return { type: 'note', action: event.type === 'note.created' ? 'create' : 'update', teamId: event.note.team.id, noteId: event.note.id, summary: { title: event.note.title } };
    case 'note.deleted':
      // the note's row goes; this entry, like the earlier ones about it (see writeLog), keeps the team, the title
      // and whether the note was private (who may still read the entry)
      return { type: 'note', action: 'delete', teamId: event.note.team.id, noteId: null, summary: { note_id: event.note.id, title: event.note.title, is_private: event.note.isPrivate } };
    case 'page.created':
    case 'page.updated':
    case 'page.restored':
    case 'page.deleted': {
      const action = event.type === 'page.created' ? 'create' : event.type === 'page.updated' ? pageUpdateAction(event.changed) : event.type === 'page.restored' ? 'restore' : 'delete';
      return {
        type: 'page',
        action,
        teamId: event.note.team.id,
        noteId: event.note.id,
        pageId: event.type === 'page.deleted' ? null : event.page.id,
        summary: { page_id: event.page.id, title: event.page.title, ...(event.type === 'page.updated' ? { changed: event.changed } : {}) },
      };
    }
    case 'comment.created':
    case 'comment.deleted':
      return {
        type: 'comment',
        action: event.type === 'comment.created' ? 'create' : 'delete',
        teamId: event.note.team.id,
        noteId: event.note.id,
        issueId: event.target.type === 'issue' ? event.target.issue.id : null,
        requestId: event.target.type === 'request' ? event.target.request.id : null,
        commentId: event.type === 'comment.deleted' ? null : event.comment.id,
        summary: { comment_id: event.comment.id, ...commentedSummary(event.note, event.target) },
      };
    case 'issue.created':
    case 'issue.updated':
    case 'issue.deleted':
      // the issue's row may go: the entry keeps its id, index and title (and what an update changed)
      return {
        type: 'issue',
        action: event.type === 'issue.created' ? 'create' : event.type === 'issue.updated' ? 'update' : 'delete',
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
    case 'attachment.created':
    case 'attachment.deleted':
      // the attachment's row may go: the entry keeps its id and file name
      return {
        type: 'attachment',
        action: event.type === 'attachment.created' ? 'create' : 'delete',
        teamId: event.note.team.id,
        noteId: event.note.id,
        attachmentId: event.type === 'attachment.deleted' ? null : event.attachment.id,
        summary: { attachment_id: event.attachment.id, filename: event.attachment.filename },
      };
    case 'team.created':
    case 'team.renamed':
      return { type: 'team', action: event.type === 'team.created' ? 'create' : 'update', teamId: event.team.id, summary: { name: event.team.name, ...(event.type === 'team.renamed' ? { from: event.from } : {}) } };
    case 'team.deleted':
      return { type: 'team', action: 'delete', teamId: null, summary: { team_id: event.team.id, name: event.team.name } };
    case 'member.added':
    case 'member.changed':
      return { type: 'team', action: event.type === 'member.added' ? 'add_user' : 'update_user', teamId: event.team.id, summary: { name: event.team.name, user_id: event.user.id, username: event.user.username, role: event.role } };
    case 'member.removed':
      return { type: 'team', action: 'remove_user', teamId: event.team.id, summary: { name: event.team.name, user_id: event.user.id, username: event.user.username } };
    case 'fork.created':
    case 'fork.pulled':
      return forkEntry(event);
    case 'request.created':
    case 'request.opened':
    case 'request.closed':
    case 'request.merged':
      return requestEntry(event);
  }
}

/** A fork made (`fork`) or brought up to date (`pull`): on the fork, naming the original. */
function forkEntry(event: Extract<DomainEvent, { type: 'fork.created' | 'fork.pulled' }>): Entry {
  return {
    type: 'note',
    action: event.type === 'fork.created' ? 'fork' : 'pull',
    teamId: event.note.team.id,
    noteId: event.note.id,
    summary: { title: event.note.title, original_id: event.original.id, ...(event.type === 'fork.pulled' ? { pages: event.pages } : {}) },
  };
}

const requestActions = { 'request.created': 'create', 'request.opened': 'open', 'request.closed': 'close', 'request.merged': 'merge' } as const;

/** A request's creation or change of state: on the note it is to (the original). */
function requestEntry(event: Extract<DomainEvent, { type: `request.${string}` }>): Entry {
  return {
    type: 'request',
    action: requestActions[event.type],
    teamId: event.note.team.id,
    noteId: event.note.id,
    requestId: event.request.id,
    summary: { request_id: event.request.id, index: event.request.index, title: `request #${event.request.index}`, from_note_id: event.request.fromNote?.id ?? null },
  };
}

async function writeLog(em: EntityManager, event: DomainEvent): Promise<void> {
  if (event.type === 'note.deleted') await keepEntriesOfDeletedNote(em, event.note);
  const entry = entryFor(event);
  const now = currentTime();
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
    attachment: entry.attachmentId ?? null,
    summary: entry.summary,
    viaClient: event.actor.via?.clientId ?? null,
    viaApp: event.actor.via?.name ?? null,
    createdAt: now,
    updatedAt: now,
  });
}

export function subscribeActivityLog(): void {
  subscribe('activity-log', writeLog);
}
