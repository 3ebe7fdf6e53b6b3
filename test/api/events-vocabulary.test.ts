// What streamEvents says about each kind of change (ChangeEvent): the type, the actor (and the app it came through),
// the team, and the ids, indexes and version numbers that apply to the type, never content. Driven through the API,
// read back through the JSON form (the same events a stream sends: events-stream.test.ts checks the framing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { readJsonEvents } from '../support/event-stream.ts';
import { makeNote, makePage, makeUser, uniqueName, type Actor } from '../support/factories.ts';
import { DEPLOY, forkedRunbook } from '../support/forks.ts';
import { MULTIPART, multipartBody } from '../support/multipart.ts';
import { makeClient } from '../support/oauth.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario;

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app);
});
afterAll(async () => app?.close());

const lastChangeId = async (): Promise<string> =>
  (await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id;

/** Runs `write` and answers every event the JSON form then has for `reader` after what was there before. */
async function eventsOf(reader: Actor, write: () => Promise<void>): Promise<any[]> {
  const since = await lastChangeId();
  await write();
  return (await readJsonEvents(reader.client, { since })).items;
}

async function ok(answer: Promise<{ status: number; text: string; body: any }>, status = 200) {
  const done = await answer;
  expect(done.status, done.text).toBe(status);
  return done.body;
}

const actorOf = (actor: Actor) => ({ id: actor.user.id, username: actor.user.username });

describe('streamEvents: the events of notes, pages, comments and issues', () => {
  it('carries the ids, versions and changed fields of each, the actor and the team, and no content', async () => {
    const { manager, member } = s;
    const team = { id: s.team.id, name: s.team.name };
    const base = `/api/v1/${s.team.name}/vocabulary`;
    let note: any, a: any, b: any, comment: any, issueComment: any, attachmentId = 0;
    const events = await eventsOf(manager, async () => {
      note = await ok(manager.client.post('/api/v1/notes', { json: { note: { title: 'Vocabulary', team: s.team.name, slug: 'vocabulary', description: 'SECRET-DESCRIPTION' } } }));
      await ok(manager.client.put(base, { json: { note: { title: 'Vocabulary, renamed', team: s.team.name } } }));
      a = await ok(manager.client.post(`${base}/pages`, { json: { page: { title: 'A', content: '<p>SECRET-A1</p>' } } }));
      b = await ok(manager.client.post(`${base}/pages`, { json: { page: { title: 'B', content: '<p>SECRET-B1</p>' } } }));
      await ok(member.client.put(`${base}/${a.id}`, { json: { page: { content: '<p>SECRET-A2</p>' } } }));
      await ok(member.client.put(`${base}/${a.id}`, { json: { page: { parent: b.id } } }));
      await ok(member.client.put(`${base}/${a.id}`, { json: { page: { parent: null, content: '<p>SECRET-A3</p>' } } }));
      await ok(member.client.post(`${base}/${a.id}/histories/1/restore`));
      comment = await ok(member.client.post(`${base}/${a.id}/comments`, { json: { comment: { comment: 'SECRET-COMMENT' } } }));
      await ok(member.client.post(`${base}/issues`, { json: { issue: { title: 'SECRET-ISSUE' } } }));
      await ok(member.client.patch(`${base}/issues/1`, { json: { issue: { title: 'SECRET-ISSUE-2' } } }));
      issueComment = await ok(manager.client.post(`${base}/issues/1/comments`, { json: { comment: { comment: 'SECRET-ISSUE-COMMENT' } } }));
      await ok(member.client.post(`${base}/comments`, { json: { comment: { comment: 'SECRET-NOTE-COMMENT' } } }));
      await ok(member.client.delete(`${base}/${a.id}/comments/${comment.id}`), 204);
      const uploaded = await ok(member.client.post(`${base}/attachments`, {
        raw: { body: multipartBody([{ name: 'file', filename: 'secret.txt', type: 'text/plain', data: 'SECRET-BYTES' }]), contentType: MULTIPART },
      }));
      attachmentId = Number(/\/attachments\/(\d+)$/.exec(uploaded.fileurl)![1]);
      await ok(member.client.delete(`${base}/attachments/${attachmentId}`), 204);
      await ok(manager.client.delete(`${base}/issues/1`), 204);
      await ok(manager.client.delete(`${base}/${b.id}`), 204);
    });
    const noteRef = { id: note.id, slug: 'vocabulary', html_url: `${app.baseUrl}/${s.team.name}/vocabulary` };
    const noteComment = events.find((event) => event.comment?.on === 'note');
    expect(events.map((event) => event.type)).toEqual([
      'note.created', 'note.updated', 'page.created', 'page.created', 'page.updated', 'page.moved', 'page.updated',
      'page.restored', 'comment.created', 'issue.created', 'issue.updated', 'comment.created', 'comment.created',
      'comment.deleted', 'attachment.created', 'attachment.deleted', 'issue.deleted', 'page.deleted',
    ]);
    const by = (actor: Actor) => ({ actor: actorOf(actor), team, note: noteRef });
    expect(events[0]).toEqual({ id: expect.any(Number), type: 'note.created', occurred_at: expect.any(String), ...by(manager) });
    expect(events[1]).toMatchObject({ ...by(manager), changed: ['title'] });
    expect(events[2]).toMatchObject({ ...by(manager), page: { id: a.id, version: 1 } });
    expect(events[3]).toMatchObject({ page: { id: b.id, version: 1 } });
    expect(events[4]).toMatchObject({ ...by(member), page: { id: a.id, version: 2 }, changed: ['content'] });
    // a move: the parent only; then the parent and the text at once, which is an update saying both
    expect(events[5]).toMatchObject({ ...by(member), page: { id: a.id } });
    expect(events[6]).toMatchObject({ page: { id: a.id, version: 3 }, changed: expect.arrayContaining(['parent', 'content']) });
    expect(events[7]).toMatchObject({ ...by(member), page: { id: a.id, version: 4 } });
    expect(events[8]).toMatchObject({ ...by(member), comment: { id: comment.id, on: 'page' }, page: { id: a.id } });
    expect(events[9]).toMatchObject({ ...by(member), issue: { index: 1 } });
    expect(events[10]).toMatchObject({ issue: { index: 1 }, changed: ['title'] });
    expect(events[11]).toMatchObject({ ...by(manager), comment: { id: issueComment.id, on: 'issue' }, issue: { index: 1 } });
    expect(events[12]).toMatchObject({ ...by(member), comment: { id: noteComment.comment.id, on: 'note' } });
    expect(events[12]).not.toHaveProperty('page');
    expect(events[12]).not.toHaveProperty('issue');
    expect(events[13]).toMatchObject({ type: 'comment.deleted', comment: { id: comment.id, on: 'page' }, page: { id: a.id } });
    expect(events[14]).toMatchObject({ ...by(member), attachment: { id: attachmentId } });
    expect(events[15]).toMatchObject({ attachment: { id: attachmentId } });
    expect(events[16]).toMatchObject({ ...by(manager), issue: { index: 1 } });
    expect(events[17]).toMatchObject({ ...by(manager), page: { id: b.id } });
    // the fields that do not apply to a type are left out
    expect(events[2]).not.toHaveProperty('changed');
    expect(events[0]).not.toHaveProperty('page');
    for (const event of events) {
      expect(event).not.toHaveProperty('via');
      expect(Date.parse(event.occurred_at)).toBeGreaterThan(Date.now() - 60_000);
    }
    // ids, names and numbers; never what was written
    expect(JSON.stringify(events)).not.toMatch(/SECRET/);
  });

  it('says so when a note is deleted, with the note as it was', async () => {
    const note = await makeNote(app, s.team, s.manager.user, { slug: 'short-lived', title: 'Short-lived' });
    const events = await eventsOf(s.manager, async () => {
      await ok(s.manager.client.delete(`/api/v1/${s.team.name}/short-lived`), 204);
    });
    expect(events).toEqual([{
      id: expect.any(Number), type: 'note.deleted', occurred_at: expect.any(String), actor: actorOf(s.manager),
      team: { id: s.team.id, name: s.team.name }, note: { id: note.id, slug: 'short-lived', html_url: `${app.baseUrl}/${s.team.name}/short-lived` },
    }]);
  });

  it('names the app a change came through in via', async () => {
    const client = await makeClient(app, { name: 'Event Test App' });
    const { token, secret } = await issueToken(app.em(), s.member.user, { scope: 'write' });
    await app.em().execute('update tokens set client_id = ? where id = ?', [client.rowId, token.id]);
    const note = await makeNote(app, s.team, s.manager.user, { slug: 'through-an-app' });
    const events = await eventsOf(s.member, async () => {
      await makePage(app, note, { ...s.member, token: secret, client: new ApiClient(app.baseUrl, secret) }, { title: 'By app' });
    });
    expect(events).toEqual([expect.objectContaining({ type: 'page.created', actor: actorOf(s.member), via: { client_id: client.clientId, name: 'Event Test App' } })]);
  });
});

describe('streamEvents: the events of teams', () => {
  it('member.added, member.changed (with the role) and member.removed; team.renamed with the new name', async () => {
    const other = await makeScenario(app);
    const newcomer = await makeUser(app, uniqueName('newcomer'));
    const teamPath = `/api/v1/teams/${other.team.name}`;
    const renamed = uniqueName('renamed');
    const events = await eventsOf(other.manager, async () => {
      await ok(other.manager.client.post(`${teamPath}/users`, { json: { username: newcomer.user.username } }));
      await ok(other.manager.client.post(`${teamPath}/users`, { json: { username: newcomer.user.username, role: 'manager' } }));
      await ok(other.manager.client.delete(`${teamPath}/users/${newcomer.user.id}`));
      await ok(other.manager.client.put(teamPath, { json: { team: { name: renamed } } }));
    });
    const base = { actor: actorOf(other.manager), team: { id: other.team.id, name: renamed } };
    expect(events).toEqual([
      { id: expect.any(Number), occurred_at: expect.any(String), type: 'member.added', ...base, member: { id: newcomer.user.id, role: 'member' } },
      { id: expect.any(Number), occurred_at: expect.any(String), type: 'member.changed', ...base, member: { id: newcomer.user.id, role: 'manager' } },
      { id: expect.any(Number), occurred_at: expect.any(String), type: 'member.removed', ...base, member: { id: newcomer.user.id } },
      { id: expect.any(Number), occurred_at: expect.any(String), type: 'team.renamed', ...base },
    ]);
  });
});

describe('streamEvents: the events of forks and requests', () => {
  it('fork.created and fork.pulled name the original; request.* name the request and the fork it comes from', async () => {
    let runbook: Awaited<ReturnType<typeof forkedRunbook>> | undefined;
    const forkEvents = await eventsOf(s.outsider, async () => {
      runbook = await forkedRunbook(app, s);
    });
    const r = runbook!;
    const fork = forkEvents.find((event) => event.type === 'fork.created');
    expect(fork).toMatchObject({ actor: actorOf(s.outsider), note: { id: r.fork.id }, original_note: { id: r.note.id }, team: { name: r.fork.team.name } });
    let index = 0;
    const events = await eventsOf(s.outsider, async () => {
      await r.editUpstream(r.other.id, '<p>SECRET upstream</p>');
      await ok(s.outsider.client.post(`${r.forkPath}/pull`));
      const version = await r.editFork(r.forkDeploy, DEPLOY.replace('clean checkout', 'SECRET release'));
      index = (await r.request([version])).index;
      await ok(s.manager.client.put(`${r.upstreamPath}/requests/${index}/close`));
      await ok(s.outsider.client.put(`${r.upstreamPath}/requests/${index}/open`));
      await ok(s.manager.client.put(`${r.upstreamPath}/requests/${index}/merge`));
    });
    const kinds = events.filter((event) => event.type.startsWith('fork.') || event.type.startsWith('request.'));
    expect(kinds.map((event) => event.type)).toEqual(['fork.pulled', 'request.created', 'request.closed', 'request.opened', 'request.merged']);
    expect(kinds[0]).toMatchObject({ actor: actorOf(s.outsider), note: { id: r.fork.id }, original_note: { id: r.note.id } });
    for (const event of kinds.slice(1)) {
      expect(event).toMatchObject({ note: { id: r.note.id }, request: { index }, from_note: { id: r.fork.id }, team: { id: s.team.id } });
    }
    expect(kinds.slice(1).map((event) => event.actor.id)).toEqual([s.outsider, s.manager, s.outsider, s.manager].map((actor) => actor.user.id));
    expect(JSON.stringify(events)).not.toMatch(/SECRET/);
  });
});
