// streamEvents' filters: `team` (by name), `note` (`team/note`) and `types` (comma-separated), alone and together,
// in the JSON form and on a live stream; each answer checked against the stored change log. The filters narrow what
// the caller may see, never widen it: an outsider filtering on a team gets its public notes' events only.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Team } from '../../src/modules/teams/team.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { openEventStream, readJsonEvents, type EventStream } from '../support/event-stream.ts';
import { makeIssue, makeNote, makePage, makeTeam, makeUser, notePath, uniqueName, type Actor } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import type { Note } from '../../src/modules/notes/note.entity.ts';

let app: TestApp;
let s: Scenario<'open' | 'closed'>;
let elsewhere: Team;
let other: Note;
let joiner: Actor;

type Row = { id: number; type: string; team_id: number; note_id: number | null };
let before: number;
/** What was written in beforeAll, from the change log: every row after `before`. */
let written: Row[];
/** The ids of the stored rows that match `keep`, in id order. */
const idsOf = (keep: (row: Row) => boolean) => written.filter(keep).map((row) => row.id);

beforeAll(async () => {
  app = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1' });
  s = await makeScenario(app, { notes: { open: {}, closed: { isPrivate: true } } });
  elsewhere = await makeTeam(app, `${s.team.name}-two`, [{ user: s.manager.user, role: 'manager' }, { user: s.member.user, role: 'member' }]);
  other = await makeNote(app, elsewhere, s.manager.user, { slug: 'other' });
  joiner = await makeUser(app, uniqueName('joiner'));
  before = await lastChangeId();
  const open = await makePage(app, s.notes.open, s.member, { title: 'Open page' });
  expect((await s.member.client.put(`${await notePath(app, s.notes.open)}/${open.id}`, { json: { page: { content: '<p>edited</p>' } } })).status).toBe(200);
  await makeIssue(app, s.notes.open, s.member, { title: 'An issue' });
  await makePage(app, s.notes.closed, s.manager, { title: 'Closed page' });
  await makePage(app, other, s.manager, { title: 'Elsewhere page' });
  expect((await s.manager.client.post(`/api/v1/teams/${s.team.name}/users`, { json: { username: joiner.user.username } })).status).toBe(200);
  written = (await app.em().execute<{ id: string; type: string; team_id: number; note_id: number | null }[]>(
    'select id::text as id, type, team_id, note_id from changes where id > ? order by changes.id', [before],
  )).map((row) => ({ ...row, id: Number(row.id) }));
  expect(written.map((row) => row.type)).toEqual(['page.created', 'page.updated', 'issue.created', 'page.created', 'page.created', 'member.added']);
});
const streams: EventStream[] = [];
// each test's streams are closed after it: a token may hold only five open
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()));
});
afterAll(async () => {
  await Promise.all(streams.map((stream) => stream.close()));
  await app?.close();
});

async function lastChangeId(): Promise<number> {
  return Number((await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id);
}

/** The ids the JSON form answers `actor` for the filter, read to the end from `before`. */
async function filtered(actor: Actor, query: Record<string, string>): Promise<number[]> {
  return (await readJsonEvents(actor.client, { since: String(before), ...query })).items.map((event) => event.id);
}

describe('streamEvents: filters (JSON form)', () => {
  it('without a filter: every change the member may see, in id order', async () => {
    expect(await filtered(s.member, {})).toEqual(idsOf(() => true));
  });

  it('team: only that team\'s changes, its members\' included', async () => {
    expect(await filtered(s.member, { team: s.team.name })).toEqual(idsOf((row) => row.team_id === s.team.id));
    expect(await filtered(s.member, { team: elsewhere.name })).toEqual(idsOf((row) => row.team_id === elsewhere.id));
    expect(idsOf((row) => row.team_id === elsewhere.id)).toHaveLength(1);
  });

  it('note: only that note\'s changes, a private one for a member of its team', async () => {
    expect(await filtered(s.member, { note: `${s.team.name}/${s.notes.open.slug}` })).toEqual(idsOf((row) => row.note_id === s.notes.open.id));
    expect(await filtered(s.member, { note: `${s.team.name}/${s.notes.open.slug}` })).toHaveLength(3);
    expect(await filtered(s.reader, { note: `${s.team.name}/${s.notes.closed.slug}` })).toEqual(idsOf((row) => row.note_id === s.notes.closed.id));
  });

  it('types: only those types', async () => {
    expect(await filtered(s.member, { types: 'page.updated,issue.created' })).toEqual(idsOf((row) => ['page.updated', 'issue.created'].includes(row.type)));
    expect(await filtered(s.member, { types: 'member.added' })).toEqual(idsOf((row) => row.type === 'member.added'));
    expect(await filtered(s.member, { types: 'fork.created' })).toEqual([]);
  });

  it('together: every filter applies', async () => {
    expect(await filtered(s.member, { note: `${s.team.name}/${s.notes.open.slug}`, types: 'issue.created' }))
      .toEqual(idsOf((row) => row.note_id === s.notes.open.id && row.type === 'issue.created'));
    expect(await filtered(s.member, { team: s.team.name, types: 'page.created' }))
      .toEqual(idsOf((row) => row.team_id === s.team.id && row.type === 'page.created'));
    expect(await filtered(s.member, { team: elsewhere.name, types: 'issue.created' })).toEqual([]);
  });

  it('narrows, never widens: an outsider filtering on the team gets its public note\'s changes only', async () => {
    expect(await filtered(s.outsider, { team: s.team.name })).toEqual(idsOf((row) => row.note_id === s.notes.open.id));
    expect(await filtered(s.outsider, {})).toEqual(idsOf((row) => row.note_id === s.notes.open.id || row.note_id === other.id));
    expect(await filtered(s.outsider, { note: `${s.team.name}/${s.notes.open.slug}` })).toEqual(idsOf((row) => row.note_id === s.notes.open.id));
  });

  it('the member a team change is about gets it, filtered on that team too', async () => {
    const memberAdded = idsOf((row) => row.type === 'member.added');
    expect(await filtered(joiner, { team: s.team.name, types: 'member.added' })).toEqual(memberAdded);
  });
});

describe('streamEvents: filters on a live stream', () => {
  it('delivers only what matches: note and types together', async () => {
    const start = await lastChangeId();
    const stream = await openEventStream(app.baseUrl, {
      token: s.member.token, query: { since: String(start), note: `${s.team.name}/${s.notes.open.slug}`, types: 'page.updated' },
    });
    streams.push(stream);
    expect(stream.status).toBe(200);
    // first what the filter leaves out (other notes, other types), then one change it keeps
    const page = await makePage(app, s.notes.open, s.member, { title: 'Filtered' });
    await makePage(app, other, s.manager, { title: 'Elsewhere again' });
    const closed = await makePage(app, s.notes.closed, s.manager, { title: 'Closed again' });
    expect((await s.manager.client.put(`${await notePath(app, s.notes.closed)}/${closed.id}`, { json: { page: { content: '<p>2</p>' } } })).status).toBe(200);
    expect((await s.member.client.put(`${await notePath(app, s.notes.open)}/${page.id}`, { json: { page: { content: '<p>kept</p>' } } })).status).toBe(200);
    const kept = await stream.waitForChange((change) => change.type === 'page.updated' && change.page.id === page.id, 5000);
    expect(kept).toMatchObject({ note: { id: s.notes.open.id }, page: { id: page.id, version: 2 }, changed: ['content'] });
    // ids increase on a stream: anything left out would have come before it
    expect(stream.changes).toEqual([kept]);
    await stream.close();
  });

  it('delivers only the team\'s changes with team', async () => {
    const start = await lastChangeId();
    const stream = await openEventStream(app.baseUrl, { token: s.member.token, query: { since: String(start), team: elsewhere.name } });
    streams.push(stream);
    await makePage(app, s.notes.open, s.member, { title: 'Not this team' });
    const page = await makePage(app, other, s.member, { title: 'This team' });
    const kept = await stream.waitForChange((change) => change.page?.id === page.id, 5000);
    expect(kept).toMatchObject({ type: 'page.created', team: { id: elsewhere.id, name: elsewhere.name }, note: { id: other.id } });
    expect(stream.changes).toEqual([kept]);
    await stream.close();
  });
});
