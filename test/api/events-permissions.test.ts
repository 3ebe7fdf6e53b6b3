// Who a stream delivers to, decided when each event is sent: a private note's events reach its team's members only,
// a public note's anyone signed in, a team's events its members and the member concerned; a member removed from the
// team stops getting its private events at once, on a stream already open. The caller's own changes are included.
// And the limits of a token's streams: five open per token (the sixth 429 with Retry-After, a slot freed when one
// closes); a revoked or expired token's stream ends within the heartbeat interval (1 s here).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { openEventStream, readJsonEvents, type EventStream } from '../support/event-stream.ts';
import { addMember, makePage, makeUser, uniqueName, type Actor } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario<'open' | 'closed'>;
const streams: EventStream[] = [];

beforeAll(async () => {
  app = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1' });
  s = await makeScenario(app, { notes: { open: {}, closed: { isPrivate: true } } });
});
// each test's streams are closed after it: a token may hold only five open
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()));
});
afterAll(async () => {
  await Promise.all(streams.map((stream) => stream.close()));
  await app?.close();
});

const lastChangeId = async (): Promise<string> =>
  (await app.em().execute<{ id: string }[]>('select coalesce(max(id), 0)::text as id from changes'))[0]!.id;

/** Opens a stream of `actor` from `since` (that afterAll closes); it must answer 200. */
async function streamOf(actor: Actor | string, since: string) {
  const stream = await openEventStream(app.baseUrl, { token: typeof actor === 'string' ? actor : actor.token, query: { since } });
  streams.push(stream);
  expect(stream.status, stream.body).toBe(200);
  return stream;
}

let titles = 0;
const write = async (note: 'open' | 'closed', author: Actor = s.manager) => {
  titles += 1;
  return (await makePage(app, s.notes[note], author, { title: `Written ${titles}` })).id;
};
const pageIds = (stream: EventStream) => stream.changes.filter((change) => change.page).map((change) => change.page.id);
const types = (stream: EventStream) => stream.changes.map((change) => change.type);

describe('streamEvents: who receives what', () => {
  it('a private note\'s events reach its team\'s members only; a public note\'s anyone signed in; own changes included', async () => {
    const since = await lastChangeId();
    const [manager, member, reader, outsider] = await Promise.all([streamOf(s.manager, since), streamOf(s.member, since), streamOf(s.reader, since), streamOf(s.outsider, since)]);
    const hidden = await write('closed');
    const shown = await write('open');
    for (const stream of [manager, member, reader, outsider]) {
      expect(await stream.waitForChange((change) => change.page?.id === shown, 5000)).toBeDefined();
    }
    // ids increase on a stream: the private page's event, written first, would have come before the public one
    expect(pageIds(manager)).toEqual([hidden, shown]);
    expect(pageIds(member)).toEqual([hidden, shown]);
    expect(pageIds(reader)).toEqual([hidden, shown]);
    expect(pageIds(outsider)).toEqual([shown]);
    // the JSON form answers the same way
    expect((await readJsonEvents(s.outsider.client, { since })).items.map((event) => event.page?.id)).toEqual([shown]);
    expect((await readJsonEvents(s.reader.client, { since })).items.map((event) => event.page?.id)).toEqual([hidden, shown]);
  });

  it('a team\'s events reach its members and the member concerned, no one else', async () => {
    const newcomer = await makeUser(app, uniqueName('newcomer'));
    const since = await lastChangeId();
    const [member, outsider, concerned] = await Promise.all([streamOf(s.member, since), streamOf(s.outsider, since), streamOf(newcomer, since)]);
    const users = `/api/v1/teams/${s.team.name}/users`;
    expect((await s.manager.client.post(users, { json: { username: newcomer.user.username } })).status).toBe(200);
    expect((await s.manager.client.delete(`${users}/${newcomer.user.id}`)).status).toBe(200);
    const sentinel = await write('open');
    for (const stream of [member, outsider, concerned]) {
      expect(await stream.waitForChange((change) => change.page?.id === sentinel, 5000)).toBeDefined();
    }
    expect(types(member)).toEqual(['member.added', 'member.removed', 'page.created']);
    expect(types(concerned)).toEqual(['member.added', 'member.removed', 'page.created']);
    expect(concerned.changes[1]).toMatchObject({ member: { id: newcomer.user.id }, team: { id: s.team.id } });
    expect(types(outsider)).toEqual(['page.created']);
  });

  it('a member removed from the team stops getting its private events at once, on an open stream', async () => {
    const leaver = await makeUser(app, uniqueName('leaver'));
    await addMember(app, s.team, leaver.user, 'member');
    const since = await lastChangeId();
    const [stays, leaves] = await Promise.all([streamOf(s.member, since), streamOf(leaver, since)]);
    const before = await write('closed');
    expect(await leaves.waitForChange((change) => change.page?.id === before, 5000), 'a member gets the private page').toBeDefined();

    expect((await s.manager.client.delete(`/api/v1/teams/${s.team.name}/users/${leaver.user.id}`)).status).toBe(200);
    const after = await write('closed');
    const sentinel = await write('open');
    for (const stream of [stays, leaves]) {
      expect(await stream.waitForChange((change) => change.page?.id === sentinel, 5000)).toBeDefined();
    }
    expect(pageIds(stays)).toEqual([before, after, sentinel]);
    expect(pageIds(leaves)).toEqual([before, sentinel]);
    expect(types(leaves)).toEqual(['page.created', 'member.removed', 'page.created']);
    expect(leaves.ended).toBe(false);
    // read again now, the private note's events are not the leaver's to see, the older one neither
    expect((await readJsonEvents(leaver.client, { since })).items.map((event) => event.type)).toEqual(['member.removed', 'page.created']);
  });

  it('a private note\'s events reach a member added while the stream is open', async () => {
    const joiner = await makeUser(app, uniqueName('joiner'));
    const since = await lastChangeId();
    const stream = await streamOf(joiner, since);
    expect((await s.manager.client.post(`/api/v1/teams/${s.team.name}/users`, { json: { username: joiner.user.username } })).status).toBe(200);
    const seen = await write('closed');
    expect(await stream.waitForChange((change) => change.page?.id === seen, 5000)).toBeDefined();
    expect(types(stream)).toEqual(['member.added', 'page.created']);
  });
});

describe('streamEvents: limits of a token\'s streams', () => {
  it('five open streams per token; the sixth answers 429 with Retry-After; another token, or a closed stream, frees room', async () => {
    const owner = await makeUser(app, uniqueName('streamer'));
    const since = await lastChangeId();
    const five = [];
    for (let i = 0; i < 5; i += 1) five.push(await streamOf(owner, since));
    const sixth = await openEventStream(app.baseUrl, { token: owner.token, query: { since } });
    streams.push(sixth);
    expect([sixth.status, sixth.headers.get('content-type')]).toEqual([429, expect.stringContaining('application/problem+json')]);
    expect(sixth.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(sixth.bodyJson).toMatchObject({ status: 429 });
    // the JSON form is no open stream: it still answers
    expect((await owner.client.get('/api/v1/events', { query: { format: 'json', since } })).status).toBe(200);
    // another token of the same user has room of its own
    const { secret } = await issueToken(app.em(), owner.user, { scope: 'read' });
    await streamOf(secret, since);
    // the five still deliver
    const pageId = await write('open');
    for (const stream of five) expect(await stream.waitForChange((change) => change.page?.id === pageId, 5000)).toBeDefined();
    // one goes away: a stream opens again once the server has seen it go (polled, with a deadline)
    await five[0]!.close();
    const deadline = Date.now() + 5000;
    let again: EventStream;
    for (;;) {
      again = await openEventStream(app.baseUrl, { token: owner.token, query: { since } });
      streams.push(again);
      if (again.status !== 429 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(again.status).toBe(200);
    expect(await again.waitForChange((change) => change.page?.id === pageId, 5000)).toBeDefined();
  });

  it('a revoked token\'s open stream ends within the heartbeat interval; the token\'s others do not', async () => {
    const owner = await makeUser(app, uniqueName('revoker'));
    const { token, secret } = await issueToken(app.em(), owner.user, { scope: 'read' });
    const since = await lastChangeId();
    const doomed = await streamOf(secret, since);
    const kept = await streamOf(owner, since);
    expect(await doomed.waitUntil((stream) => stream.retries.length > 0, 5000)).toBe('met');
    const revoked = await owner.client.delete(`/api/v1/me/tokens/${token.id}`);
    expect(revoked.status, revoked.text).toBe(204);
    const at = Date.now();
    expect(await doomed.waitForEnd(4000), 'the revoked token\'s stream ended').toBe(true);
    console.log(`revoked token's stream ended ${Date.now() - at} ms after the revocation answered`);
    expect(doomed.error).toBeUndefined();
    // the other token's stream is still open and still delivers
    const pageId = await write('open');
    expect(await kept.waitForChange((change) => change.page?.id === pageId, 5000)).toBeDefined();
    expect(kept.ended).toBe(false);
    // and the revoked token opens nothing any more
    const refused = await openEventStream(app.baseUrl, { token: secret });
    expect(refused.status).toBe(401);
  });

  it('an expired token\'s open stream ends within the heartbeat interval', async () => {
    const owner = await makeUser(app, uniqueName('expiring'));
    const { token, secret } = await issueToken(app.em(), owner.user, { scope: 'read', expiresInDays: 1 });
    const stream = await streamOf(secret, await lastChangeId());
    expect(await stream.waitUntil((open) => open.retries.length > 0, 5000)).toBe('met');
    await app.em().execute(`update tokens set expires_at = now() - interval '1 second' where id = ?`, [token.id]);
    expect(await stream.waitForEnd(4000), 'the expired token\'s stream ended').toBe(true);
    expect(await new ApiClient(app.baseUrl, secret).get('/api/v1/events', { query: { format: 'json' } })).toMatchObject({ status: 401 });
  });
});
