// Concurrent moves must keep the page tree a tree. On PostgreSQL the moves really run in parallel (PGlite runs one
// connection, so there they queue and this shows only the outcome): two moves that together would make a cycle
// cannot both succeed; the one that lost the race answers 409 `concurrent_change`, never a cycle or a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, notePath } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario;

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app);
});
afterAll(async () => app?.close());

/** Every page of the note reaches the top level in at most as many steps as there are pages. */
async function treeIsATree(noteId: number): Promise<boolean> {
  const rows = await app.em().execute<{ id: number; parent_id: number | null }[]>('select id, parent_id from pages where note_id = ?', [noteId]);
  const parents = new Map(rows.map((row) => [row.id, row.parent_id]));
  return rows.every((row) => {
    let at: number | null | undefined = row.id;
    for (let steps = 0; steps <= rows.length; steps += 1) {
      at = parents.get(at!);
      if (at === null) return true;
    }
    return false;
  });
}

/**
 * Exactly one move wins. The other lost a race (409 `concurrent_change`: it was valid in the tree it started from) or,
 * where it started after the winner had committed (always so on PGlite), was a cycle from the start (422).
 */
function expectOneWinner(answers: { status: number; body: { code?: string } }[], round: number): void {
  const [won, lost] = [...answers].sort((a, b) => a.status - b.status);
  expect(won!.status, `round ${round}`).toBe(200);
  expect([[409, 'concurrent_change'], [422, 'page_cycle']], `round ${round}`).toContainEqual([lost!.status, lost!.body.code]);
}

describe('updatePage: concurrent moves', () => {
  it('never makes a cycle out of two crossing moves (A under Y while B under X, X under A, Y under B)', async () => {
    for (let round = 0; round < 10; round += 1) {
      const note = await makeNote(app, s.team, s.manager.user, { slug: `cross-${round}` });
      const a = await makePage(app, note, s.member, { title: 'A' });
      const b = await makePage(app, note, s.member, { title: 'B' });
      const x = await makePage(app, note, s.member, { title: 'X', parent: a.id });
      const y = await makePage(app, note, s.member, { title: 'Y', parent: b.id });
      const base = await notePath(app, note);
      const answers = await Promise.all([
        s.member.client.put(`${base}/${a.id}`, { json: { page: { parent: y.id } } }),
        s.manager.client.put(`${base}/${b.id}`, { json: { page: { parent: x.id } } }),
      ]);
      expectOneWinner(answers, round);
      expect(await treeIsATree(note.id)).toBe(true);
      const listed = await s.member.client.get(`${base}/pages`);
      expect(listed.body.pages).toHaveLength(4);
    }
  });

  it('never deadlocks into a 500 moving A under B while B moves under A', async () => {
    for (let round = 0; round < 10; round += 1) {
      const note = await makeNote(app, s.team, s.manager.user, { slug: `swap-${round}` });
      const a = await makePage(app, note, s.member, { title: 'A' });
      const b = await makePage(app, note, s.member, { title: 'B' });
      const base = await notePath(app, note);
      const answers = await Promise.all([
        s.member.client.put(`${base}/${a.id}`, { json: { page: { parent: b.id } } }),
        s.manager.client.put(`${base}/${b.id}`, { json: { page: { parent: a.id } } }),
      ]);
      expectOneWinner(answers, round);
      expect(await treeIsATree(note.id)).toBe(true);
    }
  });

  it('still answers 422 page_cycle to a move that was a cycle from the start', async () => {
    const note = await makeNote(app, s.team, s.manager.user, { slug: 'plain-cycle' });
    const a = await makePage(app, note, s.member, { title: 'A' });
    const b = await makePage(app, note, s.member, { title: 'B', parent: a.id });
    const answer = await s.member.client.put(`${await notePath(app, note)}/${a.id}`, { json: { page: { parent: b.id } } });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('page_cycle');
    expect(await treeIsATree(note.id)).toBe(true);
  });
});
