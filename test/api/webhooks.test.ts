// The webhook operations (issue 12): the whole matrix (stored rows, 401, 403 for everyone but managers, 404, 400,
// 409, 422), legacy form bodies, the secret shown once, the SSRF guard at registration, and the outbox rows the
// changes write in their own transaction (no worker runs in this file): each message is the change stream's
// ChangeEvent plus the earlier `timestamp` and `data`, in its vocabulary (`member.*`, once `membership.*`; `page.moved`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from '../../src/modules/webhooks/webhook.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { anonymous, makeNote, makePage, makeTeam, makeUser, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';
import { documentSchema } from '../support/document-schemas.ts';

let app: TestApp;
let manager: Actor, member: Actor, outsider: Actor, reader: Actor;
let otherTeamHook: number;
let teamId: number;
const BASE = '/api/v1/teams/hooked/webhooks';
const PUBLIC_URL = 'https://203.0.113.10/notes-hook';

beforeAll(async () => {
  // the address guard is on (the default): public addresses are IP literals, so no DNS is needed
  app = await startTestApp({}, { countQueries: true });
  const cast = await makeScenario(app, { team: 'hooked' });
  ({ manager, member, outsider, reader } = cast);
  teamId = cast.team.id;
  const stranger = await makeUser(app);
  await makeTeam(app, 'elsewhere', [{ user: stranger.user, role: 'manager' }]);
  otherTeamHook = (await stranger.client.post('/api/v1/teams/elsewhere/webhooks', { json: { webhook: { url: PUBLIC_URL } } })).body.id;
});
afterAll(async () => app?.close());

/** The document's ChangeEvent: what the change stream sends, and a webhook message less `timestamp` and `data`. */
const isChangeEvent = documentSchema('ChangeEvent');

const stored = (id: number) => app.em().findOne(Webhook, id, { populate: ['secret'] });
// the outbox is a projection of the change log: what the tests wrote is projected first, as the server's worker does
const outbox = async (webhookId: number) =>
  (await app.settle(), app.em()).execute<{ event_type: string; payload: string; message_id: string; attempts: number }[]>('select event_type, payload, message_id, attempts from webhook_outbox where webhook_id = ? order by id', [webhookId]);
const register = async (webhook: Record<string, unknown>, path = BASE) => {
  const answer = await manager.client.post(path, { json: { webhook } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
};

describe('createWebhook', () => {
  it('stores the webhook, makes a secret and shows it once', async () => {
    const answer = await manager.client.post(BASE, { json: { webhook: { url: PUBLIC_URL, events: ['page.updated', 'comment.created', 'page.updated'] } } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ model: 'webhook', url: PUBLIC_URL, events: ['comment.created', 'page.updated'], active: true, disabled_reason: null, consecutive_failures: 0 });
    expect(answer.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(answer.body.secret.slice(6), 'base64')).toHaveLength(32);
    const row = await stored(answer.body.id);
    expect([row?.team.id, row?.url, row?.secret, row?.events, row?.createdBy?.id]).toEqual([teamId, PUBLIC_URL, answer.body.secret, ['comment.created', 'page.updated'], manager.user.id]);
    // never shown again
    const read = await manager.client.get(`${BASE}/${answer.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    const { secret: _secret, ...rest } = answer.body;
    expect(read.body).toEqual(rest);
  });

  it('takes a legacy form body, a given secret, and * or no kinds for every kind', async () => {
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    const answer = await manager.client.post(BASE, { form: { 'webhook[url]': 'http://203.0.113.11:8080/in', 'webhook[secret]': secret, 'webhook[events][]': '*', utf8: '✓' } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ url: 'http://203.0.113.11:8080/in', events: [], secret });
    expect((await stored(answer.body.id))?.secret).toBe(secret);
    const bare = await manager.client.post(BASE, { form: { 'webhook[url]': PUBLIC_URL, 'webhook[active]': '0' } });
    expect(bare.status, JSON.stringify(bare.body)).toBe(200);
    expect(bare.body).toMatchObject({ events: [], active: false });
  });

  it('answers 401 without a token, 403 to members, outsiders and read tokens, 404 for an unknown team', async () => {
    const before = await app.em().count(Webhook, {});
    expect((await anonymous(app).post(BASE, { json: { webhook: { url: PUBLIC_URL } } })).status).toBe(401);
    for (const actor of [member, outsider]) {
      const answer = await actor.client.post(BASE, { json: { webhook: { url: PUBLIC_URL } } });
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('forbidden');
    }
    expect((await reader.client.post(BASE, { json: { webhook: { url: PUBLIC_URL } } })).body.code).toBe('insufficient_scope');
    expect((await manager.client.post('/api/v1/teams/nosuchteam/webhooks', { json: { webhook: { url: PUBLIC_URL } } })).status).toBe(404);
    expect(await app.em().count(Webhook, {})).toBe(before);
  });

  it('answers 400 for a missing URL, a malformed secret or an unknown field', async () => {
    const before = await app.em().count(Webhook, {});
    for (const webhook of [{ events: ['page.updated'] }, { url: PUBLIC_URL, secret: 'hunter2' }, { url: PUBLIC_URL, secret: `whsec_${Buffer.alloc(8).toString('base64')}xxxxxxxxxxxxxxxxxxxxxxxx` }, { url: PUBLIC_URL, colour: 'red' }, { url: PUBLIC_URL, active: 'maybe' }, { url: PUBLIC_URL, events: [{ kind: 'page.updated' }] }]) {
      const answer = await manager.client.post(BASE, { json: { webhook } });
      expect(answer.status, JSON.stringify(webhook)).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
    }
    expect((await manager.client.post(BASE, { json: {} })).status).toBe(400);
    expect(await app.em().count(Webhook, {})).toBe(before);
  });

  it('answers 422 unknown_event for a kind that does not exist', async () => {
    const answer = await manager.client.post(BASE, { json: { webhook: { url: PUBLIC_URL, events: ['page.updated', 'page.exploded', 'team.created'] } } });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('unknown_event');
    expect(answer.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/webhook/events/1', '/webhook/events/2']);
  });

  it('refuses URLs that are not http(s), carry credentials, or reach loopback, private, link-local or metadata addresses', async () => {
    const before = await app.em().count(Webhook, {});
    for (const url of [
      'http://127.0.0.1/hook', 'http://127.1.2.3:3000/', 'http://10.0.0.5/hook', 'http://172.16.4.1/', 'http://192.168.1.1/', 'http://100.64.0.1/',
      'http://169.254.169.254/latest/meta-data/', 'http://[::1]/hook', 'http://[::ffff:127.0.0.1]/', 'http://[fd00:ec2::254]/', 'http://[fe80::1]/',
      'http://0.0.0.0/', 'http://localhost/hook', 'ftp://203.0.113.10/', 'file:///etc/passwd', 'https://user:pass@203.0.113.10/', 'not a url',
      'http://no-such-host.invalid/',
    ]) {
      const answer = await manager.client.post(BASE, { json: { webhook: { url } } });
      expect(answer.status, url).toBe(422);
      expect(answer.body.code, url).toBe('invalid_webhook_url');
      expect(answer.body.errors[0].pointer).toBe('/webhook/url');
    }
    expect(await app.em().count(Webhook, {})).toBe(before);
  });

  it('answers 409 past 20 webhooks in a team', async () => {
    const team = await makeTeam(app, 'crowded', [{ user: manager.user, role: 'manager' }]);
    for (let i = 0; i < 20; i += 1) expect((await manager.client.post('/api/v1/teams/crowded/webhooks', { json: { webhook: { url: `${PUBLIC_URL}/${i}` } } })).status).toBe(200);
    const answer = await manager.client.post('/api/v1/teams/crowded/webhooks', { json: { webhook: { url: PUBLIC_URL } } });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('already_exists');
    expect(await app.em().count(Webhook, { team: team.id })).toBe(20);
  });
});

describe('listWebhooks and getWebhook', () => {
  it('lists the team webhooks without secrets, in a fixed number of statements, to managers only', async () => {
    await register({ url: PUBLIC_URL });
    const count = async () => app.countQueries(async () => expect((await manager.client.get(BASE)).status).toBe(200));
    const small = await count();
    await register({ url: PUBLIC_URL });
    await register({ url: PUBLIC_URL });
    expect(await count()).toBe(small);
    const answer = await manager.client.get(BASE);
    expect(answer.headers.get('x-total-count')).toBe(String(answer.body.length));
    expect(answer.body.every((webhook: Record<string, unknown>) => !('secret' in webhook))).toBe(true);
    expect(answer.body.map((webhook: { id: number }) => webhook.id)).not.toContain(otherTeamHook);
    expect((await anonymous(app).get(BASE)).status).toBe(401);
    for (const actor of [member, outsider, reader]) expect((await actor.client.get(BASE)).status).toBe(403);
    expect((await manager.client.get('/api/v1/teams/nosuchteam/webhooks')).status).toBe(404);
  });

  it('gets one webhook; 404 for another team’s or an unknown id, 403 to members', async () => {
    const { id } = await register({ url: PUBLIC_URL, events: ['note.created'] });
    expect((await manager.client.get(`${BASE}/${id}`)).body).toMatchObject({ id, events: ['note.created'] });
    expect((await manager.client.get(`${BASE}/${otherTeamHook}`)).status).toBe(404);
    expect((await manager.client.get(`${BASE}/2147483647`)).status).toBe(404);
    expect((await member.client.get(`${BASE}/${id}`)).status).toBe(403);
    expect((await outsider.client.get(`${BASE}/${id}`)).status).toBe(403);
    expect((await anonymous(app).get(`${BASE}/${id}`)).status).toBe(401);
  });
});

describe('updateWebhook', () => {
  it('changes the fields given, shows a new secret once, and keeps the others', async () => {
    const { id } = await register({ url: PUBLIC_URL, events: ['note.created'] });
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const answer = await manager.client.patch(`${BASE}/${id}`, { form: { 'webhook[events][]': ['page.created', 'page.deleted'], 'webhook[secret]': secret } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ url: PUBLIC_URL, events: ['page.created', 'page.deleted'], secret });
    const row = await stored(id);
    expect([row?.url, row?.events, row?.secret]).toEqual([PUBLIC_URL, ['page.created', 'page.deleted'], secret]);
    const moved = await manager.client.patch(`${BASE}/${id}`, { json: { webhook: { url: 'https://203.0.113.12/new' } } });
    expect(moved.body).toMatchObject({ url: 'https://203.0.113.12/new', events: ['page.created', 'page.deleted'] });
    expect(moved.body).not.toHaveProperty('secret');
  });

  it('turning a webhook off drops its undelivered messages; on again starts the failure count from 0', async () => {
    const { id } = await register({ url: PUBLIC_URL, events: ['note.created'] });
    await makeNote(app, 'hooked', manager.user, { slug: 'quiet' });
    await manager.client.post('/api/v1/notes', { json: { note: { title: 'Loud', team: 'hooked' } } });
    expect(await outbox(id)).toHaveLength(1);
    await app.em().execute('update webhooks set consecutive_failures = 5 where id = ?', [id]);
    const off = await manager.client.patch(`${BASE}/${id}`, { json: { webhook: { active: false } } });
    expect(off.body).toMatchObject({ active: false, disabled_reason: null, consecutive_failures: 5 });
    expect(await outbox(id)).toHaveLength(0);
    await manager.client.post('/api/v1/notes', { json: { note: { title: 'Unheard', team: 'hooked' } } });
    expect(await outbox(id)).toHaveLength(0);
    const on = await manager.client.patch(`${BASE}/${id}`, { form: { 'webhook[active]': 'true' } });
    expect(on.body).toMatchObject({ active: true, disabled_reason: null, consecutive_failures: 0 });
  });

  it('answers 401, 403, 404, 400 and 422 and changes nothing', async () => {
    const { id } = await register({ url: PUBLIC_URL, events: ['note.created'] });
    const path = `${BASE}/${id}`;
    expect((await anonymous(app).patch(path, { json: { webhook: { active: false } } })).status).toBe(401);
    expect((await member.client.patch(path, { json: { webhook: { active: false } } })).status).toBe(403);
    expect((await manager.client.patch(`${BASE}/${otherTeamHook}`, { json: { webhook: { active: false } } })).status).toBe(404);
    expect((await manager.client.patch(path, { json: { webhook: { active: 'maybe' } } })).status).toBe(400);
    expect((await manager.client.patch(path, { json: { webhook: { events: ['nope'] } } })).body.code).toBe('unknown_event');
    expect((await manager.client.patch(path, { json: { webhook: { url: 'http://169.254.169.254/' } } })).body.code).toBe('invalid_webhook_url');
    const row = await stored(id);
    expect([row?.url, row?.events, row?.active]).toEqual([PUBLIC_URL, ['note.created'], true]);
  });
});

describe('deleteWebhook', () => {
  it('deletes the webhook with its messages; 404 the second time; 401 and 403 change nothing', async () => {
    const { id } = await register({ url: PUBLIC_URL });
    await manager.client.post('/api/v1/notes', { json: { note: { title: 'Heard', team: 'hooked' } } });
    expect((await outbox(id)).length).toBeGreaterThan(0);
    expect((await anonymous(app).delete(`${BASE}/${id}`)).status).toBe(401);
    expect((await member.client.delete(`${BASE}/${id}`)).status).toBe(403);
    expect((await manager.client.delete(`${BASE}/${otherTeamHook}`)).status).toBe(404);
    expect(await stored(id)).not.toBeNull();
    expect((await manager.client.delete(`${BASE}/${id}`)).status).toBe(204);
    expect(await stored(id)).toBeNull();
    expect(await outbox(id)).toHaveLength(0);
    expect((await manager.client.delete(`${BASE}/${id}`)).status).toBe(404);
  });
});

describe('listWebhookDeliveries', () => {
  it('answers the log (empty before any attempt) to managers only', async () => {
    const { id } = await register({ url: PUBLIC_URL });
    const answer = await manager.client.get(`${BASE}/${id}/deliveries`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([]);
    expect(answer.headers.get('x-total-count')).toBe('0');
    expect((await anonymous(app).get(`${BASE}/${id}/deliveries`)).status).toBe(401);
    expect((await member.client.get(`${BASE}/${id}/deliveries`)).status).toBe(403);
    expect((await manager.client.get(`${BASE}/${otherTeamHook}/deliveries`)).status).toBe(404);
  });
});

describe('the outbox', () => {
  it('gets one thin message per matching active webhook, projected from the change log after the change commits', async () => {
    const team = await makeTeam(app, 'outboxed', [{ user: manager.user, role: 'manager' }]);
    const path = '/api/v1/teams/outboxed/webhooks';
    const pages = (await manager.client.post(path, { json: { webhook: { url: PUBLIC_URL, events: ['page.updated'] } } })).body.id;
    const all = (await manager.client.post(path, { json: { webhook: { url: PUBLIC_URL } } })).body.id;
    const notes = (await manager.client.post(path, { json: { webhook: { url: PUBLIC_URL, events: ['note.deleted'] } } })).body.id;
    const note = await makeNote(app, team, manager.user, { slug: 'watched' });
    const page = await makePage(app, note, manager, { title: 'Watched', content: '<p>one</p>' });
    const before = new Date(Date.now() - 1000);
    expect((await manager.client.put(`/api/v1/outboxed/watched/${page.id}`, { json: { page: { content: '<p>two</p>' } } })).status).toBe(200);
    const [message] = await outbox(pages);
    expect(message).toMatchObject({ event_type: 'page.updated', attempts: 0 });
    expect(message!.message_id).toMatch(new RegExp(`^msg_[0-9a-f]{24}_${pages}$`));
    const body = JSON.parse(message!.payload);
    const [change] = await app.em().execute<{ id: string | number }[]>("select id from changes where type = 'page.updated' and note_id = ? order by id desc limit 1", [note.id]);
    const actor = { id: manager.user.id, username: manager.user.username };
    expect(body).toEqual({
      // the change stream's event (one vocabulary: the change's id in the log, the same type and fields) ...
      id: Number(change!.id),
      type: 'page.updated',
      occurred_at: expect.stringMatching(/Z$/),
      actor,
      team: { id: team.id, name: 'outboxed' },
      note: { id: note.id, slug: 'watched', html_url: expect.stringMatching(/\/outboxed\/watched$/) },
      page: { id: page.id, version: 2 },
      changed: ['content'],
      // ... and beside it the message's earlier form, `timestamp` being `occurred_at`
      timestamp: body.occurred_at,
      data: { team_id: team.id, note_id: note.id, page_id: page.id, changed: ['content'], version: 2, actor },
    });
    const { timestamp: _timestamp, data: _data, ...event } = body;
    expect(isChangeEvent(event), JSON.stringify(isChangeEvent.errors)).toBe(true);
    expect(new Date(body.occurred_at).getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect((await outbox(all)).map((row) => row.event_type)).toEqual(['page.created', 'page.updated']);
    expect(await outbox(notes)).toEqual([]);
    // a change refused (and rolled back) leaves no message
    expect((await manager.client.put(`/api/v1/outboxed/watched/${page.id}`, { json: { page: { parent: page.id } } })).status).toBe(422);
    expect(await outbox(pages)).toHaveLength(1);
  });

  it('takes the change stream\'s kinds: member.* (once membership.*) and page.moved; the old names are unknown kinds', async () => {
    const team = await makeTeam(app, 'rekinded', [{ user: manager.user, role: 'manager' }]);
    const path = '/api/v1/teams/rekinded/webhooks';
    const old = await manager.client.post(path, { json: { webhook: { url: PUBLIC_URL, events: ['member.added', 'membership.added', 'membership.changed', 'membership.removed'] } } });
    expect([old.status, old.body.code]).toEqual([422, 'unknown_event']);
    expect(old.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/webhook/events/1', '/webhook/events/2', '/webhook/events/3']);
    const members = (await register({ url: PUBLIC_URL, events: ['member.added', 'member.changed', 'member.removed'] }, path)).id;
    const moves = (await register({ url: PUBLIC_URL, events: ['page.moved'] }, path)).id;
    const updates = (await register({ url: PUBLIC_URL, events: ['page.updated'] }, path)).id;

    const joiner = await makeUser(app);
    expect((await manager.client.post('/api/v1/teams/rekinded/users', { json: { username: joiner.user.username, role: 'member' } })).status).toBe(200);
    expect((await manager.client.post('/api/v1/teams/rekinded/users', { json: { username: joiner.user.username, role: 'manager' } })).status).toBe(200);
    expect((await manager.client.delete(`/api/v1/teams/rekinded/users/${joiner.user.id}`)).status).toBe(200);
    const memberMessages = await outbox(members);
    expect(memberMessages.map((row) => row.event_type)).toEqual(['member.added', 'member.changed', 'member.removed']);
    expect(memberMessages.map((row) => JSON.parse(row.payload))).toEqual([
      expect.objectContaining({ type: 'member.added', team: { id: team.id, name: 'rekinded' }, member: { id: joiner.user.id, role: 'member' } }),
      expect.objectContaining({ type: 'member.changed', team: { id: team.id, name: 'rekinded' }, member: { id: joiner.user.id, role: 'manager' } }),
      expect.objectContaining({ type: 'member.removed', team: { id: team.id, name: 'rekinded' }, member: { id: joiner.user.id } }),
    ]);

    // a page put under another parent, nothing else changed, is page.moved (not page.updated)
    const note = await makeNote(app, team, manager.user, { slug: 'moving' });
    const parent = await makePage(app, note, manager, { title: 'Parent', content: '<p>p</p>' });
    const child = await makePage(app, note, manager, { title: 'Child', content: '<p>c</p>' });
    expect((await manager.client.put(`/api/v1/rekinded/moving/${child.id}`, { json: { page: { parent: parent.id } } })).status).toBe(200);
    const [moved] = await outbox(moves);
    expect(moved?.event_type).toBe('page.moved');
    expect(JSON.parse(moved!.payload)).toMatchObject({ type: 'page.moved', note: { id: note.id, slug: 'moving' }, page: { id: child.id } });
    expect(await outbox(updates)).toEqual([]);
  });
});
