// The users module's SQL, where its ORM entities do not express it: whether a name is taken across users and teams.
import type { EntityManager } from '@mikro-orm/postgresql';

/** Whether a team or a user holds this name key, in one statement: users and teams share one namespace. */
export async function nameKeyIsTaken(em: EntityManager, key: string): Promise<boolean> {
  const rows = await em.execute<{ taken: boolean }[]>(
    'select exists (select 1 from teams where name_key = ?) or exists (select 1 from users where username_key = ?) as taken',
    [key, key],
  );
  return rows[0]?.taken === true;
}
