// The system module's SQL: the readiness probe's round trip to the database.
import type { EntityManager } from '@mikro-orm/postgresql';

/** Asks the database for nothing: a server is ready only while its database answers (throws when it does not). */
export async function pingDatabase(em: EntityManager): Promise<void> {
  await em.execute('select 1');
}
