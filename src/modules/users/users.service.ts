import { sql } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, unprocessable } from '../../http/errors.ts';
import { usernameProblem } from '../teams/names.ts';
import { Membership, Team } from '../teams/team.entity.ts';
import { User } from './user.entity.ts';

export type NewUser = { username: string; name?: string | undefined; lang?: 'en' | 'ja' | undefined };

export async function findUserByUsername(em: EntityManager, username: string): Promise<User | null> {
  return em.findOne(User, { [sql.lower('username')]: username.toLowerCase() });
}

/** A team or a user already holds this name (they share one namespace: every user has a team named after them). */
export async function nameIsTaken(em: EntityManager, name: string): Promise<boolean> {
  const rows = await em.execute<{ taken: boolean }[]>(
    'select exists (select 1 from teams where lower(name) = lower(?)) or exists (select 1 from users where lower(username) = lower(?)) as taken',
    [name, name],
  );
  return rows[0]?.taken === true;
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
