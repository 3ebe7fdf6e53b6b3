// What a role matrix cell must answer, computed as test/api/role-matrix.test.ts computes it and never written by
// hand: from the action the operation declares (`defineOperation(id, { scope, action })`, src/http/operations.ts)
// and the policy table (`can`, src/modules/access/policy.ts), with the caller's role known from how the soak made
// its cast (world.ts):
//   anonymous 401; a read-scoped token on a write 403; a note the caller may not read 404; an action the policy
//   refuses 403; otherwise a 2xx.
// Each cell's method and path must be one of the document's for the operation it names (generated/openapi.json), so
// a cell cannot drift to another operation unnoticed.
import type { OperationDefinition } from '../../src/http/handler.ts';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';
import { operations } from '../../src/http/operations.ts';
import { actionTargets, can, type Action, type Requirement, type Subject } from '../../src/modules/access/policy.ts';
import type { Actor } from './world.ts';

export type Expected = { status: 'success' | 401 | 403 | 404; why: string };

/** Where a cell acts: the team the path (or body) names, the note it is in, and the object an object action is about. */
export type Where = {
  team: string;
  note?: { isPrivate: boolean };
  /** comment.delete and request.manage: authorId; issue.manage: creatorId; team.removeUser: userId. */
  target?: { authorId?: number; creatorId?: number; uploaderId?: number; userId?: number };
};

const templates = new Map<string, { method: string; pattern: RegExp; template: string }>();
for (const [template, item] of Object.entries(loadOpenApiDocument().paths)) {
  for (const [method, operation] of Object.entries(item as Record<string, { operationId?: string }>)) {
    if (!operation?.operationId) continue;
    const pattern = new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`);
    templates.set(operation.operationId, { method: method.toUpperCase(), pattern, template });
  }
}

/** Throws when `method path` is not the document's for `operationId` (a mistake in the soak, not in the server). */
export function checkOperation(operationId: string, method: string, path: string): void {
  const found = templates.get(operationId);
  if (!found) throw new Error(`${operationId} is not an operation of generated/openapi.json`);
  if (found.method !== method || !found.pattern.test(path.split('?')[0]!)) {
    throw new Error(`${method} ${path} is not ${operationId} (${found.method} ${found.template})`);
  }
}

export function expectedStatus(operationId: string, method: string, actor: Actor | undefined, where: Where): Expected {
  if (!actor) return { status: 401, why: 'no token' };
  if (actor.scope === 'read' && method !== 'GET') return { status: 403, why: 'read-scoped token' };
  const definition = (operations as unknown as Record<string, OperationDefinition<never>>)[operationId];
  const action = definition?.action as Requirement | undefined;
  if (!action) throw new Error(`${operationId} declares no action`);
  if (action === 'signed-in') return { status: 'success', why: 'signed-in' };
  const role = actor.roles.get(where.team);
  const subject: Subject = { role, callerId: actor.id };
  const roleName = role ?? `not in ${where.team}`;
  if (where.note && !can('note.read', subject, where.note)) return { status: 404, why: `cannot read the note (${roleName})` };
  const kind = actionTargets[action];
  let allowed: boolean;
  if (kind === 'none') allowed = can(action as 'note.edit', subject);
  else if (kind === 'note') allowed = can(action as 'note.read', subject, where.note ?? { isPrivate: false });
  else {
    if (!where.target) throw new Error(`${operationId}: ${action} needs the object it acts on`);
    allowed = can(action as Action as 'comment.delete', subject, { ...where.note, ...where.target } as never);
  }
  return allowed ? { status: 'success', why: `${action} allowed (${roleName})` } : { status: 403, why: `${action} refused (${roleName})` };
}
