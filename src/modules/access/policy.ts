// Who may do what, as one table: each action is a pure rule over the caller's role in the team that owns the object
// (undefined when the caller is not in that team), the caller's id, and the object where the rule needs it.
// design.md's authorization table, line by line. Handlers ask `authorize(scope, action)` (scope.ts); presenters ask
// `can(...)` for fields such as `can_manage`; nothing else decides who may do what.
import type { TeamRole } from '../teams/team.entity.ts';

export type Role = TeamRole | undefined;
export type Subject = { role: Role; callerId: number };

type Rule<Target> = { allow: (subject: Subject, target: Target) => boolean; denied: string };
const rule = <Target = undefined>(denied: string, allow: (subject: Subject, target: Target) => boolean): Rule<Target> => ({ allow, denied });

export const policy = {
  /** Anyone signed in reads notes that are not private (and what is in them); the team reads its private ones too. */
  'note.read': rule<{ isPrivate: boolean }>('the note is not readable', ({ role }, note) => role !== undefined || !note.isPrivate),
  /** Anyone who may read a note may comment on it and on its pages. */
  'note.comment': rule<{ isPrivate: boolean }>('the note is not readable', ({ role }, note) => role !== undefined || !note.isPrivate),
  /** Members and managers edit notes and what is inside them (pages, versions). */
  'note.edit': rule("only members of the note's team may change it or what is in it", ({ role }) => role !== undefined),
  /** Managers delete notes and move them to another team (and, later, merge and close requests into them). */
  'note.manage': rule("only a manager of the note's team may do this", ({ role }) => role === 'manager'),
  /** The author of a comment, or a manager of the note's team. */
  'comment.delete': rule<{ authorId: number }>(
    "only the comment's author or a manager of the note's team may delete it",
    ({ role, callerId }, comment) => comment.authorId === callerId || role === 'manager',
  ),
  /**
   * Deleting an issue (and `can_manage` on it): its creator while still in the note's team, or a manager of the
   * team. Creating, editing and tagging issues is `note.edit`: every member.
   */
  'issue.manage': rule<{ creatorId: number }>(
    "only the issue's creator or a manager of the note's team may delete it",
    ({ role, callerId }, issue) => role === 'manager' || (role !== undefined && issue.creatorId === callerId),
  ),
  /**
   * Deleting an attachment: its uploader while still in the note's team, or a manager of the team. Uploading takes
   * `note.edit` (every member).
   */
  'attachment.delete': rule<{ uploaderId: number }>(
    "only the attachment's uploader or a manager of the note's team may delete it",
    ({ role, callerId }, attachment) => role === 'manager' || (role !== undefined && attachment.uploaderId === callerId),
  ),
  /**
   * Opening and closing a request (and `can_open`): its author, or a manager of the team of the note it is to.
   * Merging it is `note.manage` on that note.
   */
  'request.manage': rule<{ authorId: number }>(
    "only the request's author or a manager of the note's team may do this",
    ({ role, callerId }, request) => request.authorId === callerId || role === 'manager',
  ),
  /** Any signed-in user may look at a team (its members are public); `role` says whether they are in it. */
  'team.read': rule('', () => true),
  /** Members create notes in the team. */
  'team.createNote': rule('only members of the team may create notes in it', ({ role }) => role !== undefined),
  /** Managers rename and delete the team, add users and change their roles, and move notes into it. */
  'team.manage': rule('only a manager of the team may do this', ({ role }) => role === 'manager'),
  /** Managers remove anyone from the team; every member may remove themselves (leave). */
  'team.removeUser': rule<{ userId: number }>(
    'only a manager of the team may remove someone else from it',
    ({ role, callerId }, target) => target.userId === callerId || role === 'manager',
  ),
} as const;

export type Action = keyof typeof policy;

/**
 * What each action is asked about: nothing (the caller's role is enough), the note in the request's scope, or an
 * object the handler loads first (a comment's author, ...). An operation declaring an action of the first two kinds
 * is authorized by the operation wrapper itself (src/http/openapi.ts); for the third the handler calls `authorize`
 * with the object. A new action must be classified here (the Record's type says so).
 */
export const actionTargets: Record<Action, 'none' | 'note' | 'object'> = {
  'note.read': 'note',
  'note.comment': 'note',
  'note.edit': 'none',
  'note.manage': 'none',
  'comment.delete': 'object',
  'issue.manage': 'object',
  'attachment.delete': 'object',
  'request.manage': 'object',
  'team.read': 'none',
  'team.createNote': 'none',
  'team.manage': 'none',
  'team.removeUser': 'object',
};

/**
 * What an operation requires (declared with it, `defineOperation(id, { scope, action }, ...)`): an action of the
 * policy, or `signed-in` for what any signed-in caller may do with their own things or the public lists (`/me`,
 * notifications, tokens, search).
 */
export type Requirement = Action | 'signed-in';
export type TargetOf<A extends Action> = (typeof policy)[A] extends Rule<infer Target> ? Target : never;
/** The target argument of an action: none where the rule needs none. */
export type TargetArgument<A extends Action> = [TargetOf<A>] extends [undefined] ? [] : [TargetOf<A>];

/** Whether the subject may do the action (to the target, where the rule has one). */
export function can<A extends Action>(action: A, subject: Subject, ...target: TargetArgument<A>): boolean {
  return (policy[action] as Rule<unknown>).allow(subject, target[0]);
}

export function deniedMessage(action: Action): string {
  return policy[action].denied;
}
