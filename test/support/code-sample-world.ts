// The world the code samples of the API reference run in (test/api/code-samples.test.ts): the users, teams, notes
// and objects the document's examples name (alice and bob, the team `platform`, `dev-team/runbook` for the MCP
// example), and for every operation a fixture that gives its samples' variables values ($TEAM, $PAGE, $ID, ...),
// with objects made anew for each run where the sample changes or deletes something.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { issueToken } from '../../src/modules/auth/tokens.ts';
import { createClient } from '../../src/modules/oauth/clients.ts';
import { recordGrant } from '../../src/modules/oauth/model.ts';
import type { TestApp } from './app.ts';
import { makeNote, makeTeam, makeUser, uniqueName, type Actor } from './factories.ts';
import { givePassword } from './oauth.ts';
import { makeJob } from './samples.ts';

/** What the world's attachment holds, and what the upload samples send. */
export const UPLOADED = 'Release checklist\n';

/** Values for a run's variables; `check` looks at what a successful run left, `after` undoes what was moved aside. */
export type Variables = { [name: string]: string | number | (() => unknown) | undefined; check?: () => void; after?: () => Promise<void> };
export type World = {
  alice: Actor;
  bob: Actor;
  /** platform/handbook: pages (`page`, with three versions), an issue, a request from a fork, an attachment, a webhook */
  note: string;
  page: number;
  issue: number;
  request: number;
  attachment: number;
  webhook: number;
  notification: number;
  /** alice's fork of the handbook, in her team */
  fork: number;
  /** dev-team/runbook, the note the MCP example names, and its page */
  mcpPage: number;
  upload: string;
};

let app: TestApp;
let world: World;
/** A folder of the test's: the file to upload, and where downloads and curl's answers go (`answer.body`). */
let scratch: string;

/** Calls the API as alice (or bob) and answers the body; a refusal throws, so no run starts from a half-made world. */
async function api(method: string, target: string, json?: unknown, actor: 'alice' | 'bob' = 'alice'): Promise<any> {
  const answer = await world[actor].client.request(method, target, json === undefined ? {} : { json });
  if (answer.status >= 300) throw new Error(`${method} ${target}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer.body;
}

const freshNote = async (team = 'platform') => {
  const alice = world.alice.user;
  const note = await makeNote(app, team, alice, { slug: uniqueName('note'), title: 'Scratch note' });
  return note.slug!;
};
const freshPage = async (note = world.note) => (await api('POST', `/api/v1/platform/${note}/pages`, { page: { title: 'Scratch', content: '<p>draft</p>' } })) as { id: number; version: number };
const freshTeam = async (members: 'bob' | 'none' = 'none') => {
  const name = uniqueName('team');
  await makeTeam(app, name, [{ user: world.alice.user, role: 'manager' }, ...(members === 'bob' ? [{ user: world.bob.user, role: 'member' as const }] : [])]);
  return name;
};
/** A fork of the handbook with its page changed and another page deleted: what a request proposes. */
async function freshProposal(): Promise<{ fork: number; version: number; deleted: number }> {
  const doomed = await freshPage();
  const fork = (await api('POST', `/api/v1/platform/${world.note}/forks`, {})).id as number;
  const [copy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork, world.page]);
  const [doomedCopy] = await app.em().execute<{ id: number }[]>('select id from pages where note_id = ? and origin_page_id = ?', [fork, doomed.id]);
  await api('PUT', `/api/v1/alice/${fork}/${copy!.id}`, { page: { content: `<p>Release steps, from fork ${fork}</p>` } });
  await api('DELETE', `/api/v1/alice/${fork}/${doomedCopy!.id}`);
  const [version] = await app.em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [copy!.id]);
  return { fork, version: version!.id, deleted: doomed.id };
}
const freshRequest = async () => {
  const { fork, version } = await freshProposal();
  return (await api('POST', `/api/v1/alice/${fork}/requests`, { page_versions: [version] })).index as number;
};
/** Moves the team `platform` aside while a sample makes a team of that name, and puts it back after. */
async function platformAside(): Promise<() => Promise<void>> {
  const aside = uniqueName('aside');
  await api('PUT', '/api/v1/teams/platform', { team: { name: aside } });
  return async () => {
    // the team the sample made, if it made one
    const made = await world.alice.client.delete('/api/v1/teams/platform');
    if (made.status !== 204 && made.status !== 404) throw new Error(`DELETE /api/v1/teams/platform: ${made.status} ${made.text}`);
    await api('PUT', `/api/v1/teams/${aside}`, { team: { name: 'platform' } });
  };
}
/** Deletes platform/runbook, which the note samples create (slug `runbook` in the body). */
async function noRunbook(): Promise<void> {
  const answer = await world.alice.client.delete('/api/v1/platform/runbook');
  if (answer.status !== 204 && answer.status !== 404) throw new Error(`DELETE platform/runbook: ${answer.status} ${answer.text}`);
}

const handbook = () => ({ TEAM: 'platform', NOTE: world.note });

/** What each operation's samples need, made anew for every run. */
export const FIXTURES: Record<string, () => Promise<Variables>> = {
  listNotes: async () => ({}),
  createNote: async () => (await noRunbook(), {}),
  getNote: async () => handbook(),
  updateNote: async () => (await noRunbook(), { TEAM: 'platform', NOTE: await freshNote() }),
  updateNoteViaPatch: async () => (await noRunbook(), { TEAM: 'platform', NOTE: await freshNote() }),
  deleteNote: async () => ({ TEAM: 'platform', NOTE: await freshNote() }),
  listContributors: async () => handbook(),
  createFork: async () => handbook(),
  pullFork: async () => ({ TEAM: 'alice', NOTE: world.fork }),
  listNoteComments: async () => handbook(),
  createNoteComment: async () => handbook(),
  deleteNoteComment: async () => ({ ...handbook(), ID: (await api('POST', `/api/v1/platform/${world.note}/comments`, { comment: { comment: 'To delete' } })).id }),
  listPages: async () => handbook(),
  createPage: async () => ({ ...handbook(), PARENT: world.page }),
  getPage: async () => ({ ...handbook(), PAGE: world.page }),
  updatePage: async () => {
    const page = await freshPage();
    return { ...handbook(), PAGE: page.id, BASE_VERSION: page.version };
  },
  updatePageViaPatch: async () => {
    const page = await freshPage();
    return { ...handbook(), PAGE: page.id, BASE_VERSION: page.version };
  },
  deletePage: async () => ({ ...handbook(), PAGE: (await freshPage()).id }),
  listPageComments: async () => ({ ...handbook(), PAGE: world.page }),
  createPageComment: async () => ({ ...handbook(), PAGE: world.page }),
  deletePageComment: async () => ({ ...handbook(), PAGE: world.page, ID: (await api('POST', `/api/v1/platform/${world.note}/${world.page}/comments`, { comment: { comment: 'To delete' } })).id }),
  listPageVersions: async () => ({ ...handbook(), PAGE: world.page }),
  diffPageVersions: async () => ({ ...handbook(), PAGE: world.page }),
  getPageVersion: async () => ({ ...handbook(), PAGE: world.page, INDEX: 1 }),
  restorePageVersion: async () => ({ ...handbook(), PAGE: world.page, INDEX: 1 }),
  listIssues: async () => handbook(),
  createIssue: async () => handbook(),
  getIssue: async () => ({ ...handbook(), INDEX: world.issue }),
  updateIssue: async () => ({ ...handbook(), INDEX: world.issue }),
  updateIssueViaPut: async () => ({ ...handbook(), INDEX: world.issue }),
  deleteIssue: async () => ({ ...handbook(), INDEX: (await api('POST', `/api/v1/platform/${world.note}/issues`, { issue: { title: 'To delete' } })).index }),
  listIssueComments: async () => ({ ...handbook(), INDEX: world.issue }),
  createIssueComment: async () => ({ ...handbook(), INDEX: world.issue }),
  deleteIssueComment: async () => ({ ...handbook(), INDEX: world.issue, ID: (await api('POST', `/api/v1/platform/${world.note}/issues/${world.issue}/comments`, { comment: { comment: 'To delete' } })).id }),
  addIssueTags: async () => ({ ...handbook(), INDEX: world.issue }),
  listRequests: async () => handbook(),
  createRequest: async () => {
    const { fork, version, deleted } = await freshProposal();
    return { TEAM: 'alice', NOTE: fork, PAGE_VERSIONS: version, DELETED_PAGES: deleted };
  },
  getRequest: async () => ({ ...handbook(), INDEX: world.request }),
  openRequest: async () => ({ ...handbook(), INDEX: world.request }),
  closeRequest: async () => ({ ...handbook(), INDEX: world.request }),
  mergeRequest: async () => ({ ...handbook(), INDEX: await freshRequest() }),
  listRequestComments: async () => ({ ...handbook(), INDEX: world.request }),
  createRequestComment: async () => ({ ...handbook(), INDEX: world.request }),
  deleteRequestComment: async () => ({ ...handbook(), INDEX: world.request, ID: (await api('POST', `/api/v1/platform/${world.note}/requests/${world.request}/comments`, { comment: { comment: 'To delete' } })).id }),
  listAttachments: async () => handbook(),
  createAttachment: async () => ({ ...handbook(), FILE: world.upload }),
  deleteAttachment: async () => ({ ...handbook(), ID: await uploadAttachment() }),
  downloadAttachment: async () => {
    // where the curl samples' answers go anyway (runCurl), so that the sample's own --output is checked too
    const file = path.join(scratch, 'answer.body');
    rmSync(file, { force: true });
    return { ID: world.attachment, FILE: file, check: () => expect(readFileSync(file, 'utf8')).toBe(UPLOADED) };
  },
  getAttachment: async () => ({ ID: world.attachment }),
  exportNote: async () => {
    // where the curl samples' answers go anyway (runCurl), as for downloadAttachment
    const file = path.join(scratch, 'answer.body');
    rmSync(file, { force: true });
    // a zip: its first bytes are a local file header's signature
    return { ...handbook(), FILE: file, check: () => expect(readFileSync(file).subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004') };
  },
  // the upload is answered 202 at once; the job then fails (the file is not a zip), leaving nothing
  importNote: async () => ({ TEAM: 'platform', FILE: world.upload }),
  getJob: async () => ({ ID: await makeJob(app, world.alice.user.id) }),
  listTeams: async () => ({}),
  createTeam: async () => ({ after: await platformAside() }),
  getTeam: async () => ({ TEAM: 'platform' }),
  updateTeam: async () => ({ TEAM: await freshTeam(), after: await platformAside() }),
  updateTeamViaPatch: async () => ({ TEAM: await freshTeam(), after: await platformAside() }),
  deleteTeam: async () => ({ TEAM: await freshTeam() }),
  listTeamNotes: async () => ({ TEAM: 'platform' }),
  addTeamUser: async () => ({ TEAM: await freshTeam('none') }),
  removeTeamUser: async () => ({ TEAM: await freshTeam('bob'), ID: world.bob.user.id }),
  listWebhooks: async () => ({ TEAM: 'platform' }),
  createWebhook: async () => ({ TEAM: 'platform' }),
  getWebhook: async () => ({ TEAM: 'platform', ID: world.webhook }),
  updateWebhook: async () => ({ TEAM: 'platform', ID: world.webhook }),
  deleteWebhook: async () => ({ TEAM: 'platform', ID: (await api('POST', '/api/v1/teams/platform/webhooks', { webhook: { url: 'https://hooks.example.com/notes', events: ['page.updated'] } })).id }),
  listWebhookDeliveries: async () => ({ TEAM: 'platform', ID: world.webhook }),
  getMe: async () => ({}),
  listUsers: async () => ({}),
  getUser: async () => ({ USERNAME: 'bob' }),
  listUserNotes: async () => ({ USERNAME: 'alice' }),
  listUsernames: async () => ({}),
  listLogs: async () => ({}),
  streamEvents: async () => ({}),
  listMyIssues: async () => ({}),
  listChecks: async () => ({}),
  searchNotes: async () => ({}),
  listNotifications: async () => ({}),
  markNotificationsRead: async () => ({}),
  toggleNotification: async () => ({ ID: world.notification }),
  toggleNotificationViaPut: async () => ({ ID: world.notification }),
  listTokens: async () => ({}),
  revokeToken: async () => ({ ID: (await issueToken(app.em(), world.alice.user, { scope: 'read', label: 'to revoke' })).token.id }),
  listAuthorizations: async () => ({}),
  revokeAuthorization: async () => ({ CLIENT_ID: await grantedApp() }),
  listApps: async () => ({}),
  createApp: async () => ({}),
  deleteApp: async () => ({ CLIENT_ID: (await api('POST', '/api/v1/me/apps', { app: { name: 'To delete', redirect_uris: ['https://app.example/cb'] } })).client_id }),
  oauthAuthorize: async () => ({ CLIENT_ID: (await createClient(app.em(), { name: 'Signs in', redirectUris: ['https://app.example/cb'], confidential: true })).client.clientId }),
  // what the password grant takes (a first-party app, alice's password), and an app to revoke as: ready for the
  // samples these two get once the document requires them (code-samples.test.ts, AWAITING_THE_DOCUMENT)
  oauthToken: async () => ({ USERNAME: 'alice', PASSWORD: await givePassword(app, world.alice.user, 'a sample password'), CLIENT_ID: await publicApp(true) }),
  oauthRevoke: async () => ({ TOKEN: (await issueToken(app.em(), world.alice.user, { scope: 'read', label: 'to revoke through OAuth' })).secret, CLIENT_ID: await publicApp(false) }),
  oauthRegister: async () => ({}),
  oauthMetadata: async () => ({}),
  oauthProtectedResource: async () => ({}),
  oauthProtectedResourceMcp: async () => ({}),
  mcpMessage: async () => ({ PAGE: world.mcpPage }),
};

async function uploadAttachment(): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([readFileSync(world.upload)]), 'notes.txt');
  const response = await fetch(`${app.baseUrl}/api/v1/platform/${world.note}/attachments`, { method: 'POST', headers: { Authorization: `Bearer ${world.alice.token}` }, body: form });
  const body = (await response.json()) as { filelink: string };
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${JSON.stringify(body)}`);
  return Number(body.filelink.split('/').pop());
}

async function publicApp(firstParty: boolean): Promise<string> {
  return (await createClient(app.em(), { name: 'Command line', redirectUris: ['http://127.0.0.1:9/cb'], confidential: false, firstParty })).client.clientId;
}

async function grantedApp(): Promise<string> {
  const em = app.em();
  const { client } = await createClient(em, { name: 'Granted', redirectUris: ['https://granted.example/cb'], confidential: false });
  await recordGrant(em, world.alice.user.id, client.id, 'write');
  return client.clientId;
}

/** Makes the world in `testApp`, with its files in `folder`; FIXTURES act on it from then on. */
export async function makeSampleWorld(testApp: TestApp, folder: string): Promise<World> {
  app = testApp;
  scratch = folder;
  const alice = await makeUser(app, 'alice');
  const bob = await makeUser(app, 'bob');
  world = { alice, bob } as World;
  await makeTeam(app, 'platform', [{ user: alice.user, role: 'manager' }, { user: bob.user, role: 'member' }]);
  const note = 'handbook';
  await api('POST', '/api/v1/notes', { note: { title: 'Handbook', team: 'platform', slug: note } });
  world.note = note;
  const guide = await freshPage();
  world.page = guide.id;
  await api('PUT', `/api/v1/platform/${note}/${guide.id}`, { page: { content: '<p>Release steps, reviewed</p>' } });
  await api('PUT', `/api/v1/platform/${note}/${guide.id}`, { page: { content: '<p>Release steps, reviewed twice</p>' } });
  world.issue = (await api('POST', `/api/v1/platform/${note}/issues`, { issue: { title: 'Proofread the guide', to_user: 'alice' } }, 'bob')).index;
  await api('POST', `/api/v1/platform/${note}/comments`, { comment: { comment: 'Hello @alice' }, mentions: ['alice'] }, 'bob');
  world.notification = ((await api('GET', '/api/v1/notifications')) as { id: number }[])[0]!.id;
  world.upload = path.join(scratch, 'notes.txt');
  writeFileSync(world.upload, UPLOADED);
  world.attachment = await uploadAttachment();
  world.webhook = (await api('POST', '/api/v1/teams/platform/webhooks', { webhook: { url: 'https://hooks.example.com/notes', events: ['page.updated'] } })).id;
  world.request = await freshRequest();
  world.fork = (await api('POST', `/api/v1/platform/${note}/forks`, {})).id;
  // the MCP example reads page $PAGE of dev-team/runbook
  await makeTeam(app, 'dev-team', [{ user: alice.user, role: 'member' }]);
  await api('POST', '/api/v1/notes', { note: { title: 'Runbook', team: 'dev-team', slug: 'runbook' } });
  world.mcpPage = (await api('POST', '/api/v1/dev-team/runbook/pages', { page: { title: 'Deploy', content: '<p>make deploy</p>' } })).id;
  return world;
}
