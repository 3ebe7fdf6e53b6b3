// Domain events: services record what happened; the activity log and the notifications follow from them in the same
// transaction. No service decides who is notified.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log } from '../../src/modules/logs/log.entity.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makePage, makePageComment, notePath } from '../support/factories.ts';
import { makeScenario, type Scenario } from '../support/scenario.ts';

let app: TestApp;
let s: Scenario;

beforeAll(async () => {
  app = await startTestApp();
  s = await makeScenario(app);
});
afterAll(async () => app?.close());

const source = path.resolve(import.meta.dirname, '..', '..', 'src');
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(path.join(dir, entry.name)) : [path.join(dir, entry.name)]);
}

describe('domain events', () => {
  it('no service imports the notifications or the activity log', () => {
    const services = files(source).filter((file) => /\.(service|writer)\.ts$/.test(file));
    expect(services.length).toBeGreaterThan(5);
    for (const file of services) {
      expect(readFileSync(file, 'utf8'), path.relative(source, file)).not.toMatch(/from '[^']*(notifications|logs)\/[^']*'/);
    }
  });

  it('writes an activity log entry for each change, in the same transaction, with who did it', async () => {
    const created = await s.member.client.post('/api/v1/notes', { json: { note: { title: 'Logged', team: s.team.name, slug: 'logged' } } });
    expect(created.status).toBe(200);
    const note = await app.em().findOneOrFail(Note, created.body.id);
    const page = await makePage(app, note, s.member, { title: 'First' });
    const url = `${await notePath(app, note)}/${page.id}`;
    expect((await s.manager.client.put(url, { json: { page: { content: '<p>second</p>' } } })).status).toBe(200);
    await makePageComment(page, s.outsider, { comment: 'nice' });
    expect((await s.manager.client.delete(url)).status).toBe(204);
    const entries = await app.em().find(Log, { team: s.team.id }, { orderBy: { id: 'asc' } });
    expect(entries.map((entry) => [entry.type, entry.action, entry.user.id])).toEqual([
      ['note', 'create', s.member.user.id],
      ['page', 'create', s.member.user.id],
      ['page', 'update', s.manager.user.id],
      ['comment', 'create', s.outsider.user.id],
      ['page', 'delete', s.manager.user.id],
    ]);
    expect(entries.at(-1)!.summary).toMatchObject({ page_id: page.id, title: 'First' });
  });

  it('a rejected change writes neither a log entry nor a notification', async () => {
    const logs = await app.em().count(Log, {});
    const notifications = await app.em().count(Notification, {});
    const answer = await s.member.client.post('/api/v1/notes', { json: { note: { title: 'Taken', team: s.team.name, slug: 'logged' } } });
    expect(answer.status).toBe(409);
    expect(await app.em().count(Log, {})).toBe(logs);
    expect(await app.em().count(Notification, {})).toBe(notifications);
  });
});
