// Merge-on-write under concurrency (issue 19), PostgreSQL pass only: PGlite is one connection of one process, where
// writers only queue. A page of 20 paragraphs; 20 writers at once, each from the same base version with its own
// paragraph changed to a marker of its own. Whatever the interleaving: each writer answers 200 or 409 edit_conflict,
// nothing else; every 200's marker is in the page in the end; the versions are gapless; a version merged says it was
// merged from the common base. Once through one server (its writes queue in the process, then on the page's row),
// once through this server and a second server process on the same database, whose transactions really interleave.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Page, PageVersion } from '../../src/modules/pages/page.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient, type Answer } from '../support/client.ts';
import { databaseKind, type TestDatabase } from '../support/database.ts';
import { makeNote, makePage } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';
import { freePort, projectRoot, startServerProcess, stopServerProcess, type ServerProcess } from '../support/processes.ts';

const WRITERS = 20;
const paragraph = (i: number) => `<p>Paragraph ${i} of the page, as it was.</p>\n`;
const marker = (round: string, i: number) => `[[${round}-writer-${String(i).padStart(2, '0')}]]`;

describe.skipIf(databaseKind !== 'postgres')('merge-on-write: 20 parallel writers from one base (PostgreSQL pass only)', () => {
  let app: TestApp;
  let s: Scenario;
  let second: ServerProcess | undefined;
  let secondUrl: string;
  let dataDir: string;

  beforeAll(async () => {
    app = await startTestApp();
    s = await makeScenario(app, { team: 'racers' });
    // a second server process on this database: its own pool, its own in-process queue per page
    const port = await freePort();
    secondUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'notes-merge-race-'));
    second = await startServerProcess(path.join(projectRoot, 'node_modules', '.bin', 'node'), ['src/server.ts'], {
      PATH: `${path.join(projectRoot, 'node_modules', '.bin')}:${process.env.PATH}`,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      PORT: String(port),
      PUBLIC_URL: secondUrl,
      DATA_DIR: dataDir,
      DATABASE_URL: (app.database as TestDatabase).url!,
      LOG_LEVEL: 'warn',
    });
  }, 120_000);

  afterAll(async () => {
    await stopServerProcess(second);
    await app?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs one round on a fresh page: writer i changes paragraph `paragraphOf(i)` from version 1, through `clientOf(i)`. */
  async function race(round: string, clientOf: (i: number) => ApiClient, paragraphOf: (i: number) => number = (i) => i) {
    const note = await makeNote(app, s.team, s.manager.user, { slug: `race-${round}` });
    const base = Array.from({ length: WRITERS }, (_, i) => paragraph(i));
    const page = await makePage(app, note, s.manager, { title: 'Twenty paragraphs', content: base.join('') });
    expect(page.version).toBe(1);
    const url = `/api/v1/racers/${note.slug}/${page.id}`;
    const answers = await Promise.all(base.map((_, i) => {
      const content = base.map((block, j) => (j === paragraphOf(i) ? `<p>${marker(round, i)}</p>\n` : block)).join('');
      return clientOf(i).put(url, { json: { page: { content, base_version: 1 } } });
    }));
    await expectConsistent(round, page.id, answers);
    return answers;
  }

  async function expectConsistent(round: string, pageId: number, answers: Answer[]) {
    const won = answers.flatMap((answer, i) => (answer.status === 200 ? [{ i, body: answer.body }] : []));
    answers.forEach((answer, i) => {
      // 200, or 409 edit_conflict with the page as it was then: nothing else (no 500, no deadlock, no 412)
      if (answer.status !== 200) {
        expect([answer.status, answer.body?.code], `writer ${i}: ${answer.text.slice(0, 300)}`).toEqual([409, 'edit_conflict']);
        expect(answer.body.latest_version, `writer ${i}`).toBeGreaterThanOrEqual(2);
      }
    });
    const stored = await app.em().findOneOrFail(Page, pageId);
    const versions = await app.em().find(PageVersion, { page: pageId }, { orderBy: { index: 'asc' } });
    // gapless: version 1 and one version per write that changed the page (every 200 did: each marker is new)
    expect(versions.map((version) => version.index)).toEqual(Array.from({ length: 1 + won.length }, (_, k) => k + 1));
    expect(stored.versionSequence).toBe(1 + won.length);
    expect(stored.content).toBe(versions.at(-1)!.content);
    for (const { i, body } of won) {
      expect(stored.content, `writer ${i}'s marker (answered 200) in the final content`).toContain(marker(round, i));
      expect(body.content, `writer ${i}'s own answer`).toContain(marker(round, i));
    }
    for (const [i, answer] of answers.entries()) {
      if (answer.status !== 200) expect(stored.content, `writer ${i} answered 409`).not.toContain(marker(round, i));
    }
    // every merged version names the common base; only version 1 and the one plain write are not merged
    for (const version of versions) {
      if (version.mergedFromBase !== null) expect(version.mergedFromBase, `version ${version.index}`).toBe(1);
    }
    // exactly one write found the page still at version 1 (a plain write: version 2, no merge member); every other 200
    // merged over the versions between the base and its own
    const plain = won.filter(({ body }) => body.merge === undefined);
    if (won.length > 0) expect(plain.map(({ body }) => body.version)).toEqual([2]);
    for (const { i, body } of won.filter(({ body }) => body.merge !== undefined)) {
      const mergedOver = Array.from({ length: body.version - 2 }, (_, k) => k + 2);
      expect(body.merge, `writer ${i}`).toEqual({ base_version: 1, merged_over: mergedOver, result: 'merged' });
      const version = versions[body.version - 1]!;
      expect([version.mergedFromBase, version.content.includes(marker(round, i))], `writer ${i}'s version ${body.version}`).toEqual([1, true]);
    }
    expect(versions.filter((version) => version.mergedFromBase === 1)).toHaveLength(won.length - plain.length);
    expect(new Set(won.map(({ body }) => body.version)).size).toBe(won.length);
  }

  it('through one server: each writer 200 or 409 edit_conflict, every 200 in the final content, versions gapless', async () => {
    for (const round of ['one-a', 'one-b', 'one-c']) {
      await race(round, (i) => (i % 2 === 0 ? s.member : s.manager).client);
    }
  });

  it('through two server processes at once: the same', async () => {
    const elsewhere = { member: new ApiClient(secondUrl, s.member.token), manager: new ApiClient(secondUrl, s.manager.token) };
    for (const round of ['two-a', 'two-b', 'two-c']) {
      await race(round, (i) => [s.member.client, elsewhere.member, s.manager.client, elsewhere.manager][i % 4]!);
    }
  });

  it('two writers on each of 10 paragraphs, through both servers: exactly one of each pair wins, the other answers 409', async () => {
    const elsewhere = new ApiClient(secondUrl, s.member.token);
    for (const round of ['pair-a', 'pair-b']) {
      // writers 2k (this server) and 2k + 1 (the other process) both change paragraph k
      const answers = await race(round, (i) => (i % 2 === 0 ? s.member.client : elsewhere), (i) => i >> 1);
      for (let k = 0; k < WRITERS / 2; k += 1) {
        const pair = [answers[2 * k]!, answers[2 * k + 1]!];
        expect(pair.map((answer) => answer.status).sort(), `${round}, paragraph ${k}`).toEqual([200, 409]);
        const lost = pair.find((answer) => answer.status === 409)!;
        expect(lost.body.conflicts, `${round}, paragraph ${k}`).toEqual([{ kind: 'content', regions: [expect.objectContaining({ base: paragraph(k) })] }]);
      }
    }
  });
});
