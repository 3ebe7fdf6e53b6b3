import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Membership, Team } from '../../src/modules/teams/team.entity.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makeTeam, makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let manager: Actor;
let member: Actor;
let outsider: Actor;
let reader: Actor;

beforeAll(async () => {
  app = await startTestApp();
  manager = await makeUser(app, 'manny');
  member = await makeUser(app, 'mem');
  outsider = await makeUser(app, 'otto');
  reader = await makeUser(app, 'rita', { scope: 'read' });
});
afterAll(async () => app?.close());

async function membershipsOf(teamName: string) {
  const em = app.em();
  const team = await em.findOneOrFail(Team, { name: teamName });
  const rows = await em.find(Membership, { team: team.id }, { populate: ['user'] });
  return Object.fromEntries(rows.map((row) => [row.user.username, row.role]));
}

describe('listTeams', () => {
  it('lists the teams the caller belongs to, default team included, with the caller\'s role', async () => {
    await makeTeam(app, 'listed', [{ user: manager.user, role: 'member' }]);
    const answer = await manager.client.get('/api/v1/teams');
    expect(answer.status).toBe(200);
    const byName = Object.fromEntries(answer.body.map((team: { name: string }) => [team.name, team]));
    expect(byName.manny).toMatchObject({ is_default: true, role: 'manager', plan: 'free', model: 'team' });
    expect(byName.manny.managers.map((user: { username: string }) => user.username)).toEqual(['manny']);
    expect(byName.listed).toMatchObject({ is_default: false, role: 'member' });
    expect(answer.headers.get('x-total-count')).toBe('2');
  });

  it('answers 401 without a token', async () => {
    expect((await anonymous(app).get('/api/v1/teams')).status).toBe(401);
  });
});

describe('getTeam', () => {
  it('shows a team with managers and members; role is absent for someone outside it', async () => {
    await makeTeam(app, 'showme', [{ user: manager.user, role: 'manager' }, { user: member.user, role: 'member' }]);
    const inside = await member.client.get('/api/v1/teams/showme');
    expect(inside.status).toBe(200);
    expect(inside.body.role).toBe('member');
    expect(inside.body.managers.map((user: { id: number }) => user.id)).toEqual([manager.user.id]);
    expect(inside.body.members.map((user: { id: number }) => user.id)).toEqual([member.user.id]);
    const outside = await outsider.client.get('/api/v1/teams/SHOWME.json');
    expect(outside.status).toBe(200);
    expect(outside.body).not.toHaveProperty('role');
    const html = await outsider.client.get(outside.body.html_url.replace(app.baseUrl, ''));
    expect(html.status).toBe(200);
  });

  it('answers 404 for an unknown team and 401 without a token', async () => {
    expect((await member.client.get('/api/v1/teams/no-such-team')).status).toBe(404);
    expect((await anonymous(app).get('/api/v1/teams/showme')).status).toBe(401);
  });
});

describe('listTeamNotes', () => {
  it('shows members every note and others only the notes that are not private', async () => {
    const team = await makeTeam(app, 'notey', [{ user: manager.user, role: 'manager' }]);
    const open = await makeNote(app, team, manager.user, { title: 'open' });
    const closed = await makeNote(app, team, manager.user, { title: 'closed', isPrivate: true });
    const mine = await manager.client.get('/api/v1/teams/notey/notes');
    expect(mine.status).toBe(200);
    expect(mine.body.map((note: { id: number }) => note.id)).toEqual([closed.id, open.id]); // most recent first
    const theirs = await outsider.client.get('/api/v1/teams/notey/notes');
    expect(theirs.body.map((note: { id: number }) => note.id)).toEqual([open.id]);
  });

  it('answers 404 for an unknown team and 401 without a token', async () => {
    expect((await manager.client.get('/api/v1/teams/nope-nope/notes')).status).toBe(404);
    expect((await anonymous(app).get('/api/v1/teams/notey/notes')).status).toBe(401);
  });
});

describe('createTeam', () => {
  it('creates a team with the caller as manager, not default, plan free', async () => {
    const answer = await member.client.post('/api/v1/teams', { json: { team: { name: 'Fresh_Team' } } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ name: 'Fresh_Team', is_default: false, plan: 'free', role: 'manager', members: [] });
    expect(answer.body.managers.map((user: { id: number }) => user.id)).toEqual([member.user.id]);
    expect(await membershipsOf('Fresh_Team')).toEqual({ mem: 'manager' });
  });

  it('accepts a legacy form body', async () => {
    const answer = await member.client.post('/api/v1/teams.json', { form: 'team%5Bname%5D=form-team&utf8=%E2%9C%93' });
    expect(answer.status).toBe(200);
    expect(answer.body.name).toBe('form-team');
  });

  it('answers 409 for a name taken by a team or a user, in any case', async () => {
    expect((await member.client.post('/api/v1/teams', { json: { team: { name: 'fresh_team' } } })).body.code).toBe('name_taken');
    const userName = await member.client.post('/api/v1/teams', { json: { team: { name: 'OTTO' } } });
    expect(userName.status).toBe(409);
  });

  it('answers 422 for reserved and invalid names, and creates nothing', async () => {
    for (const name of ['notes', 'Teams', 'api', '-dash-first', 'has space', 'x'.repeat(40), '', 'dot.name']) {
      const answer = await member.client.post('/api/v1/teams', { json: { team: { name } } });
      expect(answer.status, name).toBe(422);
      expect(answer.body.errors[0].pointer).toBe('/team/name');
    }
    expect(await app.em().count(Team, { name: 'api' })).toBe(0);
  });

  it('answers 400 when team[name] is missing or the body is not an object', async () => {
    expect((await member.client.post('/api/v1/teams', { json: { team: {} } })).status).toBe(400);
    expect((await member.client.post('/api/v1/teams', { json: {} })).status).toBe(400);
    expect((await member.client.post('/api/v1/teams', { raw: { body: '{"team":', contentType: 'application/json' } })).status).toBe(400);
  });

  it('answers 403 to a read-only token and 401 without a token', async () => {
    const readOnly = await reader.client.post('/api/v1/teams', { json: { team: { name: 'by-reader' } } });
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.code).toBe('insufficient_scope');
    expect((await anonymous(app).post('/api/v1/teams', { json: { team: { name: 'by-nobody' } } })).status).toBe(401);
    expect(await app.em().count(Team, { name: { $in: ['by-reader', 'by-nobody'] } })).toBe(0);
  });
});

describe('updateTeam', () => {
  it('renames the team (PUT and PATCH alike)', async () => {
    await makeTeam(app, 'old-name', [{ user: manager.user, role: 'manager' }]);
    const put = await manager.client.put('/api/v1/teams/old-name', { json: { team: { name: 'mid-name' } } });
    expect(put.status).toBe(200);
    expect(put.body.name).toBe('mid-name');
    const patch = await manager.client.patch('/api/v1/teams/mid-name', { form: { 'team[name]': 'new-name' } });
    expect(patch.status).toBe(200);
    expect(await app.em().count(Team, { name: 'new-name' })).toBe(1);
  });

  it('answers 403 to a member, 404 for an unknown team, 409 for a taken name, 422 for a reserved one', async () => {
    await makeTeam(app, 'guarded', [{ user: manager.user, role: 'manager' }, { user: member.user, role: 'member' }]);
    expect((await member.client.put('/api/v1/teams/guarded', { json: { team: { name: 'mine-now' } } })).status).toBe(403);
    expect((await manager.client.put('/api/v1/teams/ghost-team', { json: { team: { name: 'x1' } } })).status).toBe(404);
    expect((await manager.client.put('/api/v1/teams/guarded', { json: { team: { name: 'mem' } } })).status).toBe(409);
    expect((await manager.client.put('/api/v1/teams/guarded', { json: { team: { name: 'search' } } })).status).toBe(422);
    expect((await anonymous(app).put('/api/v1/teams/guarded', { json: { team: { name: 'x2' } } })).status).toBe(401);
    expect(await app.em().count(Team, { name: 'guarded' })).toBe(1);
  });

  it('keeps a default team named after its user', async () => {
    const answer = await manager.client.put('/api/v1/teams/manny', { json: { team: { name: 'manny2' } } });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('default_team');
  });
});

describe('deleteTeam', () => {
  it('deletes the team and its notes', async () => {
    const team = await makeTeam(app, 'doomed', [{ user: manager.user, role: 'manager' }]);
    const note = await makeNote(app, team, manager.user);
    const answer = await manager.client.delete('/api/v1/teams/doomed');
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(await app.em().count(Team, { id: team.id })).toBe(0);
    expect(await app.em().count(Note, { id: note.id })).toBe(0);
  });

  it('answers 403 to a member, 404 for an unknown team, 422 for a default team', async () => {
    await makeTeam(app, 'survivor', [{ user: manager.user, role: 'manager' }, { user: member.user, role: 'member' }]);
    expect((await member.client.delete('/api/v1/teams/survivor')).status).toBe(403);
    expect((await manager.client.delete('/api/v1/teams/ghost-team')).status).toBe(404);
    expect((await manager.client.delete('/api/v1/teams/manny')).status).toBe(422);
    expect((await anonymous(app).delete('/api/v1/teams/survivor')).status).toBe(401);
    expect(await app.em().count(Team, { name: 'survivor' })).toBe(1);
  });
});

describe('addTeamUser', () => {
  it('adds a user as member by default, as manager when asked, and changes an existing role', async () => {
    await makeTeam(app, 'growing', [{ user: manager.user, role: 'manager' }]);
    const added = await manager.client.post('/api/v1/teams/growing/users', { form: { username: 'mem' } });
    expect(added.status).toBe(200);
    expect(added.body.members.map((user: { username: string }) => user.username)).toEqual(['mem']);
    const promoted = await manager.client.post('/api/v1/teams/growing/users', { json: { username: 'otto', role: 'manager' } });
    expect(promoted.body.managers.map((user: { username: string }) => user.username)).toEqual(['manny', 'otto']);
    await manager.client.post('/api/v1/teams/growing/users', { json: { username: 'mem', role: 'manager' } });
    expect(await membershipsOf('growing')).toEqual({ manny: 'manager', mem: 'manager', otto: 'manager' });
  });

  it('answers 409 when demoting the last manager, and changes nothing', async () => {
    await makeTeam(app, 'solo', [{ user: manager.user, role: 'manager' }]);
    const answer = await manager.client.post('/api/v1/teams/solo/users', { json: { username: 'manny', role: 'member' } });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('last_manager');
    expect(await membershipsOf('solo')).toEqual({ manny: 'manager' });
  });

  it('answers 403 to a member, 404 for an unknown team, 422 for an unknown user, 400 for a bad role', async () => {
    await makeTeam(app, 'closed-club', [{ user: manager.user, role: 'manager' }, { user: member.user, role: 'member' }]);
    expect((await member.client.post('/api/v1/teams/closed-club/users', { json: { username: 'otto' } })).status).toBe(403);
    expect((await manager.client.post('/api/v1/teams/ghost-team/users', { json: { username: 'otto' } })).status).toBe(404);
    expect((await manager.client.post('/api/v1/teams/closed-club/users', { json: { username: 'nobody-at-all' } })).status).toBe(422);
    expect((await manager.client.post('/api/v1/teams/closed-club/users', { json: { username: 'otto', role: 'owner' } })).status).toBe(400);
    expect((await manager.client.post('/api/v1/teams/closed-club/users', { json: {} })).status).toBe(400);
    expect((await anonymous(app).post('/api/v1/teams/closed-club/users', { json: { username: 'otto' } })).status).toBe(401);
    expect(await membershipsOf('closed-club')).toEqual({ manny: 'manager', mem: 'member' });
  });
});

describe('removeTeamUser', () => {
  it('removes a user by id and answers the team without them', async () => {
    await makeTeam(app, 'shrinking', [{ user: manager.user, role: 'manager' }, { user: member.user, role: 'member' }]);
    const answer = await manager.client.delete(`/api/v1/teams/shrinking/users/${member.user.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.members).toEqual([]);
    expect(await membershipsOf('shrinking')).toEqual({ manny: 'manager' });
  });

  it('lets a member leave, but not remove others', async () => {
    await makeTeam(app, 'leavable', [{ user: manager.user, role: 'manager' }, { user: member.user, role: 'member' }, { user: outsider.user, role: 'member' }]);
    expect((await member.client.delete(`/api/v1/teams/leavable/users/${outsider.user.id}`)).status).toBe(403);
    expect((await member.client.delete(`/api/v1/teams/leavable/users/${member.user.id}`)).status).toBe(200);
    expect(await membershipsOf('leavable')).toEqual({ manny: 'manager', otto: 'member' });
  });

  it('answers 409 for the last manager and 404 for someone not in the team', async () => {
    await makeTeam(app, 'anchored', [{ user: manager.user, role: 'manager' }, { user: member.user, role: 'member' }]);
    const last = await manager.client.delete(`/api/v1/teams/anchored/users/${manager.user.id}`);
    expect(last.status).toBe(409);
    expect(last.body.code).toBe('last_manager');
    expect((await manager.client.delete(`/api/v1/teams/anchored/users/${outsider.user.id}`)).status).toBe(404);
    expect((await manager.client.delete('/api/v1/teams/anchored/users/abc')).status).toBe(404);
    expect((await anonymous(app).delete(`/api/v1/teams/anchored/users/${member.user.id}`)).status).toBe(401);
    expect(await membershipsOf('anchored')).toEqual({ manny: 'manager', mem: 'member' });
  });

  it('keeps the last manager under concurrent demotions', async () => {
    await makeTeam(app, 'racing', [{ user: manager.user, role: 'manager' }, { user: outsider.user, role: 'manager' }]);
    const answers = await Promise.all([
      manager.client.delete(`/api/v1/teams/racing/users/${outsider.user.id}`),
      outsider.client.delete(`/api/v1/teams/racing/users/${manager.user.id}`),
    ]);
    // one removal wins; the other finds its target the last manager (409), or, when it starts after the winner
    // committed, finds its own caller no longer in the team (403): either way the team keeps one manager
    const [won, lost] = answers.map((answer) => answer.status).sort();
    expect(won).toBe(200);
    expect([403, 409]).toContain(lost);
    expect(Object.values(await membershipsOf('racing'))).toEqual(['manager']);
  });
});
