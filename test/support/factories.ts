// Test data written straight to the real database through the services, the way the service itself writes it.
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Membership, Team, type TeamRole } from '../../src/modules/teams/team.entity.ts';
import { User } from '../../src/modules/users/user.entity.ts';
import { createUser } from '../../src/modules/users/users.service.ts';
import type { TestApp } from './app.ts';
import { ApiClient } from './client.ts';

export type Actor = { user: User; token: string; client: ApiClient };

let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}${process.pid % 1000}x${counter}`;
}

export async function makeUser(app: TestApp, username = uniqueName('user'), options: { scope?: 'read' | 'write'; lang?: 'en' | 'ja' } = {}): Promise<Actor> {
  const em = app.em();
  const user = await createUser(em, { username, name: `${username} Name`, lang: options.lang ?? 'en' });
  const { secret } = await issueToken(em, user, { scope: options.scope ?? 'write' });
  return { user, token: secret, client: new ApiClient(app.baseUrl, secret) };
}

export async function makeTeam(app: TestApp, name: string, members: { user: User; role: TeamRole }[]): Promise<Team> {
  const em = app.em();
  const team = em.create(Team, { name, isDefault: false, plan: 'free', fullname: null, url: null, description: null });
  for (const { user, role } of members) em.create(Membership, { team, user: user.id, role });
  await em.flush();
  return team;
}

export async function makeNote(
  app: TestApp,
  team: Team | string,
  creator: User,
  options: { title?: string; slug?: string | null; isPrivate?: boolean; description?: string; forkedFrom?: Note } = {},
): Promise<Note> {
  const em = app.em();
  const teamEntity = typeof team === 'string' ? await em.findOneOrFail(Team, { name: team }) : team;
  const note = em.create(Note, {
    team: teamEntity.id,
    user: creator.id,
    slug: options.slug ?? null,
    title: options.title ?? 'A note',
    description: options.description ?? '',
    isPrivate: options.isPrivate ?? false,
    forkedFrom: options.forkedFrom?.id ?? null,
    pulledAt: null,
  });
  await em.flush();
  return note;
}

export function anonymous(app: TestApp): ApiClient {
  return new ApiClient(app.baseUrl);
}
