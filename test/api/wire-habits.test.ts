// The old clients' wire habits (design.md, "Wire habits"), checked on several existing operations: they are handled
// once, in src/http (input-guard.ts for the query, form-coercion.ts for bodies), not per operation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Page } from '../../src/modules/pages/page.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makePage, type Actor } from '../support/factories.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor;
let notePath: string;
let pageId: number;

beforeAll(async () => {
  app = await startTestApp();
  ({ manager, member } = await makeScenario(app, { team: 'habits' }));
  const note = await makeNote(app, 'habits', manager.user, { slug: 'old-clients', title: 'Old clients' });
  notePath = '/api/v1/habits/old-clients';
  pageId = (await makePage(app, note, member, { title: 'Root' })).id;
  await makePage(app, note, member, { title: 'Child', parent: pageId });
});
afterAll(async () => app?.close());

describe('an empty query value is an absent parameter', () => {
  it('on listNotes (?team=&type=), listPages (?page=&parent=all), listUsers and listPageComments (?page=&per_page=)', async () => {
    const notes = await member.client.get('/api/v1/notes?team=&type=');
    expect(notes.status, notes.text).toBe(200);
    expect(notes.body).toEqual((await member.client.get('/api/v1/notes')).body);

    const pages = await member.client.get(`${notePath}/pages?page=&parent=all`);
    expect(pages.status, pages.text).toBe(200);
    expect(pages.body).toEqual((await member.client.get(`${notePath}/pages?parent=all`)).body);
    // a bare key (no `=`) too, and on the .json path
    const bare = await member.client.get(`${notePath}/pages.json?page&order=`);
    expect(bare.status, bare.text).toBe(200);

    const users = await member.client.get('/api/v1/users?page=&per_page=');
    expect(users.status, users.text).toBe(200);
    expect(users.headers.get('x-total-count')).toBeTruthy();

    const comments = await member.client.get(`${notePath}/${pageId}/comments?page=&per_page=`);
    expect(comments.status, comments.text).toBe(200);
  });

  it('still refuses a value that is not empty and wrong', async () => {
    expect((await member.client.get('/api/v1/notes?type=nonsense')).status).toBe(400);
    expect((await member.client.get(`${notePath}/pages?page=x`)).status).toBe(400);
  });
});

describe('form keys with no value', () => {
  it('a bare key is an empty value (note[slug] unsets the slug), a bare array key an empty array', async () => {
    const created = await manager.client.post('/api/v1/notes', { form: 'note%5Btitle%5D=Bare&note%5Bteam%5D=habits&note%5Bslug%5D' });
    expect(created.status, created.text).toBe(200);
    expect((await app.em().findOneOrFail(Note, created.body.id)).slug).toBeNull();
    const comment = await member.client.post(`${notePath}/${pageId}/comments`, { form: 'comment%5Bcomment%5D=hi&mentions%5B%5D' });
    expect(comment.status, comment.text).toBe(200);
    expect(comment.body.mentions).toEqual([]);
  });
});

describe('computed fields sent back by old clients', () => {
  it('createNote and updateNote ignore the note fields the service computes, and refuse names a note lacks', async () => {
    const form = 'note%5Btitle%5D=Echo&note%5Bteam%5D=habits&note%5Bformat%5D=html&note%5Bid%5D=999&note%5Bshare%5D=none'
      + '&note%5Bhtml_url%5D=http%3A%2F%2Fx&note%5Bcan_manage%5D=true&note%5Bmodel%5D=note&note%5Bis_private%5D=0';
    const created = await manager.client.post('/api/v1/notes', { form });
    expect(created.status, created.text).toBe(200);
    expect(created.body.id).not.toBe(999);
    expect(created.body).toMatchObject({ title: 'Echo', format: 'html', is_private: false });
    const json = await manager.client.put(`/api/v1/habits/${created.body.id}`, {
      json: { note: { ...created.body, title: 'Echo 2', team: 'habits' } },
    });
    expect(json.status, json.text).toBe(200);
    expect((await app.em().findOneOrFail(Note, created.body.id)).title).toBe('Echo 2');

    for (const bad of ['note%5Blabel%5D=x', 'note%5Bnonsense%5D=1']) {
      const answer = await manager.client.post('/api/v1/notes', { form: `note%5Btitle%5D=Bad&note%5Bteam%5D=habits&${bad}` });
      expect(answer.status, bad).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
    }
  });

  it('createPage and updatePage ignore the page fields the service computes, and refuse names a page lacks', async () => {
    const form = 'page%5Btitle%5D=Echo&page%5Bcontent%5D=%3Cp%3Ex%3C%2Fp%3E&page%5Bid%5D=5&page%5Bpath%5D=A+%2F+B&page%5Bhtml_url%5D=x&page%5Bmodel%5D=page';
    const created = await member.client.post(`${notePath}/pages`, { form });
    expect(created.status, created.text).toBe(200);
    expect(created.body.path).toBe('Echo');
    const updated = await member.client.patch(`${notePath}/${created.body.id}`, { json: { page: { ...created.body, title: 'Echo 2', parent: null } } });
    expect(updated.status, updated.text).toBe(200);
    expect((await app.em().findOneOrFail(Page, created.body.id)).title).toBe('Echo 2');
    const bad = await member.client.post(`${notePath}/pages`, { form: 'page%5Btitle%5D=X&page%5Bcontent%5D=y&page%5Blabel%5D=z' });
    expect(bad.status).toBe(400);
  });
});
