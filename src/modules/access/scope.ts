// The scope of a request: what its path names (team, note, page) together with the caller and their role, loaded
// once, in one statement, before the handler runs, and handed to it. A note the caller may not read is not in
// anyone's scope: it answers 404 here, exactly like one that does not exist. What the caller may do with what is
// in scope is then asked of the policy table with `authorize(scope, action)`: 403 when the answer is no.
import { tags, type Tag } from '../../cache/tags.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import { mapAliased } from '../../db/rows.ts';
import { confirmToken, requireLiveToken } from '../../http/auth.ts';
import { forbidden, notFound } from '../errors.ts';
import { Note } from '../notes/note.entity.ts';
import { Page } from '../pages/page.entity.ts';
import { Team } from '../teams/team.entity.ts';
import { foldCase } from '../text/fold.ts';
import { noteScopeRow, pageScopeRow, teamScopeRow, type ScopeRow } from './access.repository.ts';
import type { Caller } from './caller.ts';
import { actionTargets, can, deniedMessage, type Action, type Requirement, type Role, type Subject, type TargetArgument } from './policy.ts';

export type ScopeKind = 'caller' | 'team' | 'note' | 'page';

export type CallerScope = { kind: 'caller'; caller: Caller };
export type TeamScope = { kind: 'team'; caller: Caller; team: Team; role: Role };
export type NoteScope = { kind: 'note'; caller: Caller; team: Team; role: Role; note: Note };
export type PageScope = {
  kind: 'page';
  caller: Caller;
  team: Team;
  role: Role;
  note: Note;
  page: Page;
  /**
   * Identifies, for this caller, everything a view of the page shows: the revisions of the note, its team, and (for
   * a fork) the original and its team, with the caller's role in both teams. Equal stamps mean equal views.
   */
  view: { key: string; stamp: string };
  /** The team of the note this one was forked from, if it is a fork whose original still exists. */
  originalTeamId: number | null;
};

export type ScopeOf<S extends ScopeKind> = S extends 'team' ? TeamScope : S extends 'note' ? NoteScope : S extends 'page' ? PageScope : CallerScope;

/** PostgreSQL `integer`: a larger number names nothing and must not reach the database as one. */
const LARGEST_ID = 2_147_483_647;

/** A path's note reference as (id, slug): digits name an id, anything else a slug. */
export function noteReference(ref: string): { id: number | null; slug: string | null } {
  if (/^[0-9]+$/.test(ref)) {
    const id = Number(ref);
    return { id: id <= LARGEST_ID ? id : -1, slug: null };
  }
  return { id: null, slug: ref };
}

export function subjectOf(scope: { caller: Caller; role: Role }): Subject {
  return { role: scope.role, callerId: scope.caller.user.id };
}

/**
 * Outside production, the actions a request's handler authorized (see `checkDeclaredAction`): the operation wrapper
 * runs the handler inside `authorizations.run(new Set(), ...)`.
 */
export const authorizations = new AsyncLocalStorage<Set<Action>>();

/** 403 unless the policy allows the action; a note the caller may not read is 404, checked first. */
export function authorize<A extends Action>(scope: TeamScope | NoteScope | PageScope, action: A, ...target: TargetArgument<A>): void {
  authorizations.getStore()?.add(action);
  const subject = subjectOf(scope);
  if ('note' in scope && !can('note.read', subject, scope.note)) throw notFound('note');
  if (!can(action, subject, ...target)) throw forbidden(deniedMessage(action));
}

/**
 * The operation wrapper's part of an operation's declared action: an action asked of nothing or of the note in scope
 * is authorized here, before the handler runs (true); one about an object the handler loads is left to the handler
 * (false). `note.read` is what loading a note or page scope already enforces (404).
 */
export function authorizeDeclared(scope: CallerScope | TeamScope | NoteScope | PageScope, action: Requirement): boolean {
  if (action === 'signed-in' || scope.kind === 'caller') return false;
  const target = actionTargets[action];
  if (target === 'object') return false;
  if (target === 'note') {
    if (scope.kind === 'team') throw new Error(`${action} needs a note or page scope`);
    authorize(scope, action as 'note.read', scope.note);
  } else {
    authorize(scope, action as 'note.edit');
  }
  return true;
}

/**
 * Outside production, after a handler answered: an operation whose declared action the wrapper could not authorize
 * must have had its handler call `authorize` with that action (a declaration that says one thing while the handler
 * checks another fails loudly in tests). `note.read` asked of a note found some other way (an attachment by id) is
 * the loader's 404, not an `authorize` call.
 */
export function checkDeclaredAction(operationId: string, action: Requirement, authorized: ReadonlySet<Action>): void {
  if (action === 'signed-in' || action === 'note.read' || authorized.has(action)) return;
  throw new Error(`${operationId} declares the action ${action}, but its handler authorized only: ${[...authorized].join(', ') || 'nothing'}`);
}

/**
 * The team named `name` with the caller's role in it, or undefined. Names compare by foldCase (text/fold.ts), as
 * findTeam does: the key is computed here and matched to the stored `teams.name_key`, through its unique index.
 */
export async function findTeamScope(em: EntityManager, caller: Caller, name: string): Promise<TeamScope | undefined> {
  const row = await teamScopeRow(em, foldCase(name), caller.user.id, caller.tokenId);
  requireLiveToken(caller, row.token_alive === true);
  if (row['t.id'] === null) return undefined;
  return { kind: 'team', caller, team: mapAliased(em, Team, row, 't')!, role: (row.role ?? undefined) as Role };
}

export async function loadTeamScope(em: EntityManager, caller: Caller, name: string): Promise<TeamScope> {
  const scope = await findTeamScope(em, caller, name);
  if (!scope) throw notFound('team');
  return scope;
}

export async function loadNoteScope(em: EntityManager, caller: Caller, teamName: string, noteRef: string): Promise<NoteScope> {
  const { id, slug } = noteReference(noteRef);
  return noteScopeFrom(em, caller, await noteScopeRow(em, foldCase(teamName), { id, slug }, caller.user.id, caller.tokenId));
}

function noteScopeFrom(em: EntityManager, caller: Caller, row: ScopeRow | undefined): NoteScope {
  requireLiveToken(caller, row?.token_alive === true);
  if (!row || row['t.id'] === null) throw notFound('team');
  const team = mapAliased(em, Team, row, 't')!;
  const note = mapAliased(em, Note, row, 'n');
  const role = (row.role ?? undefined) as Role;
  if (!note || !can('note.read', { role, callerId: caller.user.id }, note)) throw notFound('note');
  return { kind: 'note', caller, team, role, note };
}

export async function loadPageScope(em: EntityManager, caller: Caller, teamName: string, noteRef: string, pageId: number): Promise<PageScope> {
  const { id, slug } = noteReference(noteRef);
  const row = await pageScopeRow(
    em,
    foldCase(teamName),
    { id, slug },
    caller.user.id,
    Number.isSafeInteger(pageId) && pageId <= LARGEST_ID ? pageId : -1,
    caller.tokenId,
  );
  const scope = noteScopeFrom(em, caller, row);
  const page = mapAliased(em, Page, row!, 'p');
  if (!page) throw notFound('page');
  const view = {
    key: `${page.id}:${scope.role ?? '-'}:${row!.original_role ?? '-'}`,
    stamp: `${row!.note_revision}:${row!.team_revision}:${row!.original_revision}:${row!.original_team_revision}`,
  };
  return { ...scope, kind: 'page', page, view, originalTeamId: (row!.original_team_id as number | null) ?? null };
}

/** The change-feed tags of what a scope names: its note and team (src/cache/tags.ts). */
export function scopeTags(scope: CallerScope | TeamScope | NoteScope | PageScope): Tag[] {
  switch (scope.kind) {
    case 'caller':
      return [];
    case 'team':
      return [tags.team(scope.team.id)];
    default:
      return [tags.note(scope.note.id), tags.team(scope.team.id)];
  }
}

/** Loads the scope an operation declares, from its path parameters. */
export async function loadScope(kind: ScopeKind, em: EntityManager, caller: Caller, path: Record<string, unknown>) {
  switch (kind) {
    case 'caller':
      await confirmToken(em, caller);
      return { kind, caller } satisfies CallerScope;
    case 'team':
      return loadTeamScope(em, caller, String(path.team));
    case 'note':
      return loadNoteScope(em, caller, String(path.team), String(path.note));
    case 'page':
      return loadPageScope(em, caller, String(path.team), String(path.note), Number(path.page));
  }
}
