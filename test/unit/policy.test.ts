import { describe, expect, it } from 'vitest';
import { can, type Role } from '../../src/modules/access/policy.ts';

const roles: Role[] = ['manager', 'member', undefined];
const subject = (role: Role, callerId = 7) => ({ role, callerId });

describe('notes', () => {
  it.each([
    // role, private, read, comment, edit, manage
    ['manager', true, true, true, true, true],
    ['manager', false, true, true, true, true],
    ['member', true, true, true, true, false],
    ['member', false, true, true, true, false],
    [undefined, true, false, false, false, false],
    [undefined, false, true, true, false, false],
  ] as const)('%s on a note private=%s: read %s, comment %s, edit %s, manage %s', (role, isPrivate, read, comment, edit, manage) => {
    expect(can('note.read', subject(role), { isPrivate })).toBe(read);
    expect(can('note.comment', subject(role), { isPrivate })).toBe(comment);
    expect(can('note.edit', subject(role))).toBe(edit);
    expect(can('note.manage', subject(role))).toBe(manage);
  });
});

describe('teams', () => {
  it.each(roles)('%s', (role) => {
    expect(can('team.read', subject(role))).toBe(true);
    expect(can('team.createNote', subject(role))).toBe(role !== undefined);
    expect(can('team.manage', subject(role))).toBe(role === 'manager');
  });

  it.each([
    ['manager', 1, 2, true],
    ['member', 1, 2, false],
    ['member', 2, 2, true],
    [undefined, 1, 2, false],
  ] as const)('%s removing user %s as user %s: %s', (role, userId, callerId, allowed) => {
    expect(can('team.removeUser', subject(role, callerId), { userId })).toBe(allowed);
  });
});

describe('comments', () => {
  it.each([
    ['manager', 1, 2, true],
    ['member', 1, 2, false],
    ['member', 2, 2, true],
    [undefined, 2, 2, true],
    [undefined, 1, 2, false],
  ] as const)('%s deleting a comment by %s as user %s: %s', (role, authorId, callerId, allowed) => {
    expect(can('comment.delete', subject(role, callerId), { authorId })).toBe(allowed);
  });
});

describe('issues', () => {
  it.each([
    ['manager', 1, 2, true],
    ['member', 1, 2, false],
    ['member', 2, 2, true],
    // a creator who has left the team no longer manages the issue
    [undefined, 2, 2, false],
    [undefined, 1, 2, false],
  ] as const)('%s managing (deleting) an issue created by %s as user %s: %s', (role, creatorId, callerId, allowed) => {
    expect(can('issue.manage', subject(role, callerId), { creatorId })).toBe(allowed);
  });
});

describe('attachments', () => {
  it.each([
    // role, uploader, caller, may delete
    ['manager', 1, 2, true],
    ['member', 1, 2, false],
    ['member', 2, 2, true],
    // an uploader who left the team
    [undefined, 2, 2, false],
    [undefined, 1, 2, false],
  ] as const)('%s deleting an upload of user %s as user %s: %s', (role, uploaderId, callerId, allowed) => {
    expect(can('attachment.delete', subject(role, callerId), { uploaderId })).toBe(allowed);
  });
});
