// The sample requests of every built operation over one small world (a manager, a member, the team `writers`, the
// note `handbook` with pages, versions, comments, an issue, a fork and requests), shared by `make statements`
// (scripts/count-statements.ts: statements per request) and the role matrix (test/api/role-matrix.test.ts: every
// operation as every role). A sample is a function of the world's state, so a caller can point it at objects it
// made for the purpose (a fresh comment to delete) by handing it a state of its own. The fuzzer
// (test/api/fuzz.test.ts) makes its hostile requests from them too, headers included.
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { createClient } from '../../src/modules/oauth/clients.ts';
import { recordGrant } from '../../src/modules/oauth/model.ts';
import type { TestApp } from './app.ts';
import { makeUser, type Actor } from './factories.ts';

export type Form = Record<string, string | number>;
/** `file`: a multipart upload of one part `file` with these bytes; `headers`: sent besides the token and body type. */
export type Sample = { method: string; path: string; form?: Form; file?: { filename: string; data: string }; headers?: Record<string, string> };
export type State = {
  pageId: number;
  createdTeams: string[];
  createdNotes: string[];
  createdPages: number[];
  createdComments: number[];
  createdIssues: number[];
  createdNoteComments: number[];
  createdIssueComments: number[];
  createdRequestComments: number[];
  createdAttachments: number[];
  notificationId: number;
  extraUsers: { id: number; username: string }[];
  spareTeam: string;
  renames: number;
  createdApps: string[];
  createdWebhooks: number[];
  grantedApps: string[];
  spareTokens: number[];
  /** Jobs of the manager's (imports), for getJob. */
  jobs: number[];
  /** Requests of the handbook that `openRequest` and `closeRequest` move (idempotent), and that `mergeRequest` merges. */
  transitionRequests: number[];
  mergeRequests: number[];
  /** The manager's fork of the handbook (in the team `manager`), with a changed page proposed by requests #1-#4. */
  forkId: number;
  forkVersionId: number;
  /** streamEvents reads the change log after this id (absent: from the start of the kept log). */
  eventsSince?: number;
};

export const NOTE = '/api/v1/writers/handbook';

/** One sample per built operation, in the order they run; `n` is 0 for the warm-up request, 1 for the counted one. */
export const SAMPLES: [operationId: string, sample: (state: State, n: number) => Sample][] = [
  ['getMe', () => ({ method: 'GET', path: '/api/v1/me' })],
  ['listUsers', () => ({ method: 'GET', path: '/api/v1/users' })],
  ['getUser', () => ({ method: 'GET', path: '/api/v1/users/member' })],
  ['listUserNotes', () => ({ method: 'GET', path: '/api/v1/users/manager/notes' })],
  ['listUsernames', () => ({ method: 'GET', path: '/api/v1/usernames' })],
  ['listTeams', () => ({ method: 'GET', path: '/api/v1/teams' })],
  ['getTeam', () => ({ method: 'GET', path: '/api/v1/teams/writers' })],
  ['listTeamNotes', () => ({ method: 'GET', path: '/api/v1/teams/writers/notes' })],
  ['createTeam', (state, n) => ({ method: 'POST', path: '/api/v1/teams', form: { 'team[name]': state.createdTeams[n]! } })],
  ['updateTeam', (state) => ({ method: 'PUT', path: `/api/v1/teams/${state.spareTeam}`, form: { 'team[name]': `spare${state.renames + 1}` } })],
  ['updateTeamViaPatch', (state) => ({ method: 'PATCH', path: `/api/v1/teams/${state.spareTeam}`, form: { 'team[name]': `spare${state.renames + 1}` } })],
  ['addTeamUser', (state, n) => ({ method: 'POST', path: '/api/v1/teams/writers/users', form: { username: state.extraUsers[n]!.username, role: 'member' } })],
  ['listNotes', () => ({ method: 'GET', path: '/api/v1/notes' })],
  ['getNote', () => ({ method: 'GET', path: NOTE })],
  ['createNote', (state, n) => ({ method: 'POST', path: '/api/v1/notes', form: { 'note[title]': `Scratch ${n}`, 'note[team]': 'writers', 'note[slug]': state.createdNotes[n]! } })],
  ['updateNote', (_, n) => ({ method: 'PUT', path: NOTE, form: { 'note[title]': 'Handbook', 'note[team]': 'writers', 'note[description]': `How we work (put ${n})` } })],
  ['updateNoteViaPatch', (_, n) => ({ method: 'PATCH', path: NOTE, form: { 'note[title]': 'Handbook', 'note[team]': 'writers', 'note[description]': `How we work (patch ${n})` } })],
  ['listContributors', () => ({ method: 'GET', path: `${NOTE}/contributors` })],
  ['exportNote', () => ({ method: 'GET', path: `${NOTE}/export` })],
  ['listPages', () => ({ method: 'GET', path: `${NOTE}/pages` })],
  ['createPage', (state) => ({ method: 'POST', path: `${NOTE}/pages`, form: { 'page[title]': 'Scratch page', 'page[content]': '<p>draft</p>', 'page[parent]': state.pageId } })],
  ['getPage', (state) => ({ method: 'GET', path: `${NOTE}/${state.pageId}` })],
  ['updatePage', (state, n) => ({ method: 'PUT', path: `${NOTE}/${state.pageId}`, form: { 'page[content]': `<p>Release steps, edit ${n} by put</p>` } })],
  // from the page's first version, the write winning (merge-on-write's inputs; the page has moved on since)
  ['updatePageViaPatch', (state, n) => ({
    method: 'PATCH',
    path: `${NOTE}/${state.pageId}`,
    form: { 'page[content]': `<p>Release steps, edit ${n} by patch</p>`, 'page[base_version]': 1, on_conflict: 'overwrite' },
  })],
  ['listPageVersions', (state) => ({ method: 'GET', path: `${NOTE}/${state.pageId}/histories` })],
  ['getPageVersion', (state) => ({ method: 'GET', path: `${NOTE}/${state.pageId}/histories/1` })],
  ['diffPageVersions', (state) => ({ method: 'GET', path: `${NOTE}/${state.pageId}/histories/diff` })],
  ['restorePageVersion', (state) => ({ method: 'POST', path: `${NOTE}/${state.pageId}/histories/1/restore` })],
  ['listPageComments', (state) => ({ method: 'GET', path: `${NOTE}/${state.pageId}/comments` })],
  ['createPageComment', (state, n) => ({ method: 'POST', path: `${NOTE}/${state.pageId}/comments`, form: { 'comment[comment]': `Looks good (${n}), @member`, 'mentions[]': 'member' } })],
  ['listIssues', () => ({ method: 'GET', path: `${NOTE}/issues?state=all` })],
  ['getIssue', () => ({ method: 'GET', path: `${NOTE}/issues/1` })],
  ['createIssue', (_, n) => ({ method: 'POST', path: `${NOTE}/issues`, form: { 'issue[title]': `Scratch issue ${n}`, 'issue[to_user]': 'member' } })],
  ['updateIssue', (_, n) => ({ method: 'PATCH', path: `${NOTE}/issues/1`, form: { 'issue[is_done]': n === 0 ? 'true' : 'false' } })],
  ['updateIssueViaPut', (_, n) => ({ method: 'PUT', path: `${NOTE}/issues/1`, form: { 'issue[title]': `Proofread the guide (${n})`, 'issue[to_user]': '' } })],
  ['addIssueTags', (_, n) => ({ method: 'POST', path: `${NOTE}/issues/1/tags`, form: { 'tags[]': `tag${n}` } })],
  ['listIssueComments', () => ({ method: 'GET', path: `${NOTE}/issues/1/comments` })],
  ['createIssueComment', (_, n) => ({ method: 'POST', path: `${NOTE}/issues/1/comments`, form: { 'comment[comment]': `On the issue (${n}), @manager`, 'mentions[]': 'manager' } })],
  ['listMyIssues', () => ({ method: 'GET', path: '/api/v1/my_issues?state=all' })],
  ['createAttachment', (_, n) => ({ method: 'POST', path: `${NOTE}/attachments`, file: { filename: `notes-${n}.txt`, data: `attached text ${n}` } })],
  ['listAttachments', () => ({ method: 'GET', path: `${NOTE}/attachments` })],
  ['getAttachment', (state) => ({ method: 'GET', path: `/api/v1/attachments/${state.createdAttachments[0]}.json` })],
  ['downloadAttachment', (state) => ({ method: 'GET', path: `/api/v1/attachments/${state.createdAttachments[0]}` })],
  ['createFork', (_, n) => ({ method: 'POST', path: `${NOTE}/forks`, form: { title: `Fork ${n}` } })],
  ['listRequests', () => ({ method: 'GET', path: `${NOTE}/requests?state=all` })],
  ['getRequest', () => ({ method: 'GET', path: `${NOTE}/requests/1` })],
  ['createRequest', (state) => ({ method: 'POST', path: `/api/v1/manager/${state.forkId}/requests`, form: { 'page_versions[]': state.forkVersionId } })],
  ['closeRequest', (state, n) => ({ method: 'PUT', path: `${NOTE}/requests/${state.transitionRequests[n]}/close` })],
  ['openRequest', (state, n) => ({ method: 'PUT', path: `${NOTE}/requests/${state.transitionRequests[n]}/open` })],
  ['mergeRequest', (state, n) => ({ method: 'PUT', path: `${NOTE}/requests/${state.mergeRequests[n]}/merge` })],
  ['listRequestComments', () => ({ method: 'GET', path: `${NOTE}/requests/1/comments` })],
  ['createRequestComment', (_, n) => ({ method: 'POST', path: `${NOTE}/requests/1/comments`, form: { 'comment[comment]': `On the request (${n}), @manager`, 'mentions[]': 'manager' } })],
  ['listChecks', () => ({ method: 'GET', path: '/api/v1/checks?type=pull' })],
  // an import of a file that is not a zip: answered 202, its job fails after the answer
  ['importNote', (_, n) => ({ method: 'POST', path: '/api/v1/teams/writers/imports', file: { filename: `note-${n}.zip`, data: `not a zip ${n}` } })],
  ['getJob', (state, n) => ({ method: 'GET', path: `/api/v1/jobs/${state.jobs[n]}` })],
  ['pullFork', (state) => ({ method: 'POST', path: `/api/v1/manager/${state.forkId}/pull` })],
  // deletes, last, of throw-away objects made above
  ['deleteIssue', (state, n) => ({ method: 'DELETE', path: `${NOTE}/issues/${state.createdIssues[n]}` })],
  ['listNoteComments', () => ({ method: 'GET', path: `${NOTE}/comments` })],
  ['createNoteComment', (_, n) => ({ method: 'POST', path: `${NOTE}/comments`, form: { 'comment[comment]': `On the whole note (${n}), @member`, 'mentions[]': 'member' } })],
  ['listNotifications', () => ({ method: 'GET', path: '/api/v1/notifications?state=all' })],
  ['toggleNotification', (state) => ({ method: 'PATCH', path: `/api/v1/notifications/${state.notificationId}` })],
  ['toggleNotificationViaPut', (state) => ({ method: 'PUT', path: `/api/v1/notifications/${state.notificationId}` })],
  ['markNotificationsRead', () => ({ method: 'POST', path: '/api/v1/notifications/read' })],
  ['listLogs', () => ({ method: 'GET', path: '/api/v1/logs' })],
  // the change stream in its JSON form, which ends (the live form, text/event-stream, never does): `format=json`
  // and an Accept that does not ask for the stream, so that neither a query nor a header made hostile turns it live
  ['streamEvents', (state) => ({
    method: 'GET',
    path: `/api/v1/events?format=json${state.eventsSince === undefined ? '' : `&since=${state.eventsSince}`}`,
    headers: { Accept: 'application/json' },
  })],
  ['listApps', () => ({ method: 'GET', path: '/api/v1/me/apps' })],
  ['createApp', (_, n) => ({ method: 'POST', path: '/api/v1/me/apps', form: { 'app[name]': `Scratch app ${n}`, 'app[redirect_uris][]': 'https://scratch.example/cb' } })],
  ['listAuthorizations', () => ({ method: 'GET', path: '/api/v1/me/authorizations' })],
  ['listTokens', () => ({ method: 'GET', path: '/api/v1/me/tokens' })],
  ['searchNotes', () => ({ method: 'GET', path: '/api/v1/search?q=release+steps' })],
  ['createWebhook', (_, n) => ({ method: 'POST', path: '/api/v1/teams/writers/webhooks', form: { 'webhook[url]': `https://203.0.113.7/hooks/${n}`, 'webhook[events][]': 'page.updated' } })],
  ['listWebhooks', () => ({ method: 'GET', path: '/api/v1/teams/writers/webhooks' })],
  ['getWebhook', (state) => ({ method: 'GET', path: `/api/v1/teams/writers/webhooks/${state.createdWebhooks[0]}` })],
  ['updateWebhook', (state, n) => ({ method: 'PATCH', path: `/api/v1/teams/writers/webhooks/${state.createdWebhooks[0]}`, form: { 'webhook[events][]': n === 0 ? 'page.created' : 'page.updated' } })],
  ['listWebhookDeliveries', (state) => ({ method: 'GET', path: `/api/v1/teams/writers/webhooks/${state.createdWebhooks[0]}/deliveries` })],
  // deletes, last, of throw-away objects made above
  ['deleteAttachment', (state, n) => ({ method: 'DELETE', path: `${NOTE}/attachments/${state.createdAttachments[n]}` })],
  ['deleteNoteComment', (state, n) => ({ method: 'DELETE', path: `${NOTE}/comments/${state.createdNoteComments[n]}` })],
  ['deleteIssueComment', (state, n) => ({ method: 'DELETE', path: `${NOTE}/issues/1/comments/${state.createdIssueComments[n]}` })],
  ['deleteRequestComment', (state, n) => ({ method: 'DELETE', path: `${NOTE}/requests/1/comments/${state.createdRequestComments[n]}` })],
  ['deletePageComment', (state, n) => ({ method: 'DELETE', path: `${NOTE}/${state.pageId}/comments/${state.createdComments[n]}` })],
  ['deletePage', (state, n) => ({ method: 'DELETE', path: `${NOTE}/${state.createdPages[n]}` })],
  ['deleteNote', (state, n) => ({ method: 'DELETE', path: `/api/v1/writers/${state.createdNotes[n]}` })],
  ['removeTeamUser', (state, n) => ({ method: 'DELETE', path: `/api/v1/teams/writers/users/${state.extraUsers[n]!.id}` })],
  ['deleteTeam', (state, n) => ({ method: 'DELETE', path: `/api/v1/teams/${state.createdTeams[n]}` })],
  ['revokeToken', (state, n) => ({ method: 'DELETE', path: `/api/v1/me/tokens/${state.spareTokens[n]}` })],
  ['revokeAuthorization', (state, n) => ({ method: 'DELETE', path: `/api/v1/me/authorizations/${state.grantedApps[n]}` })],
  ['deleteApp', (state, n) => ({ method: 'DELETE', path: `/api/v1/me/apps/${state.createdApps[n]}` })],
  ['deleteWebhook', (state, n) => ({ method: 'DELETE', path: `/api/v1/teams/writers/webhooks/${state.createdWebhooks[n]}` })],
];

/**
 * Requests an operation must refuse as bad input, whoever signed in sends them: 400 with the problem's `code`
 * (the role matrix sends each as every signed-in role).
 */
export const INVALID_SAMPLES: [operationId: string, sample: Sample, code: string][] = [
  // the members' events were `membership.*` before the change stream; the old names are unknown types now
  // (`,` and `/` in a query value are percent-encoded: the document does not allow them reserved)
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json&types=page.updated%2Cmembership.added' }, 'invalid_event_type'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json&types=nope' }, 'invalid_event_type'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json&since=-1' }, 'validation_failed'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json&since=abc' }, 'validation_failed'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=xml' }, 'validation_failed'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json&per_page=0' }, 'validation_failed'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json&note=handbook' }, 'validation_failed'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json&team=-writers' }, 'validation_failed'],
  ['streamEvents', { method: 'GET', path: '/api/v1/events?format=json', headers: { 'Last-Event-ID': 'abc' } }, 'validation_failed'],
];

/** The sample of an operation (throws for one without). */
export function sampleOf(operationId: string): (state: State, n: number) => Sample {
  const found = SAMPLES.find(([id]) => id === operationId);
  if (!found) throw new Error(`no sample request for ${operationId}`);
  return found[1];
}

/** `live`: the answer was a server-sent event stream (which never ends), read for a moment and hung up on. */
export type SampleAnswer = { status: number; body: Record<string, unknown>; text: string; headers: Headers; live?: boolean };

/** How long a live stream (text/event-stream) is read before hanging up: it never ends of itself. */
const LIVE_READ_MS = 1000;

/** Sends a sample with a bearer token (none: anonymously); never throws for a status, never waits on a live stream. */
export async function sendSample(baseUrl: string, token: string | undefined, sample: Sample): Promise<SampleAnswer> {
  const upload = sample.file ? new FormData() : undefined;
  if (sample.file) upload!.append('file', new Blob([sample.file.data]), sample.file.filename);
  const hangUp = new AbortController();
  const response = await fetch(baseUrl + sample.path, {
    method: sample.method,
    headers: {
      ...sample.headers,
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(sample.form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(sample.form ? { body: new URLSearchParams(Object.entries(sample.form).map(([key, value]) => [key, String(value)])).toString() } : {}),
    ...(upload ? { body: upload } : {}),
    signal: hangUp.signal,
  });
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await readFor(response, hangUp, LIVE_READ_MS);
    return { status: response.status, body: {}, text, headers: response.headers, live: true };
  }
  const text = await response.text();
  const json = text !== '' && (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, body: json ? (JSON.parse(text) as Record<string, unknown>) : {}, text, headers: response.headers };
}

/** What a response's body brings within `ms`, then the request aborted (for a body that may never end). */
export async function readFor(response: Response, request: AbortController, ms: number): Promise<string> {
  const timer = setTimeout(() => request.abort(), ms);
  const decoder = new TextDecoder();
  let text = '';
  const reader = response.body?.getReader();
  try {
    for (let read = await reader?.read(); reader && read && !read.done; read = await reader.read()) text += decoder.decode(read.value, { stream: true });
  } catch {
    // aborted: the stream was still open
  } finally {
    clearTimeout(timer);
    request.abort();
  }
  return text;
}

/** Records in `state` what a successful sample made (its id, index or name), for the samples that use it later. */
export function remember(operationId: string, state: State, body: Record<string, unknown>): void {
  if (operationId === 'createPage') state.createdPages.push(body.id as number);
  if (operationId === 'createApp') state.createdApps.push(body.client_id as string);
  if (operationId === 'createWebhook') state.createdWebhooks.push(body.id as number);
  if (operationId === 'createPageComment') state.createdComments.push(body.id as number);
  if (operationId === 'createIssue') state.createdIssues.push(body.index as number);
  if (operationId === 'createNoteComment') state.createdNoteComments.push(body.id as number);
  if (operationId === 'createIssueComment') state.createdIssueComments.push(body.id as number);
  if (operationId === 'createRequestComment') state.createdRequestComments.push(body.id as number);
  if (operationId === 'createAttachment') state.createdAttachments.push(Number(String(body.filelink).split('/').pop()));
  if (operationId === 'updateTeam' || operationId === 'updateTeamViaPatch') state.spareTeam = `spare${(state.renames += 1)}`;
}

export type SampleWorld = { manager: Actor; member: Actor; state: State };

/** The world the samples expect, made through the API (users `manager`, `member`, `extra0`, `extra1`). */
export async function seedSampleWorld(app: TestApp): Promise<SampleWorld> {
  const manager = await makeUser(app, 'manager');
  const member = await makeUser(app, 'member');
  const extraUsers = [];
  for (const username of ['extra0', 'extra1']) extraUsers.push(await makeUser(app, username));
  const seed = async (sample: Sample, token = manager.token) => {
    const answer = await sendSample(app.baseUrl, token, sample);
    if (answer.status >= 300) throw new Error(`${sample.method} ${sample.path}: ${answer.status} ${answer.text.slice(0, 400)}`);
    return answer.body;
  };
  // the scenario, through the API
  await seed({ method: 'POST', path: '/api/v1/teams', form: { 'team[name]': 'writers' } });
  await seed({ method: 'POST', path: '/api/v1/teams', form: { 'team[name]': 'spare' } });
  await seed({ method: 'POST', path: '/api/v1/teams/writers/users', form: { username: 'member', role: 'member' } });
  await seed({ method: 'POST', path: '/api/v1/notes', form: { 'note[title]': 'Handbook', 'note[team]': 'writers', 'note[slug]': 'handbook', 'note[description]': 'How we work' } });
  await seed({ method: 'POST', path: `${NOTE}/pages`, form: { 'page[title]': 'Welcome', 'page[content]': '<p>Hello</p>' } });
  const guide = (await seed({ method: 'POST', path: `${NOTE}/pages`, form: { 'page[title]': 'Guide', 'page[content]': '<p>How</p>' } })).id as number;
  const pageId = (await seed({ method: 'POST', path: `${NOTE}/pages`, form: { 'page[title]': 'Releases', 'page[content]': '<p>Release steps</p>', 'page[parent]': guide } })).id as number;
  const rollback = (await seed({ method: 'POST', path: `${NOTE}/pages`, form: { 'page[title]': 'Rollback', 'page[content]': '<p>Redeploy</p>', 'page[parent]': pageId } })).id as number;
  await seed({ method: 'PUT', path: `${NOTE}/${pageId}`, form: { 'page[content]': '<p>Release steps, reviewed</p>' } }, member.token);
  await seed({ method: 'PUT', path: `${NOTE}/${pageId}`, form: { 'page[content]': '<p>Release steps, reviewed twice</p>' } });
  await seed({ method: 'POST', path: `${NOTE}/${pageId}/comments`, form: { 'comment[comment]': 'First!' } }, member.token);
  await seed({ method: 'POST', path: `${NOTE}/issues`, form: { 'issue[title]': 'Proofread the guide', 'issue[to_user]': 'manager' } }, member.token);
  await seed({ method: 'POST', path: `${NOTE}/issues/1/tags`, form: { 'tags[]': 'docs' } }, member.token);
  await seed({ method: 'POST', path: `${NOTE}/comments`, form: { 'comment[comment]': 'Hello @manager', 'mentions[]': 'manager' } }, member.token);
  const notifications = await fetch(`${app.baseUrl}/api/v1/notifications`, { headers: { Authorization: `Bearer ${manager.token}` } }).then((response) => response.json()) as { id: number }[];

  // a fork of the handbook with a changed page, proposed back four times (requests #1 to #4)
  const forkId = (await seed({ method: 'POST', path: `${NOTE}/forks` })).id as number;
  const [forkPage] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [forkId, rollback]);
  await seed({ method: 'PUT', path: `/api/v1/manager/${forkId}/${forkPage!.id}`, form: { 'page[content]': '<p>Redeploy, from the fork</p>' } });
  const [forkVersion] = await app.em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [forkPage!.id]);
  for (let i = 0; i < 4; i += 1) await seed({ method: 'POST', path: `/api/v1/manager/${forkId}/requests`, form: { 'page_versions[]': forkVersion!.id } });

  const state: State = {
    forkId,
    forkVersionId: forkVersion!.id,
    transitionRequests: [1, 2],
    mergeRequests: [3, 4],
    pageId,
    createdTeams: ['scratch0', 'scratch1'],
    createdNotes: ['scratch0', 'scratch1'],
    createdPages: [],
    createdComments: [],
    createdIssues: [],
    createdNoteComments: [],
    createdIssueComments: [],
    createdRequestComments: [],
    createdAttachments: [],
    notificationId: notifications[0]!.id,
    extraUsers: extraUsers.map(({ user }) => ({ id: user.id, username: user.username })),
    spareTeam: 'spare',
    renames: 0,
    createdApps: [],
    createdWebhooks: [],
    grantedApps: [],
    spareTokens: [],
    jobs: [],
  };
  // tokens to revoke, and apps the manager authorized, for revokeToken and revokeAuthorization
  for (const n of [0, 1]) {
    const em = app.em();
    state.spareTokens.push((await issueToken(em, manager.user, { scope: 'read', label: `spare ${n}` })).token.id);
    const { client } = await createClient(em, { name: `Granted ${n}`, redirectUris: ['https://granted.example/cb'], confidential: false });
    await recordGrant(em, manager.user.id, client.id, 'write');
    state.grantedApps.push(client.clientId);
    state.jobs.push(await makeJob(app, manager.user.id));
  }
  return { manager, member, state };
}

/** A finished job of the user's (getJob reads it), made directly in the table. */
export async function makeJob(app: { em(): import('@mikro-orm/postgresql').EntityManager }, userId: number): Promise<number> {
  const [row] = await app.em().execute<{ id: number }[]>(
    "insert into jobs (kind, user_id, state, error_code, error_detail) values ('import', ?, 'failed', 'not_a_zip', 'a sample') returning id", [userId]);
  return row!.id;
}
