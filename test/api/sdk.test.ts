// The generated client SDK, used as a client of the service would use it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import {
  addTeamUser, createNote, createPage, createTeam, deletePage, diffPageVersions, getMe, getNote, getPage, getTeam, listContributors,
  listNotes, listPages, listPageVersions, restorePageVersion, updateNote, updatePage,
} from '../../generated/client/index.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let alice: Actor;
let bob: Actor;

beforeAll(async () => {
  app = await startTestApp();
  alice = await makeUser(app, 'alice');
  bob = await makeUser(app, 'bob');
});
afterAll(async () => app?.close());

const clientFor = (actor: Actor) => createClient({ baseUrl: app.baseUrl, auth: () => actor.token });

describe('the generated client', () => {
  it('drives teams and notes end to end', async () => {
    const client = clientFor(alice);
    const me = await getMe({ client, throwOnError: true });
    expect(me.data.username).toBe('alice');

    const team = await createTeam({ client, body: { team: { name: 'sdk-team' } }, throwOnError: true });
    expect(team.data.role).toBe('manager');
    await addTeamUser({ client, path: { team: 'sdk-team' }, body: { username: 'bob', role: 'member' }, throwOnError: true });

    const created = await createNote({ client, body: { note: { title: 'From the SDK', team: 'sdk-team', slug: 'sdk-note', is_private: true } }, throwOnError: true });
    expect(created.data.user_id).toBe(alice.user.id);

    const updated = await updateNote({ client, path: { team: 'sdk-team', note: 'sdk-note' }, body: { note: { title: 'Renamed', team: 'sdk-team' } }, throwOnError: true });
    expect(updated.data.title).toBe('Renamed');
    expect((await app.em().findOneOrFail(Note, created.data.id)).title).toBe('Renamed');

    const asBob = await getNote({ client: clientFor(bob), path: { team: 'sdk-team', note: 'sdk-note' }, throwOnError: true });
    expect(asBob.data.can_manage).toBe(false);
    const listed = await listNotes({ client: clientFor(bob), query: { team: 'sdk-team' }, throwOnError: true });
    expect(listed.data.map((note) => note.id)).toEqual([created.data.id]);
    const shown = await getTeam({ client: clientFor(bob), path: { team: 'sdk-team' }, throwOnError: true });
    expect(shown.data.members.map((user) => user.username)).toEqual(['bob']);
  });

  it('drives pages and their history', async () => {
    const client = clientFor(alice);
    await createNote({ client, body: { note: { title: 'Wiki', team: 'alice', slug: 'wiki' } }, throwOnError: true });
    const note = { team: 'alice', note: 'wiki' };
    const root = await createPage({ client, path: note, body: { page: { title: 'Home', content: 'hello' } }, throwOnError: true });
    expect(root.data.is_cover).toBe(true);
    const child = await createPage({ client, path: note, body: { page: { title: 'Child', content: 'a', parent: root.data.id } }, throwOnError: true });
    expect(child.data.path).toBe('Home / Child');
    const read = await getPage({ client, path: { ...note, page: child.data.id }, throwOnError: true });
    const etag = read.response.headers.get('etag')!;
    await updatePage({ client, path: { ...note, page: child.data.id }, headers: { 'If-Match': etag }, body: { page: { content: 'b' } }, throwOnError: true });
    const stale = await updatePage({ client, path: { ...note, page: child.data.id }, headers: { 'If-Match': etag }, body: { page: { content: 'c' } } });
    expect(stale.response?.status).toBe(412);
    const versions = await listPageVersions({ client, path: { ...note, page: child.data.id }, throwOnError: true });
    expect(versions.data.map((version) => version.index)).toEqual([2, 1]);
    const diff = await diffPageVersions({ client, path: { ...note, page: child.data.id }, throwOnError: true });
    expect(diff.data.html).toContain('<ins>');
    const restored = await restorePageVersion({ client, path: { ...note, page: child.data.id, index: 1 }, throwOnError: true });
    expect(restored.data.content).toBe('a');
    const listed = await listPages({ client, path: note, query: { parent: 'root' }, throwOnError: true });
    expect(listed.data).toMatchObject({ last_page: true, pages: [{ id: root.data.id }] });
    const contributors = await listContributors({ client, path: note, throwOnError: true });
    expect(contributors.data.map((user) => user.username)).toEqual(['alice']);
    await deletePage({ client, path: { ...note, page: root.data.id }, throwOnError: true });
    expect((await getPage({ client, path: { ...note, page: child.data.id } })).response?.status).toBe(404);
  });

  it('merges a write from an older version, and types the edit conflict', async () => {
    const client = clientFor(alice);
    await createNote({ client, body: { note: { title: 'Shared', team: 'alice', slug: 'shared' } }, throwOnError: true });
    const note = { team: 'alice', note: 'shared' };
    const page = await createPage({ client, path: note, body: { page: { title: 'Plan', content: '<p>one</p>\n<p>two</p>\n<p>three</p>' } }, throwOnError: true });
    const read = page.data.version;
    expect(read).toBe(1);
    const path = { ...note, page: page.data.id };
    await updatePage({ client, path, body: { page: { content: '<p>ONE</p>\n<p>two</p>\n<p>three</p>', base_version: read } }, throwOnError: true });
    const merged = await updatePage({ client, path, body: { page: { content: '<p>one</p>\n<p>two</p>\n<p>THREE</p>', base_version: read } }, throwOnError: true });
    expect(merged.data.content).toBe('<p>ONE</p>\n<p>two</p>\n<p>THREE</p>');
    expect(merged.data.merge).toEqual({ base_version: 1, merged_over: [2], result: 'merged' });
    const refused = await updatePage({ client, path, query: { on_conflict: 'fail' }, body: { page: { content: '<p>1</p>', base_version: read } }, throwOnError: false });
    expect(refused.response?.status).toBe(409);
    expect(refused.error).toMatchObject({ code: 'edit_conflict', latest_version: 3, latest_content: merged.data.content, conflicts: [] });
  });

  it('gets problem details as typed errors', async () => {
    const outsider = await makeUser(app, 'carol');
    const result = await getNote({ client: clientFor(outsider), path: { team: 'sdk-team', note: 'sdk-note' }, throwOnError: false });
    expect(result.response?.status).toBe(404);
    expect(result.error).toMatchObject({ status: 404, code: 'not_found' });
  });
});
