// What a domain event says (events.ts records them): the actor, and one shape per kind of change, naming the
// entities it is about. Types only, in a file of their own so the change log (change-log.ts) can read them without
// importing events.ts, which imports it.
import type { Attachment } from '../attachments/attachment.entity.ts';
import type { Comment, CommentedObject } from '../comments/comment.entity.ts';
import type { Issue } from '../issues/issue.entity.ts';
import type { Note } from '../notes/note.entity.ts';
import type { Page, PageVersion } from '../pages/page.entity.ts';
import type { MergeRequest } from '../requests/merge-request.entity.ts';
import type { Team, TeamRole } from '../teams/team.entity.ts';
import type { User } from '../users/user.entity.ts';

/**
 * The user who made the change (a snapshot; subscribers use its id and name), and the OAuth app it came through
 * (the client's id; null or absent for a personal token).
 */
/** The app a change came through, as versions, comments, issues, requests and log entries record it ("via <name>"). */
export type Via = { clientId: string; name: string };

export type Actor = Pick<User, 'id' | 'username' | 'name'> & {
  clientId?: number | null;
  via?: Via | null;
  /** The versions the change writes name these users beside the actor (a live save: Caller.coAuthorIds). */
  coAuthorIds?: readonly number[];
};

export type DomainEvent =
  | { type: 'note.created'; actor: Actor; note: Note }
  | { type: 'note.updated'; actor: Actor; note: Note; changed: string[] }
  | { type: 'note.deleted'; actor: Actor; note: Note }
  | { type: 'page.created'; actor: Actor; note: Note; page: Page; version: PageVersion }
  | { type: 'page.updated'; actor: Actor; note: Note; page: Page; version: PageVersion | undefined; changed: string[] }
  | { type: 'page.restored'; actor: Actor; note: Note; page: Page; version: PageVersion; restored: PageVersion }
  | { type: 'page.deleted'; actor: Actor; note: Note; page: Page }
  | { type: 'comment.created'; actor: Actor; note: Note; comment: Comment; target: CommentedObject; mentioned: readonly Actor[] }
  | { type: 'comment.deleted'; actor: Actor; note: Note; comment: Comment; target: CommentedObject }
  /** `assignee`: the user the new issue is assigned to, if any. */
  | { type: 'issue.created'; actor: Actor; note: Note; issue: Issue; assignee: Actor | null }
  /**
   * `changed`: the fields that changed (`title`, `description`, `to_user`, `position`, `rate`, and `closed` or
   * `reopened` for `is_done`); `assignee`: the user the issue was just assigned to, when `to_user` changed to one.
   */
  | { type: 'issue.updated'; actor: Actor; note: Note; issue: Issue; changed: string[]; assignee: Actor | null }
  | { type: 'issue.deleted'; actor: Actor; note: Note; issue: Issue }
  | { type: 'attachment.created' | 'attachment.deleted'; actor: Actor; note: Note; attachment: Attachment }
  | { type: 'team.created'; actor: Actor; team: Team }
  | { type: 'team.renamed'; actor: Actor; team: Team; from: string }
  | { type: 'team.deleted'; actor: Actor; team: Team }
  | { type: 'member.added' | 'member.changed'; actor: Actor; team: Team; user: Actor; role: TeamRole }
  | { type: 'member.removed'; actor: Actor; team: Team; user: Actor }
  /** `note`: the new fork; `original`: the note it was forked from. */
  | { type: 'fork.created'; actor: Actor; note: Note; original: Note }
  /** `note`: the fork brought up to date; `pages`: how many of its pages changed. */
  | { type: 'fork.pulled'; actor: Actor; note: Note; original: Note; pages: number }
  /** `note`: the note the request is to (the original); `author`: who opened the request. */
  | { type: 'request.created' | 'request.opened' | 'request.closed' | 'request.merged'; actor: Actor; note: Note; request: MergeRequest; author: Actor };

export type EventType = DomainEvent['type'];
