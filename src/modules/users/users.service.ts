import { sql } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, unprocessable } from '../errors.ts';
import { usernameProblem } from '../teams/names.ts';
import { Membership, Team } from '../teams/team.entity.ts';
import { foldCase } from '../text/fold.ts';
import { User } from './user.entity.ts';
import { nameKeyIsTaken } from './users.repository.ts';

export type NewUser = { username: string; name?: string | undefined; lang?: 'en' | 'ja' | undefined };

/** The user of this username (compared by foldCase with the stored key, `users.username_key`), or null. */
export async function findUserByUsername(em: EntityManager, username: string): Promise<User | null> {
  return em.findOne(User, { [sql.ref('username_key')]: foldCase(username) });
}

/**
 * A team or a user already holds this name (they share one namespace: every user has a team named after them),
 * compared by foldCase with the stored keys (migration 0013).
 */
export async function nameIsTaken(em: EntityManager, name: string): Promise<boolean> {
  return nameKeyIsTaken(em, foldCase(name));
}

/** Creates a user with their default team (named after them, `is_default`, the user its manager). */
export async function createUser(em: EntityManager, input: NewUser): Promise<User> {
  const problem = usernameProblem(input.username);
  if (problem) throw unprocessable(problem.code, `username ${problem.detail}`, [{ pointer: '/username', detail: problem.detail }]);
  return em.transactional(async (tx) => {
    if (await nameIsTaken(tx, input.username)) {
      throw conflict('name_taken', `the name "${input.username}" is already taken by a user or team`);
    }
    const user = tx.create(User, { username: input.username, name: input.name ?? input.username, lang: input.lang ?? 'en', options: null, passwordHash: null });
    const team = tx.create(Team, { name: input.username, isDefault: true, plan: 'free', fullname: null, url: null, description: null });
    tx.create(Membership, { team, user, role: 'manager' });
    await tx.flush();
    return user;
  });
}
