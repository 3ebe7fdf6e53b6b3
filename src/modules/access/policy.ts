// Who may do what, as data: pure functions of the caller's role in the team that owns the object (undefined when the
// caller is not in that team). design.md's authorization table, line by line.
import type { TeamRole } from '../teams/team.entity.ts';

export type Role = TeamRole | undefined;

export const notePolicy = {
  /** Anyone signed in reads notes that are not private; the team reads its private ones too. */
  read: (role: Role, note: { isPrivate: boolean }) => role !== undefined || !note.isPrivate,
  /** Members and managers create and edit notes and what is inside them. */
  edit: (role: Role) => role !== undefined,
  /** Managers delete notes, move them to another team, merge and close requests into them. */
  manage: (role: Role) => role === 'manager',
};

export const teamPolicy = {
  /** Any signed-in user may look at a team (its members are public); `role` says whether they are in it. */
  read: (_role: Role) => true,
  /** Members create notes in the team. */
  createNote: (role: Role) => role !== undefined,
  /** Managers rename and delete the team, and add, remove and change the role of its users. */
  manage: (role: Role) => role === 'manager',
};

export const commentPolicy = {
  /** The author, or a manager of the note's team. */
  delete: (role: Role, comment: { userId: number }, callerId: number) => comment.userId === callerId || role === 'manager',
};
