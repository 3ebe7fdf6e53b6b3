// The cast most API tests start from: a team with a manager and a member, a member whose token may only read, and
// someone signed in who is not in the team; optionally notes of that team, made by the manager.
//
// Every test file has a database of its own (see database.ts), so names only have to be unique within a file. The
// defaults are (uniqueName); a file whose expectations spell a username or team name passes its own.
import type { Note } from '../../src/modules/notes/note.entity.ts';
import type { Team } from '../../src/modules/teams/team.entity.ts';
import type { TestApp } from './app.ts';
import { makeNote, makeTeam, makeUser, uniqueName, type Actor, type NoteOptions } from './factories.ts';

export type ScenarioRole = 'manager' | 'member' | 'outsider' | 'reader';

export type ScenarioOptions<NoteKey extends string> = {
  /** The team's name. */
  team?: string;
  usernames?: Partial<Record<ScenarioRole, string>>;
  /** Notes of the team by key, e.g. `{ open: {}, closed: { isPrivate: true } }`; each gets a unique slug and its key as title unless given. */
  notes?: Record<NoteKey, NoteOptions>;
};

export type Scenario<NoteKey extends string = never> = Record<ScenarioRole, Actor> & { team: Team; notes: Record<NoteKey, Note> };

export async function makeScenario<NoteKey extends string = never>(app: TestApp, options: ScenarioOptions<NoteKey> = {}): Promise<Scenario<NoteKey>> {
  const username = (role: ScenarioRole) => options.usernames?.[role] ?? uniqueName(role);
  // one after the other, so that user ids follow the roles' order and expectations sorted by id stay stable
  const manager = await makeUser(app, username('manager'));
  const member = await makeUser(app, username('member'));
  const outsider = await makeUser(app, username('outsider'));
  const reader = await makeUser(app, username('reader'), { scope: 'read' });
  const team = await makeTeam(app, options.team ?? uniqueName('team'), [
    { user: manager.user, role: 'manager' },
    { user: member.user, role: 'member' },
    { user: reader.user, role: 'member' },
  ]);
  const notes = {} as Record<NoteKey, Note>;
  for (const [key, noteOptions] of Object.entries<NoteOptions>(options.notes ?? ({} as Record<NoteKey, NoteOptions>))) {
    notes[key as NoteKey] = await makeNote(app, team, manager.user, { title: key, slug: uniqueName('note'), ...noteOptions });
  }
  return { team, manager, member, outsider, reader, notes };
}
