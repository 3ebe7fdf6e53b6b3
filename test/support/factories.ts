// Test data written straight to the real database through the services, the way the service itself writes it; pages
// and comments are written through the HTTP API instead (see makePage).
import type { Comment as CommentView, Issue as IssueView, Page as PageView } from '../../generated/client/types.gen.ts';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Membership, Team, type TeamRole } from '../../src/modules/teams/team.entity.ts';
import { User } from '../../src/modules/users/user.entity.ts';
import { createUser } from '../../src/modules/users/users.service.ts';
import type { TestApp } from './app.ts';
import { ApiClient, type Answer } from './client.ts';

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

/** Adds `user` to a team made earlier (makeTeam takes the members known when the team is made). */
export async function addMember(app: TestApp, team: Team, user: User, role: TeamRole): Promise<void> {
  const em = app.em();
  em.create(Membership, { team: team.id, user: user.id, role });
  await em.flush();
}

export type NoteOptions = { title?: string; slug?: string | null; isPrivate?: boolean; description?: string; forkedFrom?: Note };

export async function makeNote(app: TestApp, team: Team | string, creator: User, options: NoteOptions = {}): Promise<Note> {
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
    coverPageId: null,
  });
  await em.flush();
  return note;
}

/** Where a note's pages are in the API: `/api/v1/<team>/<slug, or id when it has none>`. */
export async function notePath(app: TestApp, note: Note): Promise<string> {
  const team = await app.em().findOneOrFail(Team, note.team.id);
  return `/api/v1/${team.name}/${note.slug ?? note.id}`;
}

// Pages and comments are written through the API with the author's own client rather than through
// pages.service/comments.service: the HTTP surface stays put while the services' signatures are reworked, and it
// writes versions, positions, the cover, mentions and notifications exactly as a real client would get them.
// Both throw when the API refuses, so a test never goes on with an object that was not made.

export type PageFields = { title: string; content?: string; parent?: number | undefined };

/** A page of `note` written by `author` (createPage), as the API answers it; content defaults to `<p>title</p>`. */
export async function makePage(app: TestApp, note: Note, author: Actor, fields: PageFields): Promise<PageView> {
  const path = `${await notePath(app, note)}/pages`;
  const page = { title: fields.title, content: fields.content ?? `<p>${fields.title}</p>`, ...(fields.parent ? { parent: fields.parent } : {}) };
  return made('makePage', path, await author.client.post<PageView>(path, { json: { page } }));
}

/** A comment by `author` on `page` (createPageComment), mentioning `mentions` by username, as the API answers it. */
export async function makePageComment(page: PageView, author: Actor, fields: { comment: string; mentions?: string[] }): Promise<CommentView> {
  const path = `/api/v1/${page.note.team.name}/${page.note.name}/${page.id}/comments`;
  const body = { comment: { comment: fields.comment }, ...(fields.mentions ? { mentions: fields.mentions } : {}) };
  return made('makePageComment', path, await author.client.post<CommentView>(path, { json: body }));
}

export type IssueFields = { title: string; description?: string; to_user?: string };

/** An issue of `note` created by `author` (createIssue), as the API answers it. */
export async function makeIssue(app: TestApp, note: Note, author: Actor, fields: IssueFields): Promise<IssueView> {
  const path = `${await notePath(app, note)}/issues`;
  return made('makeIssue', path, await author.client.post<IssueView>(path, { json: { issue: fields } }));
}

function made<T>(factory: string, path: string, answer: Answer<T>): T {
  if (answer.status !== 200) throw new Error(`${factory}: POST ${path} answered ${answer.status}: ${answer.text}`);
  return answer.body;
}

export function anonymous(app: TestApp): ApiClient {
  return new ApiClient(app.baseUrl);
}
