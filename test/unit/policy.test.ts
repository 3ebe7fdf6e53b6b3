import { describe, expect, it } from 'vitest';
import { commentPolicy, notePolicy, teamPolicy, type Role } from '../../src/modules/access/policy.ts';

const roles: Role[] = ['manager', 'member', undefined];

describe('notePolicy', () => {
  it.each([
    // role, private, read, edit, manage
    ['manager', true, true, true, true],
    ['manager', false, true, true, true],
    ['member', true, true, true, false],
    ['member', false, true, true, false],
    [undefined, true, false, false, false],
    [undefined, false, true, false, false],
  ] as const)('%s on a note private=%s: read %s, edit %s, manage %s', (role, isPrivate, read, edit, manage) => {
    expect(notePolicy.read(role, { isPrivate })).toBe(read);
    expect(notePolicy.edit(role)).toBe(edit);
    expect(notePolicy.manage(role)).toBe(manage);
  });
});

describe('teamPolicy', () => {
  it.each(roles)('%s', (role) => {
    expect(teamPolicy.read(role)).toBe(true);
    expect(teamPolicy.createNote(role)).toBe(role !== undefined);
    expect(teamPolicy.manage(role)).toBe(role === 'manager');
  });
});

describe('commentPolicy', () => {
  it.each([
    ['manager', 1, 2, true],
    ['member', 1, 2, false],
    ['member', 2, 2, true],
    [undefined, 2, 2, true],
    [undefined, 1, 2, false],
  ] as const)('%s deleting a comment by %s as user %s: %s', (role, authorId, callerId, allowed) => {
    expect(commentPolicy.delete(role, { userId: authorId }, callerId)).toBe(allowed);
  });
});
