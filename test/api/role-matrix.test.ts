// The role x operation matrix, generated: every operation of the document (read off generated/openapi.json) is called
// with its sample request (test/support/samples.ts) as anonymous, an outsider, a member, a manager, the author of the
// object it acts on, a member whose token may only read (a personal token, and an OAuth token), and, for everything
// inside a note, with the ids of another team's private note. The status each cell must answer is not written here:
// it is computed from the action the operation declares (`defineOperation(id, { scope, action })`) and the policy
// table (`can`), with the caller's role read from the database for the team the path names:
//   anonymous 401; a read-scoped token on a write 403 insufficient_scope; a note the caller may not read 404; an
//   action the policy refuses 403; otherwise a 2xx.
// A 2xx where a refusal was due, or a body naming the private note, is a leak. An operation with no sample request or
// no declared action cannot be classified and fails the test. MATRIX_LOG=1 prints every cell (expected, answered).
// An operation that takes a `note` query filter (`team/note`: streamEvents) is asked, in the private columns, with
// the filter naming the private note: 404 as for a path naming it. The change stream is called in its JSON form, which
// ends (samples.ts); a live stream answered instead is a wrong cell, and an event of the private note's team a leak.
// Beside the roles, each request of INVALID_SAMPLES (samples.ts) must answer 400 with its code to every signed-in role.
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldCase } from '../../src/modules/text/fold.ts';
import type { OperationDefinition } from '../../src/http/handler.ts';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';
import { operations } from '../../src/http/operations.ts';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { createClient } from '../../src/modules/oauth/clients.ts';
import { recordGrant } from '../../src/modules/oauth/model.ts';
import { actionTargets, can, type Action, type Requirement, type Role, type Subject } from '../../src/modules/access/policy.ts';
import { Team } from '../../src/modules/teams/team.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { givePassword, makeClient, tokenRequest } from '../support/oauth.ts';
import { addMember, makeNote, makeTeam, makeUser, uniqueName, type Actor } from '../support/factories.ts';
import { INVALID_SAMPLES, makeJob, NOTE, remember, SAMPLES, sampleOf, seedSampleWorld, sendSample, type Sample, type SampleAnswer, type State } from '../support/samples.ts';

const COLUMNS = ['anonymous', 'outsider', 'member', 'manager', 'author', 'reader', 'oauth-reader', 'private/manager', 'private/outsider'] as const;
type Column = (typeof COLUMNS)[number];
/** `noteFilter`: the operation takes a `note` query parameter (`team/note`) naming a note it is confined to. */
type Operation = { id: string; method: string; template: string; scope: string; action: Requirement; noteFilter: boolean };
type Expected = { status: 'success' | 401 | 403 | 404; code?: string; why: string };

/** Stands in the private note's title and content: no answer to anyone outside its team may carry it. */
const MARKER = `Secret${Date.now().toString(36)}`;
const PRIVATE_TEAM = 'elsewhere';
const PRIVATE = `/api/v1/${PRIVATE_TEAM}/secret`;

let app: TestApp;
let base: State;
let cast: Record<'outsider' | 'member' | 'manager' | 'author' | 'reader' | 'oauthReader' | 'stranger', Actor>;
let privateState: State;
let counter = 0;

const em = (): EntityManager => app.em() as EntityManager;
const unique = () => `m${(counter += 1)}x${process.pid % 1000}`;
const clone = (state: State): State => structuredClone(state);

/** The operations of the document served by the API router, with what the source declares for each. */
function documentOperations(): { operations: Operation[]; unclassified: string[] } {
  const found: Operation[] = [];
  const unclassified: string[] = [];
  const sampled = new Set(SAMPLES.map(([id]) => id));
  for (const [template, item] of Object.entries(loadOpenApiDocument().paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, { operationId?: string; parameters?: { name?: string; in?: string }[] }>)) {
      const id = operation?.operationId;
      if (!id) continue;
      const entry = (operations as Record<string, object>)[id];
      if (!entry) {
        unclassified.push(`${id}: not in the operation table`);
        continue;
      }
      if ('servedBy' in entry) continue; // the OAuth endpoints: plain routes outside /api/v1, with tests of their own
      const definition = entry as OperationDefinition<never>;
      if (typeof definition.action !== 'string') unclassified.push(`${id}: declares no action`);
      else if (!sampled.has(id)) unclassified.push(`${id}: no sample request in test/support/samples.ts`);
      else {
        const noteFilter = (operation.parameters ?? []).some((parameter) => parameter.in === 'query' && parameter.name === 'note');
        found.push({ id, method: method.toUpperCase(), template, scope: definition.scope, action: definition.action, noteFilter });
      }
    }
  }
  return { operations: found, unclassified };
}

async function send(actor: Actor | undefined, sample: Sample): Promise<SampleAnswer> {
  return sendSample(app.baseUrl, actor?.token, sample);
}

/** Runs a sample as `actor` to make something a cell needs; it must succeed. */
async function make(operationId: string, state: State, actor: Actor): Promise<Record<string, unknown>> {
  const sample = sampleOf(operationId)(state, 0);
  const answer = await send(actor, sample);
  if (answer.status >= 300) throw new Error(`fixture ${operationId}: ${sample.method} ${sample.path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  remember(operationId, state, answer.body);
  return answer.body;
}

async function roleIn(teamName: string, userId: number): Promise<Role> {
  const rows = await em().execute<{ role: string }[]>('select m.role from memberships m join teams t on t.id = m.team_id where t.name_key = ? and m.user_id = ?', [foldCase(teamName), userId]);
  return rows[0]?.role as Role;
}

async function noteAt(teamName: string, ref: string): Promise<{ isPrivate: boolean } | undefined> {
  const digits = /^[0-9]+$/.test(ref);
  const rows = await em().execute<{ is_private: boolean }[]>(
    `select n.is_private from notes n join teams t on t.id = n.team_id where t.name_key = ? and ${digits ? 'n.id = ?' : 'n.slug = ?'}`,
    [foldCase(teamName), digits ? Number(ref) : ref],
  );
  return rows[0] ? { isPrivate: rows[0].is_private } : undefined;
}

/** The note a request's `note` query filter names (`team/note`), if it has one. */
function noteFilterOf(sample: Sample): { team: string; note: string } | undefined {
  const value = new URL(sample.path, 'http://matrix.invalid').searchParams.get('note');
  const slash = value?.indexOf('/') ?? -1;
  return value && slash > 0 ? { team: value.slice(0, slash), note: value.slice(slash + 1) } : undefined;
}

/** The path parameters of a request path, read with the operation's template. */
function pathParameters(template: string, path: string): Record<string, string> {
  const names: string[] = [];
  const pattern = template.replace(/[.]/g, '\\.').replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'));
  const match = new RegExp(`^${pattern}$`).exec(path.split('?')[0]!);
  if (!match) throw new Error(`${path} does not match ${template}`);
  return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]));
}

/**
 * What the policy says a cell answers. Every object an object action is asked about (a comment, an issue, an
 * attachment, a request, a membership) is the author's in this matrix (see `prepare`).
 */
async function expectation(operation: Operation, column: Column, actor: Actor | undefined, sample: Sample): Promise<Expected> {
  if (!actor) return { status: 401, why: 'no token' };
  if ((actor === cast.reader || actor === cast.oauthReader) && operation.method !== 'GET') return { status: 403, code: 'insufficient_scope', why: 'read-scoped token' };
  const action = operation.action;
  const filter = operation.noteFilter ? noteFilterOf(sample) : undefined;
  if (filter) {
    // confined to one note by a query filter: loaded as a path naming it would be (a note it may not read: 404)
    const filtered = await noteAt(filter.team, filter.note);
    if (!filtered) throw new Error(`${operation.id} ${column}: no note ${filter.team}/${filter.note}`);
    const role = await roleIn(filter.team, actor.user.id);
    if (!can('note.read', { role, callerId: actor.user.id }, filtered)) return { status: 404, why: `cannot read the filtered note (${role ?? 'not in the team'})` };
  }
  if (action === 'signed-in') return { status: 'success', why: 'signed-in' };
  const params = pathParameters(operation.template, sample.path);
  let teamName: string;
  let note: { isPrivate: boolean } | undefined;
  if (operation.scope === 'note' || operation.scope === 'page') {
    teamName = params.team!;
    note = await noteAt(teamName, params.note!);
    if (!note) throw new Error(`${operation.id} ${column}: no note at ${sample.path}`);
  } else if (operation.scope === 'team') {
    teamName = params.team!;
  } else if (action === 'note.read' && params.id) {
    // an attachment by id: the note it belongs to
    const rows = await em().execute<{ name: string; is_private: boolean }[]>(
      'select t.name, n.is_private from attachments a join notes n on n.id = a.note_id join teams t on t.id = n.team_id where a.id = ?', [Number(params.id)]);
    teamName = rows[0]!.name;
    note = { isPrivate: rows[0]!.is_private };
  } else if (action === 'team.createNote' && sample.form?.['note[team]'] !== undefined) {
    teamName = String(sample.form['note[team]']);
  } else {
    throw new Error(`${operation.id}: cannot classify a ${operation.scope} operation declaring ${action}`);
  }
  const subject: Subject = { role: await roleIn(teamName, actor.user.id), callerId: actor.user.id };
  if (note && !can('note.read', subject, note)) return { status: 404, why: `cannot read the note (${subject.role ?? 'not in the team'})` };
  const target = { isPrivate: note?.isPrivate ?? false, authorId: cast.author.user.id, creatorId: cast.author.user.id, uploaderId: cast.author.user.id, userId: cast.author.user.id };
  const allowed = actionTargets[action] === 'none' ? can(action as 'note.edit', subject) : can(action as Action as 'comment.delete', subject, target);
  return allowed ? { status: 'success', why: `${action} allowed (${subject.role ?? 'not in the team'})` } : { status: 403, why: `${action} refused (${subject.role ?? 'not in the team'})` };
}

/** A state of its own for one cell: fresh names, and fresh objects where the cell may use one up. */
async function prepare(operationId: string, actor: Actor | undefined): Promise<State> {
  const state = clone(base);
  state.createdNotes = [unique()];
  state.createdTeams = [unique()];
  for (const key of ['createdPages', 'createdComments', 'createdIssues', 'createdNoteComments', 'createdIssueComments', 'createdRequestComments', 'createdApps', 'spareTokens', 'grantedApps'] as const) state[key] = [];
  const { author, manager } = cast;
  const owner = actor ?? manager;
  switch (operationId) {
    case 'deleteIssue': await make('createIssue', state, author); break;
    case 'deleteNoteComment': await make('createNoteComment', state, author); break;
    case 'deleteIssueComment': await make('createIssueComment', state, author); break;
    case 'deleteRequestComment': await make('createRequestComment', state, author); break;
    case 'deletePageComment': await make('createPageComment', state, author); break;
    case 'deleteAttachment': state.createdAttachments = []; await make('createAttachment', state, author); break;
    case 'deleteWebhook': state.createdWebhooks = []; await make('createWebhook', state, manager); break;
    case 'deletePage': await make('createPage', state, manager); break;
    case 'deleteNote': await make('createNote', state, manager); break;
    case 'mergeRequest': state.mergeRequests = [(await make('createRequest', state, manager)).index as number]; break;
    case 'deleteTeam': {
      await make('createTeam', state, manager);
      const team = await em().findOneOrFail(Team, { name: state.createdTeams[0]! });
      for (const who of [cast.member, author, cast.reader]) await addMember(app, team, who.user, 'member');
      break;
    }
    case 'removeTeamUser': {
      if ((await roleIn('writers', author.user.id)) === undefined) await addMember(app, await em().findOneOrFail(Team, { name: 'writers' }), author.user, 'member');
      state.extraUsers = [{ id: author.user.id, username: author.user.username }];
      break;
    }
    case 'addTeamUser': {
      const fresh = await makeUser(app, uniqueName('joiner'));
      state.extraUsers = [{ id: fresh.user.id, username: fresh.user.username }];
      break;
    }
    case 'updateTeam':
    case 'updateTeamViaPatch':
      state.renames = 1000 + (counter += 1);
      break;
    case 'toggleNotification':
    case 'toggleNotificationViaPut': {
      const rows = await em().execute<{ id: number }[]>('select id from notifications where user_id = ? order by id limit 1', [owner.user.id]);
      state.notificationId = rows[0]?.id ?? state.notificationId;
      break;
    }
    case 'getJob':
      state.jobs = [await makeJob(app, owner.user.id)];
      break;
    case 'revokeToken':
      state.spareTokens = [(await issueToken(em(), owner.user, { scope: 'read', label: unique() })).token.id];
      break;
    case 'revokeAuthorization': {
      const { client } = await createClient(em(), { name: unique(), redirectUris: ['https://granted.example/cb'], confidential: false });
      await recordGrant(em(), owner.user.id, client.id, 'write');
      state.grantedApps = [client.clientId];
      break;
    }
    case 'deleteApp': {
      const { client } = await createClient(em(), { name: unique(), redirectUris: ['https://owned.example/cb'], confidential: false, owner: owner.user });
      state.createdApps = [client.clientId];
      break;
    }
  }
  return state;
}

/** The cell's request with the ids of the other team's private note (and the objects in it). */
function privateSample(operation: Operation): Sample | undefined {
  const sample = sampleOf(operation.id)(clone(privateState), 0);
  if (operation.scope === 'note' || operation.scope === 'page') {
    const path = sample.path
      .replace(NOTE, PRIVATE)
      .replace(`/api/v1/manager/${base.forkId}`, PRIVATE)
      .replace('/api/v1/writers/secret', PRIVATE);
    if (!path.startsWith(PRIVATE)) throw new Error(`${operation.id}: cannot point ${sample.path} at the private note`);
    return { ...sample, path };
  }
  if (operation.action === 'note.read') return sample; // the attachment by id: privateState's is the private note's
  if (operation.noteFilter) {
    const note = encodeURIComponent(PRIVATE.slice('/api/v1/'.length)); // `/` percent-encoded, as the document asks
    return { ...sample, path: `${sample.path}${sample.path.includes('?') ? '&' : '?'}note=${note}` };
  }
  return undefined;
}

/** The events of a change stream's JSON answer that are of the other team (whose only note is private). */
function privateEvents(text: string): number {
  const events = JSON.parse(text) as { team?: { name?: string } }[];
  return events.filter((event) => event.team?.name === PRIVATE_TEAM).length;
}

type Tally = { requests: number; leaks: string[]; wrong: string[]; serverErrors: string[]; expected: Record<string, number> };

async function runCell(operation: Operation, column: Column, tally: Tally): Promise<void> {
  const actorOf: Record<Column, Actor | undefined> = {
    anonymous: undefined, outsider: cast.outsider, member: cast.member, manager: cast.manager, author: cast.author, reader: cast.reader,
    'oauth-reader': cast.oauthReader,
    'private/manager': cast.manager, 'private/outsider': cast.outsider,
  };
  const actor = actorOf[column];
  const isPrivate = column.startsWith('private/');
  let sample: Sample | undefined;
  let state: State | undefined;
  if (isPrivate) {
    sample = privateSample(operation);
    if (!sample) return;
  } else {
    state = await prepare(operation.id, actor);
    sample = sampleOf(operation.id)(state, 0);
  }
  const expected = await expectation(operation, column, actor, sample);
  const answer = await send(actor, sample);
  tally.requests += 1;
  tally.expected[expected.status] = (tally.expected[expected.status] ?? 0) + 1;
  const label = `${operation.id} as ${column}: ${sample.method} ${sample.path} answered ${answer.status}, expected ${expected.status} (${expected.why}) ${answer.text.slice(0, 200)}`;
  const ok = answer.status >= 200 && answer.status < 300;
  if (process.env.MATRIX_LOG) console.log(`cell ${operation.id} ${column} ${expected.status} ${answer.status}`);
  if (answer.status >= 500) tally.serverErrors.push(label);
  if (answer.text.includes(MARKER)) tally.leaks.push(`${label} [the body names the private note]`);
  if (answer.live) tally.wrong.push(`${label} [a live event stream, to a request for the JSON form]`);
  if (operation.id === 'streamEvents' && ok && !answer.live && privateEvents(answer.text) > 0) {
    tally.leaks.push(`${label} [${privateEvents(answer.text)} events of the private note's team]`);
  }
  if (expected.status === 'success') {
    if (!ok) tally.wrong.push(label);
    else if (state && (operation.id === 'updateTeam' || operation.id === 'updateTeamViaPatch')) {
      remember(operation.id, state, answer.body);
      base.spareTeam = state.spareTeam;
    }
    return;
  }
  if (ok) tally.leaks.push(label);
  else if (answer.status !== expected.status || (expected.code && answer.body.code !== expected.code)) tally.wrong.push(label);
  else if (!(answer.headers.get('content-type') ?? '').startsWith('application/problem+json')) tally.wrong.push(`${label} [not problem details]`);
}

beforeAll(async () => {
  app = await startTestApp();
  const world = await seedSampleWorld(app);
  base = world.state;
  const writers = await em().findOneOrFail(Team, { name: 'writers' });
  const spare = await em().findOneOrFail(Team, { name: 'spare' });
  const author = await makeUser(app, 'author');
  const reader = await makeUser(app, 'reader', { scope: 'read' });
  const outsider = await makeUser(app, 'outsider');
  const stranger = await makeUser(app, 'stranger');
  for (const team of [writers, spare]) {
    await addMember(app, team, author.user, 'member');
    await addMember(app, team, reader.user, 'member');
  }
  await addMember(app, spare, world.member.user, 'member');
  // a member signed in through an OAuth app (the password grant of a first-party app) with the `read` scope only
  const oauthUser = await makeUser(app, 'oauth-reader');
  await addMember(app, writers, oauthUser.user, 'member');
  const firstParty = await makeClient(app, { name: 'Matrix app', confidential: true, firstParty: true, redirectUris: ['notesapp://callback'] });
  const granted = await tokenRequest(app, {
    client_id: firstParty.clientId, client_secret: firstParty.secret!, grant_type: 'password', username: 'oauth-reader',
    password: await givePassword(app, oauthUser.user), scope: 'read',
  });
  expect([granted.status, granted.body?.scope], granted.text).toEqual([200, 'read']);
  const oauthReader: Actor = { ...oauthUser, token: granted.body.access_token as string };
  cast = { outsider, member: world.member, manager: world.manager, author, reader, oauthReader, stranger };

  // an attachment to read by id; the author's own request (open and close are asked of its author)
  await make('createAttachment', base, world.manager);
  // a webhook of `writers` to read, change and list the deliveries of (deleteWebhook makes its own)
  await make('createWebhook', base, world.manager);
  const fork = await make('createFork', clone(base), author);
  const [forkPage] = await em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id is not null order by id limit 1', [fork.id]);
  const forkPath = `/api/v1/${author.user.username}/${fork.id}`;
  const edit = await send(author, { method: 'PUT', path: `${forkPath}/${forkPage!.id}`, form: { 'page[content]': '<p>from the author</p>' } });
  expect(edit.status, edit.text).toBe(200);
  const [version] = await em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [forkPage!.id]);
  const request = await send(author, { method: 'POST', path: `${forkPath}/requests`, form: { 'page_versions[]': version!.id } });
  expect(request.status, request.text).toBe(200);
  base.transitionRequests = [request.body.index as number];
  // everyone gets a notification of their own to toggle: a note comment mentioning them
  const mention = await send(world.manager, {
    method: 'POST', path: `${NOTE}/comments`,
    form: { 'comment[comment]': 'Hello all', 'mentions[]': 'member' },
  });
  expect(mention.status, mention.text).toBe(200);
  for (const who of [author, reader, outsider]) {
    const answer = await sendSample(app.baseUrl, world.member.token, { method: 'POST', path: `${NOTE}/comments`, form: { 'comment[comment]': `Hello @${who.user.username}`, 'mentions[]': who.user.username } });
    expect(answer.status, answer.text).toBe(200);
  }

  // another team's private note, with one of everything in it; the change stream's sample reads the log from here,
  // so the private note's events are among the first it reads, and none may reach a cell
  const [last] = await em().execute<{ id: string | number | null }[]>('select max(id) as id from changes');
  base.eventsSince = Number(last?.id ?? 0);
  const elsewhere = await makeTeam(app, PRIVATE_TEAM, [{ user: stranger.user, role: 'manager' }]);
  await makeNote(app, elsewhere, stranger.user, { slug: 'secret', title: MARKER, description: MARKER, isPrivate: true });
  privateState = clone(base);
  const inPrivate = async (method: string, path: string, form?: Sample['form'], file?: Sample['file']) => {
    const answer = await send(stranger, { method, path: `${PRIVATE}${path}`, ...(form ? { form } : {}), ...(file ? { file } : {}) });
    if (answer.status !== 200) throw new Error(`private fixture ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  };
  privateState.pageId = (await inPrivate('POST', '/pages', { 'page[title]': MARKER, 'page[content]': `<p>${MARKER}</p>` })).id as number;
  privateState.createdPages = [privateState.pageId];
  privateState.createdComments = [(await inPrivate('POST', `/${privateState.pageId}/comments`, { 'comment[comment]': MARKER })).id as number];
  privateState.createdIssues = [(await inPrivate('POST', '/issues', { 'issue[title]': MARKER })).index as number];
  privateState.createdIssueComments = [(await inPrivate('POST', `/issues/${privateState.createdIssues[0]}/comments`, { 'comment[comment]': MARKER })).id as number];
  privateState.createdNoteComments = [(await inPrivate('POST', '/comments', { 'comment[comment]': MARKER })).id as number];
  const attachment = await inPrivate('POST', '/attachments', undefined, { filename: `${MARKER}.txt`, data: MARKER });
  privateState.createdAttachments = [Number(String(attachment.filelink).split('/').pop())];
  privateState.createdNotes = ['secret'];
  privateState.transitionRequests = [1];
  privateState.mergeRequests = [1];
}, 120_000);
afterAll(async () => app?.close());

describe('the role x operation matrix', () => {
  it('answers every cell as the policy says: 0 leaks, 0 wrong codes, no 5xx', async () => {
    const { operations: found, unclassified } = documentOperations();
    expect(unclassified, 'operations the matrix cannot classify').toEqual([]);
    const tally: Tally = { requests: 0, leaks: [], wrong: [], serverErrors: [], expected: {} };
    for (const operation of found) {
      for (const column of COLUMNS) await runCell(operation, column, tally);
    }
    console.log(
      `[role-matrix] ${found.length} operations x ${COLUMNS.length} columns: ${tally.requests} requests, ` +
        `${tally.leaks.length} leaks, ${tally.wrong.length} wrong codes, ${tally.serverErrors.length} 5xx ` +
        `(expected: ${Object.entries(tally.expected).map(([status, count]) => `${count} ${status}`).join(', ')})`,
    );
    expect(tally.serverErrors).toEqual([]);
    expect(tally.leaks).toEqual([]);
    expect(tally.wrong).toEqual([]);
  }, 300_000);

  it('refuses each invalid sample with 400 problem details to every signed-in role (401 without a token)', async () => {
    const covered = new Set(documentOperations().operations.map(({ id }) => id));
    const signedIn: [Column, Actor][] = [
      ['outsider', cast.outsider], ['member', cast.member], ['manager', cast.manager], ['author', cast.author], ['reader', cast.reader], ['oauth-reader', cast.oauthReader],
    ];
    const wrong: string[] = [];
    for (const [operationId, sample, code] of INVALID_SAMPLES) {
      expect(covered.has(operationId), `${operationId}: an invalid sample for an operation the matrix does not cover`).toBe(true);
      const anonymous = await send(undefined, sample);
      if (anonymous.status !== 401) wrong.push(`${operationId} as anonymous: ${sample.method} ${sample.path} answered ${anonymous.status}, expected 401`);
      for (const [column, actor] of signedIn) {
        const answer = await send(actor, sample);
        const problem = (answer.headers.get('content-type') ?? '').startsWith('application/problem+json');
        if (answer.status !== 400 || answer.body.code !== code || !problem || answer.live) {
          wrong.push(`${operationId} as ${column}: ${sample.method} ${sample.path} answered ${answer.status}, expected 400 ${code}: ${answer.text.slice(0, 200)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});

// The operations served outside /api/v1 (`servedBy` in the operation table) are left out of the matrix above: they
// have no policy action. The one a signed-in role could change the answer of is the registration endpoint: the
// document declares it public (`security: []`), so every column, whatever token it sends (none, a member's, a
// manager's, a read-scoped one, an OAuth one), registers an app (201), a token is neither required nor used, and
// the app is public and owned by no one (so no role's token can reach another's apps through it).
describe('the role x operation matrix: oauthRegister (outside /api/v1)', () => {
  it('registers an app for every column, with no owner, whatever token is sent; the document declares it public', async () => {
    const document = loadOpenApiDocument() as { paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>> };
    expect(document.paths['/oauth/register']!.post!.operationId).toBe('oauthRegister');
    expect(document.paths['/oauth/register']!.post!.security).toEqual([]);
    const tokens: Record<string, string | undefined> = {
      anonymous: undefined, outsider: cast.outsider.token, member: cast.member.token, manager: cast.manager.token,
      author: cast.author.token, reader: cast.reader.token, 'oauth-reader': cast.oauthReader.token,
    };
    for (const [column, token] of Object.entries(tokens)) {
      const name = `Matrix app ${column} ${unique()}`;
      const answer = await fetch(`${app.baseUrl}/oauth/register`, {
        method: 'POST',
        // all from this test's one address (this app does not trust X-Forwarded-For): 7 of OAUTH_REGISTRATIONS_PER_HOUR's 20
        headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ client_name: name, redirect_uris: ['http://127.0.0.1:8999/cb'], token_endpoint_auth_method: 'none' }),
      });
      const body = await answer.json() as { client_id?: string };
      expect([column, answer.status], JSON.stringify(body)).toEqual([column, 201]);
      const [stored] = await em().execute<{ owner_id: number | null; registered_dynamically: boolean; confidential: boolean }[]>(
        'select owner_id, registered_dynamically, confidential from oauth_clients where client_id = ?', [body.client_id]);
      expect([column, stored]).toEqual([column, { owner_id: null, registered_dynamically: true, confidential: false }]);
    }
  });
});
