// The action every operation declares (defineOperation(id, { scope, action })) fits its scope, and the check the
// wrapper runs outside production catches a handler that does not authorize the object action it declares.
import { describe, expect, it } from 'vitest';
import type { OperationDefinition } from '../../src/http/handler.ts';
import { operations } from '../../src/http/operations.ts';
import { actionTargets, type Action } from '../../src/modules/access/policy.ts';
import { checkDeclaredAction } from '../../src/modules/access/scope.ts';

const defined = Object.values(operations as Record<string, object>)
  .filter((entry): entry is OperationDefinition<never> => 'handle' in entry);

describe('declared actions', () => {
  it('every built operation declares one that its scope can answer', () => {
    const misfits = defined.filter(({ scope, action }) => {
      if (action === 'signed-in') return false;
      if (actionTargets[action] === 'note') return scope === 'team';
      if (action.startsWith('team.')) return scope !== 'team' && !(scope === 'caller' && action === 'team.createNote');
      return scope === 'caller' || scope === 'team';
    });
    expect(misfits.map(({ id, scope, action }) => `${id}: ${action} on a ${scope} scope`)).toEqual([]);
  });

  it('a handler that did not authorize its declared object action fails loudly outside production', () => {
    expect(() => checkDeclaredAction('deleteThing', 'comment.delete', new Set<Action>(['note.edit']))).toThrow(/declares the action comment.delete/);
    expect(() => checkDeclaredAction('deleteThing', 'comment.delete', new Set<Action>(['comment.delete']))).not.toThrow();
    expect(() => checkDeclaredAction('getMe', 'signed-in', new Set())).not.toThrow();
  });
});
