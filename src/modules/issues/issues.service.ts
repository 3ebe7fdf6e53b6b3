// Writing issues, each change in one transaction with its domain event. Who may do what is decided before these are
// called (the handlers ask the policy table); here only what the data itself forbids is checked: an assignee must
// exist and be able to read the note, an issue holds at most 100 tags.
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { nextNoteIndex } from '../../db/note-counters.ts';
import { currentTime } from '../../db/timestamps.ts';
import { conflict, unprocessable } from '../errors.ts';
import { can } from '../access/policy.ts';
import { rolesOfUsersInTeam } from '../access/roles.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import type { Note } from '../notes/note.entity.ts';
import { foldCase } from '../text/fold.ts';
import type { User } from '../users/user.entity.ts';
import { findUserByUsername } from '../users/users.service.ts';
import { Issue } from './issue.entity.ts';
import { insertIssueTags, insertNoteTags, issueTagKeys, noteTagIds } from './issues.repository.ts';

/** At most this many tags on one issue (design.md, Limits). */
export const TAGS_PER_ISSUE = 100;

export type IssueFields = {
  title?: string | undefined;
  description?: string | null | undefined;
  /** undefined: keep; null or '': unassigned; else a username. */
  to_user?: string | null | undefined;
  is_done?: boolean | null | undefined;
  position?: number | null | undefined;
  rate?: number | null | undefined;
};

/** The user a username names, who must be able to read the note (422 otherwise). */
async function findAssignee(em: EntityManager, note: Note, username: string): Promise<User> {
  const user = await findUserByUsername(em, username);
  const pointer = '/issue/to_user';
  if (!user) throw unprocessable('unknown_user', `no user is named "${username}"`, [{ pointer, detail: 'no such user' }]);
  const role = (await rolesOfUsersInTeam(em, note.team.id, [user.id])).get(user.id);
  if (!can('note.read', { role, callerId: user.id }, note)) {
    throw unprocessable('cannot_read_note', `${user.username} may not read this note`, [{ pointer, detail: `${user.username} may not read this note` }]);
  }
  return user;
}

/** The unique (note_id, index) is the backstop behind the counter: hitting it means the counter was bypassed. */
function indexTaken(error: unknown): never {
  if (error instanceof UniqueConstraintViolationException) {
    throw conflict('concurrent_change', 'another issue of this note already has the next index; try again');
  }
  throw error;
}

export async function createIssue(em: EntityManager, actor: Actor, note: Note, fields: IssueFields & { title: string }): Promise<Issue> {
  return em.transactional(async (tx) => {
    const assignee = fields.to_user ? await findAssignee(tx, note, fields.to_user) : null;
    const index = await nextNoteIndex(tx, note.id, 'issue');
    const issue = tx.create(Issue, {
      note: note.id,
      index,
      title: fields.title,
      description: fields.description ?? '',
      isDone: false,
      position: fields.position ?? index,
      rate: fields.rate ?? 0,
      fromUser: actor.id,
      toUser: assignee?.id ?? null,
      viaClient: actor.via?.clientId ?? null,
      viaApp: actor.via?.name ?? null,
    });
    await tx.flush().catch(indexTaken);
    await recordEvent(tx, { type: 'issue.created', actor, note, issue, assignee });
    return issue;
  });
}

/** A partial update: what is undefined (or null, for the fields that cannot be null) keeps its value. */
export async function updateIssue(em: EntityManager, actor: Actor, note: Note, issue: Issue, fields: IssueFields): Promise<Issue> {
  return em.transactional(async (tx) => {
    const locked = await tx.findOneOrFail(Issue, issue.id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const changed: string[] = [];
    let assignee: User | null = null;
    if (fields.to_user !== undefined) {
      const target = fields.to_user ? await findAssignee(tx, note, fields.to_user) : null;
      if ((target?.id ?? null) !== (locked.toUser?.id ?? null)) {
        locked.toUser = target;
        assignee = target;
        changed.push('to_user');
      }
    }
    if (fields.title !== undefined && fields.title !== locked.title) {
      locked.title = fields.title;
      changed.push('title');
    }
    if (fields.description !== undefined && (fields.description ?? '') !== locked.description) {
      locked.description = fields.description ?? '';
      changed.push('description');
    }
    if (fields.is_done !== undefined && fields.is_done !== null && fields.is_done !== locked.isDone) {
      locked.isDone = fields.is_done;
      changed.push(fields.is_done ? 'closed' : 'reopened');
    }
    if (fields.position !== undefined && fields.position !== null && fields.position !== locked.position) {
      locked.position = fields.position;
      changed.push('position');
    }
    if (fields.rate !== undefined && fields.rate !== null && fields.rate !== Number(locked.rate)) {
      locked.rate = fields.rate;
      changed.push('rate');
    }
    if (changed.length > 0) await recordEvent(tx, { type: 'issue.updated', actor, note, issue: locked, changed, assignee });
    return locked;
  });
}

/** Its comments, tags and notifications go with it (foreign keys cascade); its log entries stay, keeping a summary. */
export async function deleteIssue(em: EntityManager, actor: Actor, note: Note, issue: Issue): Promise<void> {
  await em.transactional(async (tx) => {
    await recordEvent(tx, { type: 'issue.deleted', actor, note, issue });
    await tx.flush();
    await tx.nativeDelete(Issue, { id: issue.id });
  });
}

/** A tag as given (trimmed) and its key: foldCase of the name, stored in `tags.name_key`, unique per note. */
export type TagName = { name: string; key: string };

/** Trimmed, without empty entries, each name once (by its key; the first spelling wins). */
export function normaliseTags(names: readonly string[]): TagName[] {
  const seen = new Map<string, TagName>();
  for (const raw of names) {
    const name = raw.trim();
    if (name === '') continue;
    const key = foldCase(name);
    if (!seen.has(key)) seen.set(key, { name, key });
  }
  return [...seen.values()];
}

/**
 * Adds the tags the issue does not have yet, after its others. Tags are the note's: a name whose key is already used
 * in the note is the same tag (its first spelling kept). Tags are matched by their keys alone, computed here: the
 * database compares them as stored and never folds a name itself. Concurrent additions of the same new name to the
 * note both find the one row (`on conflict do nothing`); additions to one issue queue on its row, so the limit holds.
 */
export async function addIssueTags(em: EntityManager, actor: Actor, note: Note, issue: Issue, names: readonly string[]): Promise<void> {
  const wanted = normaliseTags(names);
  if (wanted.length === 0) return;
  await em.transactional(async (tx) => {
    const locked = await tx.findOneOrFail(Issue, issue.id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const has = await issueTagKeys(tx, locked.id);
    const adding = wanted.filter((tag) => !has.has(tag.key));
    if (adding.length === 0) return;
    if (has.size + adding.length > TAGS_PER_ISSUE) {
      throw unprocessable('too_many_tags', `an issue has at most ${TAGS_PER_ISSUE} tags: it has ${has.size}, and ${adding.length} more were given`, [
        { pointer: '/tags', detail: `at most ${TAGS_PER_ISSUE} tags per issue` },
      ]);
    }
    const now = currentTime();
    // in one order for everyone (two additions of `a, b` and `b, a` would otherwise wait on each other's new rows)
    const byKey = [...adding].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    await insertNoteTags(tx, note.id, byKey, now);
    const idOf = await noteTagIds(tx, note.id, adding.map((tag) => tag.key));
    // one row each, in the order given: `added_order` follows the insertion
    await insertIssueTags(tx, locked.id, adding.map((tag) => idOf.get(tag.key)!));
    locked.updatedAt = currentTime();
    await recordEvent(tx, { type: 'issue.updated', actor, note, issue: locked, changed: ['tags'], assignee: null });
  });
}
