// Helpers for the fork and request tests: big page trees written straight into the database (a thousand POSTs would
// test nothing more), and a fork made through the API.
import type { Note } from '../../src/modules/notes/note.entity.ts';
import type { TestApp } from './app.ts';
import { expect } from 'vitest';
import { makeNote, makePage, notePath, type Actor } from './factories.ts';
import type { Scenario } from './scenario.ts';

/**
 * `count` pages in `note`, each with one version written by `authorId`: page i (from 0) is under page i - 1 when
 * i % 10 is not 0 (chains of ten), at the top level otherwise. Three statements whatever the count.
 */
export async function bulkPages(app: TestApp, note: Note, authorId: number, count: number): Promise<void> {
  const em = app.em();
  await em.execute(
    `insert into pages (note_id, parent_id, position, title, content, lock_version, version_sequence, created_at, updated_at)
     select ?, null, i, 'Page ' || i, '<p>Content of page ' || i || '</p>', 1, 1, now(), now() from generate_series(0, ? - 1) i`,
    [note.id, count],
  );
  await em.execute(
    `update pages child set parent_id = parent.id from pages parent
      where child.note_id = ? and parent.note_id = ? and child.position % 10 <> 0 and parent.position = child.position - 1`,
    [note.id, note.id],
  );
  await em.execute(
    `insert into page_versions (page_id, note_id, index, title, content, diff, user_id, created_at)
     select id, note_id, 1, title, content, '<div class="diff"></div>', ?, now() from pages where note_id = ?`,
    [authorId, note.id],
  );
}

/** Forks `note` with `actor`'s client (into their default team unless `team`), answering the fork as the API does. */
export async function forkNote(app: TestApp, note: Note, actor: Actor, body: { title?: string; team?: string } = {}) {
  const path = `${await notePath(app, note)}/forks`;
  const answer = await actor.client.post(path, { json: body });
  if (answer.status !== 200) throw new Error(`forkNote: POST ${path} answered ${answer.status}: ${answer.text}`);
  return answer.body as { id: number; team: { name: string }; title: string };
}

export const DEPLOY = '<h1>Deploy</h1>\n<p>Run make deploy from a clean checkout.</p>\n<p>Then check the dashboard.</p>\n';

let runbooks = 0;
/**
 * A public note of the scenario's team with two pages (Deploy, Other), forked by the outsider into their default
 * team; the fork's copies, the paths, and helpers to edit either side and to open a request.
 */
export async function forkedRunbook(app: TestApp, cast: Pick<Scenario<never>, 'team' | 'manager' | 'member' | 'outsider'>) {
  const { manager, member, outsider } = cast;
  runbooks += 1;
  const number = runbooks;
  const note = await makeNote(app, cast.team, manager.user, { title: `Runbook ${number}`, slug: `runbook-${number}` });
  const deploy = await makePage(app, note, member, { title: 'Deploy', content: DEPLOY });
  const other = await makePage(app, note, member, { title: 'Other', content: '<p>other</p>' });
  const fork = await forkNote(app, note, outsider);
  const copies = await app.em().execute<{ id: number; origin_page_id: number }[]>('select id, origin_page_id from pages where note_id = ?', [fork.id]);
  const copyOf = (pageId: number) => copies.find((row) => row.origin_page_id === pageId)!.id;
  const upstreamPath = `/api/v1/${cast.team.name}/${note.slug}`;
  const forkPath = `/api/v1/${fork.team.name}/${fork.id}`;
  return {
    number,
    note,
    fork,
    deploy,
    other,
    forkDeploy: copyOf(deploy.id),
    forkOther: copyOf(other.id),
    upstreamPath,
    forkPath,
    /** Writes the fork's page (as otto) and answers the id of the version written. */
    async editFork(pageId: number, content: string) {
      const answer = await outsider.client.put(`${forkPath}/${pageId}`, { json: { page: { content } } });
      expect(answer.status, answer.text).toBe(200);
      return latestVersionOf(app, pageId);
    },
    async editUpstream(pageId: number, content: string) {
      expect((await member.client.put(`${upstreamPath}/${pageId}`, { json: { page: { content } } })).status).toBe(200);
    },
    async request(versions: number[], extra: Record<string, unknown> = {}) {
      const answer = await outsider.client.post(`${forkPath}/requests`, { json: { page_versions: versions, ...extra } });
      expect(answer.status, answer.text).toBe(200);
      return answer.body;
    },
  };
}

export const latestVersionOf = async (app: TestApp, pageId: number) =>
  (await app.em().execute<{ id: number }[]>('select id from page_versions where page_id = ? order by index desc limit 1', [pageId]))[0]!.id;
export const contentOfPage = async (app: TestApp, pageId: number) => (await app.em().execute<{ content: string }[]>('select content from pages where id = ?', [pageId]))[0]!.content;
