// Input a client may send but no operation means: NUL bytes, numbers past what a column holds, ids that are not
// decimal digits, forms nested too deep, bodies that lie about their encoding, a bare `.json` segment. Each answers
// 4xx problem details and changes nothing; none reaches the database.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Comment } from '../../src/modules/comments/comment.entity.ts';
import { Note } from '../../src/modules/notes/note.entity.ts';
import { Page } from '../../src/modules/pages/page.entity.ts';
import { Membership, Team } from '../../src/modules/teams/team.entity.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeNote, makeTeam, makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let alice: Actor;
let bob: Actor;
let noteId: number;
let pageId: number;
let commentId: number;
const NOTE = '/api/v1/acme/handbook';

beforeAll(async () => {
  app = await startTestApp();
  alice = await makeUser(app, 'alice');
  bob = await makeUser(app, 'bob');
  await makeTeam(app, 'acme', [
    { user: alice.user, role: 'manager' },
    { user: bob.user, role: 'member' },
  ]);
  noteId = (await makeNote(app, 'acme', alice.user, { slug: 'handbook', title: 'Handbook', description: 'How we work' })).id;
  const page = await alice.client.post(`${NOTE}/pages`, { json: { page: { title: 'Welcome', content: '<p>Hello</p>' } } });
  expect(page.status, page.text).toBe(200);
  pageId = page.body.id;
  const comment = await alice.client.post(`${NOTE}/${pageId}/comments`, { json: { comment: { comment: 'first' } } });
  expect(comment.status, comment.text).toBe(200);
  commentId = comment.body.id;
});
afterAll(async () => app?.close());

/** What the tests must find unchanged after every rejected request. */
async function snapshot() {
  const em = app.em();
  const note = await em.findOneOrFail(Note, noteId);
  const page = await em.findOneOrFail(Page, pageId);
  return {
    notes: await em.count(Note, {}),
    teams: await em.count(Team, {}),
    note: { title: note.title, description: note.description, slug: note.slug },
    pages: await em.count(Page, { note: noteId }),
    page: { title: page.title, content: page.content, parent: page.parent?.id ?? null },
    comments: await em.count(Comment, {}),
    members: (await em.find(Membership, { team: { name: 'acme' } }, { orderBy: { user: 'asc' } })).map((m) => `${m.user.id}:${m.role}`),
  };
}

function expectProblem(answer: { status: number; body: any; text: string; headers: Headers }, status: number, code: string) {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  expect(answer.body.code).toBe(code);
}

describe('lone surrogates (UTF-16 that no UTF-8 text can hold)', () => {
  // only a JSON escape can carry one: percent-encoded bytes of a surrogate (a form, a query) decode to U+FFFD
  it('answer 400 in a JSON body, with a pointer, and store nothing; a surrogate pair is a character like any other', async () => {
    const before = await snapshot();
    const raw = (body: string) => ({ raw: { contentType: 'application/json', body } });
    const page = await alice.client.post(`${NOTE}/pages`, raw('{"page":{"title":"a\\ud800b","content":"<p>x</p>"}}'));
    expectProblem(page, 400, 'validation_failed');
    expect(page.body.errors).toEqual([expect.objectContaining({ pointer: '/page/title' })]);
    expectProblem(await alice.client.post('/api/v1/notes', raw('{"note":{"title":"x\\udc00","team":"acme"}}')), 400, 'validation_failed');
    expectProblem(await alice.client.put(`${NOTE}/${pageId}`, raw('{"page":{"content":"<p>\\udfff</p>"}}')), 400, 'validation_failed');
    expectProblem(await alice.client.post(`${NOTE}/${pageId}/comments`, raw('{"comment":{"comment":"\\ud83d"}}')), 400, 'validation_failed');
    expect(await snapshot()).toEqual(before);
    const pair = await alice.client.post(`${NOTE}/pages`, raw('{"page":{"title":"\\ud83d\\ude00 pair","content":"<p>x</p>"}}'));
    expect([pair.status, pair.body.title]).toEqual([200, '\u{1F600} pair']);
  });
});

describe('NUL bytes', () => {
  it('answer 400 in a form body and store nothing', async () => {
    const before = await snapshot();
    expectProblem(await alice.client.post('/api/v1/notes', { form: 'note[title]=a%00b&note[team]=acme' }), 400, 'validation_failed');
    expectProblem(await alice.client.put(NOTE, { form: 'note[title]=Handbook&note[team]=acme&note[description]=x%00y' }), 400, 'validation_failed');
    expectProblem(await alice.client.post('/api/v1/teams', { form: 'team[name]=a%00b' }), 400, 'validation_failed');
    expectProblem(await alice.client.post('/api/v1/teams/acme/users', { form: 'username=bo%00b&role=manager' }), 400, 'validation_failed');
    expect(await snapshot()).toEqual(before);
  });

  it('answer 400 in a JSON body, with a pointer to the field, and store nothing', async () => {
    const before = await snapshot();
    const page = await alice.client.post(`${NOTE}/pages`, { json: { page: { title: 'T', content: 'a\u0000b' } } });
    expectProblem(page, 400, 'validation_failed');
    expect(page.body.errors).toEqual([expect.objectContaining({ pointer: '/page/content' })]);
    expectProblem(await alice.client.put(`${NOTE}/${pageId}`, { json: { page: { title: 'x\u0000' } } }), 400, 'validation_failed');
    expectProblem(await alice.client.post(`${NOTE}/${pageId}/comments`, { json: { comment: { comment: '\u0000' } } }), 400, 'validation_failed');
    expectProblem(await alice.client.post(`${NOTE}/${pageId}/comments`, { json: { comment: { comment: 'hi' }, mentions: ['b\u0000ob'] } }), 400, 'validation_failed');
    expect(await snapshot()).toEqual(before);
  });

  it('answer 400 in a query string', async () => {
    expectProblem(await alice.client.get('/api/v1/notes?team=a%00b'), 400, 'validation_failed');
    expectProblem(await alice.client.get(`${NOTE}/pages?order=ti%00tle`), 400, 'validation_failed');
  });

  it('answer 404 in a path segment', async () => {
    expectProblem(await alice.client.get('/api/v1/users/a%00b'), 404, 'not_found');
    expectProblem(await alice.client.get('/api/v1/users/a%00b/notes'), 404, 'not_found');
    expectProblem(await alice.client.get('/api/v1/teams/a%00b'), 404, 'not_found');
    expectProblem(await alice.client.get('/api/v1/acme/hand%00book'), 404, 'not_found');
    // the HTML views behind html_url too
    for (const path of ['/users/a%00b', '/teams/a%00b', '/acme/hand%00book', '/acme/handbook/1%00']) {
      expectProblem(await alice.client.get(path), 404, 'not_found');
    }
    const before = await snapshot();
    expectProblem(await alice.client.delete('/api/v1/acme/hand%00book'), 404, 'not_found');
    expect(await snapshot()).toEqual(before);
  });
});

describe('integers out of range', () => {
  it('answer 400 in the query', async () => {
    for (const query of ['page=99999999999999999999', 'page=1e309', 'per_page=1e309', 'page=2147483648', 'page=-1', 'per_page=101']) {
      const answer = await alice.client.get(`/api/v1/notes?${query}`);
      expectProblem(answer, 400, 'validation_failed');
      expect(answer.body.errors[0].parameter).toBe(query.split('=')[0]);
    }
    expectProblem(await alice.client.get(`${NOTE}/${pageId}/histories/diff?a=1e309`), 400, 'validation_failed');
    expectProblem(await alice.client.get(`${NOTE}/pages?page=1e309`), 400, 'validation_failed');
  });

  it('answer 404 in the path and change nothing', async () => {
    const before = await snapshot();
    for (const path of [
      `${NOTE}/${pageId}/histories/Infinity`,
      `${NOTE}/${pageId}/histories/2147483648`,
      `${NOTE}/${pageId}/histories/99999999999999999999`,
      `${NOTE}/2147483648`,
      `${NOTE}/99999999999999999999`,
      `${NOTE}/Infinity`,
      `${NOTE}/2147483648/comments`,
    ]) {
      expectProblem(await alice.client.get(path), 404, 'not_found');
    }
    expectProblem(await alice.client.delete(`/api/v1/teams/acme/users/99999999999`), 404, 'not_found');
    expectProblem(await alice.client.delete(`/api/v1/teams/acme/users/Infinity`), 404, 'not_found');
    expectProblem(await alice.client.delete(`${NOTE}/${pageId}/comments/99999999999`), 404, 'not_found');
    expectProblem(await alice.client.delete(`${NOTE}/99999999999`), 404, 'not_found');
    expectProblem(await alice.client.post(`${NOTE}/${pageId}/histories/1e309/restore`), 404, 'not_found');
    expect(await snapshot()).toEqual(before);
  });

  it('answer 400 in a body and store nothing', async () => {
    const before = await snapshot();
    expectProblem(await alice.client.put(`${NOTE}/${pageId}`, { form: 'page[parent]=1e309' }), 400, 'validation_failed');
    expectProblem(await alice.client.put(`${NOTE}/${pageId}`, { form: 'page[parent]=99999999999' }), 400, 'validation_failed');
    // ajv alone would read these as 1 and 2
    expectProblem(await alice.client.put(`${NOTE}/${pageId}`, { form: `page[parent]=1e0` }), 400, 'validation_failed');
    expectProblem(await alice.client.put(`${NOTE}/${pageId}`, { json: { page: { parent: `0x${pageId.toString(16)}` } } }), 400, 'validation_failed');
    // JSON.parse reads 1e309 as Infinity
    const infinite = await alice.client.post(`${NOTE}/pages`, { raw: { body: '{"page": {"title": "T", "content": "c", "parent": 1e309}}', contentType: 'application/json' } });
    expectProblem(infinite, 400, 'validation_failed');
    expect(infinite.body.errors[0].pointer).toBe('/page/parent');
    expectProblem(await alice.client.post(`${NOTE}/pages`, { json: { page: { title: 'T', content: 'c', parent: 0 } } }), 400, 'validation_failed');
    expect(await snapshot()).toEqual(before);
  });
});

describe('ids are decimal digits only', () => {
  it('a page id written another way names nothing', async () => {
    expect((await alice.client.get(`${NOTE}/${pageId}`)).status).toBe(200);
    for (const written of [`0x${pageId.toString(16)}`, `${pageId}e0`, `%20${pageId}`, `${pageId}%20`, `+${pageId}`, `${pageId}.0`, `0b1`]) {
      expectProblem(await alice.client.get(`${NOTE}/${written}`), 404, 'not_found');
    }
    const before = await snapshot();
    expectProblem(await alice.client.delete(`${NOTE}/${pageId}e0`), 404, 'not_found');
    expectProblem(await alice.client.delete(`${NOTE}/${pageId}/comments/0x${commentId.toString(16)}`), 404, 'not_found');
    expect(await snapshot()).toEqual(before);
  });

  it('a space or hex as a user id answers 404 and removes nobody', async () => {
    const before = await snapshot();
    expectProblem(await alice.client.delete('/api/v1/teams/acme/users/%20'), 404, 'not_found');
    expectProblem(await alice.client.delete(`/api/v1/teams/acme/users/0x${bob.user.id.toString(16)}`), 404, 'not_found');
    expectProblem(await alice.client.delete(`/api/v1/teams/acme/users/${bob.user.id}e0`), 404, 'not_found');
    expect(await snapshot()).toEqual(before);
  });

  it('a query number written another way answers 400', async () => {
    for (const query of ['page=0x2', 'page=1e0', 'per_page=%201', 'per_page=1.0']) {
      expectProblem(await alice.client.get(`/api/v1/notes?${query}`), 400, 'validation_failed');
    }
  });

  it('leading zeros are still decimal digits', async () => {
    expect((await alice.client.get(`${NOTE}/00${pageId}`)).status).toBe(200);
    expect((await alice.client.get('/api/v1/notes?page=01')).status).toBe(200);
  });
});

describe('form bodies past the parser limits', () => {
  it('a key nested 40 levels deep answers 400, not a silently flattened body', async () => {
    const before = await snapshot();
    const deep = await alice.client.post('/api/v1/notes', { form: `a${'[b]'.repeat(40)}=1&note[title]=Deep&note[team]=acme` });
    expectProblem(deep, 400, 'malformed_body');
    expectProblem(await alice.client.post('/api/v1/notes', { form: `note[title]${'[x]'.repeat(40)}=1&note[team]=acme` }), 400, 'malformed_body');
    expect(await snapshot()).toEqual(before);
  });

  it('the nesting the API uses still parses', async () => {
    const answer = await alice.client.put(NOTE, { form: 'note[title]=Handbook&note[team]=acme&utf8=%E2%9C%93&commit=Save' });
    expect(answer.status, answer.text).toBe(200);
  });

  it('too many form parameters answer 413', async () => {
    const before = await snapshot();
    const many = Array.from({ length: 5000 }, (_, index) => `k${index}=1`).join('&');
    expectProblem(await alice.client.post('/api/v1/notes', { form: `note[title]=Many&note[team]=acme&${many}` }), 413, 'payload_too_large');
    expect(await snapshot()).toEqual(before);
  });
});

describe('body encodings and charsets', () => {
  const json = (body: string | Uint8Array, headers: Record<string, string>) =>
    alice.client.post('/api/v1/notes', { raw: { body, contentType: 'application/json' }, headers });

  it('a body declared gzip or deflate that is not answers 400', async () => {
    const before = await snapshot();
    const body = JSON.stringify({ note: { title: 'Gz', team: 'acme' } });
    expectProblem(await json(body, { 'Content-Encoding': 'gzip' }), 400, 'malformed_body');
    expectProblem(await json(body, { 'Content-Encoding': 'deflate' }), 400, 'malformed_body');
    expectProblem(await json(body, { 'Content-Encoding': 'br' }), 400, 'malformed_body');
    // a gzip stream cut short
    expectProblem(await json(gzipSync(body).subarray(0, 20), { 'Content-Encoding': 'gzip' }), 400, 'malformed_body');
    expect(await snapshot()).toEqual(before);
  });

  it('an unknown encoding or charset answers 415', async () => {
    const before = await snapshot();
    const body = JSON.stringify({ note: { title: 'Enc', team: 'acme' } });
    expectProblem(await json(body, { 'Content-Encoding': 'br2' }), 415, 'unsupported_media_type');
    expectProblem(await alice.client.post('/api/v1/notes', { raw: { body, contentType: 'application/json; charset=klingon' } }), 415, 'unsupported_media_type');
    expectProblem(await alice.client.post('/api/v1/notes', { raw: { body: 'note[title]=x&note[team]=acme', contentType: 'application/x-www-form-urlencoded; charset=klingon' } }), 415, 'unsupported_media_type');
    expect(await snapshot()).toEqual(before);
  });

  it('a real gzip body is read', async () => {
    const answer = await json(gzipSync(JSON.stringify({ note: { title: 'Zipped', team: 'acme' } })), { 'Content-Encoding': 'gzip' });
    expect(answer.status, answer.text).toBe(200);
    expect((await app.em().findOneOrFail(Note, answer.body.id)).title).toBe('Zipped');
  });
});

describe('a request line or headers past 16 KiB', () => {
  it('answer 431 problem details (node refused them with a bare status line), and the server goes on answering', async () => {
    for (const answer of [
      await alice.client.get(`/api/v1/notes?junk=${'x'.repeat(20_000)}`),
      await alice.client.get('/api/v1/notes', { headers: { 'X-Junk': 'y'.repeat(20_000) } }),
    ]) {
      expectProblem(answer, 431, 'headers_too_large');
      expect(answer.body).toMatchObject({ status: 431, request_id: 'unknown' });
    }
    expect((await alice.client.get('/api/v1/notes')).status).toBe(200);
  });
});

describe('a bare `.json` segment', () => {
  it('names nothing: 404, and the note and page it would have hit stay', async () => {
    const before = await snapshot();
    expectProblem(await alice.client.delete(`${NOTE}/.json`), 404, 'not_found');
    expectProblem(await alice.client.delete(`${NOTE}/${pageId}/.json`), 404, 'not_found');
    expectProblem(await alice.client.put(`${NOTE}/.json`, { form: 'note[title]=Gone&note[team]=acme' }), 404, 'not_found');
    expectProblem(await alice.client.get('/api/v1/teams/.json'), 404, 'not_found');
    expectProblem(await alice.client.get('/api/v1/.json'), 404, 'not_found');
    expectProblem(await alice.client.get('/api/v1/teams/.json/notes'), 404, 'not_found');
    expect(await snapshot()).toEqual(before);
  });

  it('the suffix itself keeps working', async () => {
    expect((await alice.client.get('/api/v1/notes.json')).status).toBe(200);
    expect((await alice.client.get(`${NOTE}.json`)).body.id).toBe(noteId);
    expect((await alice.client.get(`${NOTE}/${pageId}.json`)).body.id).toBe(pageId);
    // the one path where `.json` has a meaning of its own is routed to its own operation (the metadata, not the bytes)
    expectProblem(await alice.client.get('/api/v1/attachments/5.json'), 404, 'not_found');
  });
});

describe('Link headers', () => {
  it('carry only the parameters the operation defines, never access_token', async () => {
    await makeNote(app, 'acme', alice.user, { title: 'Second' });
    await makeNote(app, 'acme', alice.user, { title: 'Third' });
    const junk = Array.from({ length: 100 }, (_, index) => `junk${index}=${'x'.repeat(100)}`).join('&');
    const answer = await alice.client.get(`/api/v1/notes?per_page=1&page=2&type=all&team=acme&${junk}&access_token=${alice.token}`);
    expect(answer.status, answer.text).toBe(200);
    const link = answer.headers.get('link')!;
    expect(link.length).toBeLessThan(1000);
    expect(link).not.toContain('junk');
    expect(link).not.toContain('access_token');
    expect(link).not.toContain(alice.token);
    expect(link).toContain(`${app.baseUrl}/api/v1/notes?type=all&team=acme&page=1&per_page=1>; rel="first"`);
    expect(link).toContain('page=1&per_page=1>; rel="prev"');
    expect(link).toContain('page=3&per_page=1>; rel="next"');
  });
});

describe('HTML views', () => {
  it('are sent with nosniff and a Content-Security-Policy that allows no script', async () => {
    for (const path of ['/acme/handbook', `/acme/handbook/${pageId}`, '/teams/acme', '/users/alice']) {
      const answer = await alice.client.get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type')).toContain('text/html');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      const csp = answer.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('script-src');
      expect(csp).not.toContain('unsafe-inline');
    }
  });
});

describe('HEAD', () => {
  async function compare(path: string) {
    // uncompressed, so GET has a Content-Length to compare (compression never applies to HEAD)
    const headers = { 'Accept-Encoding': 'identity' };
    const get = await alice.client.get(path, { headers });
    const head = await alice.client.request('HEAD', path, { headers });
    expect(head.status, `HEAD ${path}: ${head.text}`).toBe(get.status);
    expect(head.text).toBe('');
    for (const name of ['content-type', 'content-length', 'link', 'x-total-count', 'etag', 'allow', 'content-security-policy']) {
      expect(head.headers.get(name), `${name} of HEAD ${path}`).toBe(get.headers.get(name));
    }
    return head;
  }

  it('answers like GET, without a body, on API paths', async () => {
    expect((await compare('/api/v1/me')).status).toBe(200);
    expect((await compare('/api/v1/notes?per_page=1')).headers.get('link')).toBeTruthy();
    expect((await compare(`${NOTE}/${pageId}`)).headers.get('etag')).toBeTruthy();
    expect((await compare(`${NOTE}.json`)).status).toBe(200);
    expect((await compare(`${NOTE}/999999`)).status).toBe(404);
    expect((await compare('/api/v1/search')).status).toBe(400);
  });

  it('answers like GET outside the API', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs', '/acme/handbook', `/acme/handbook/${pageId}`]) await compare(path);
  });

  it('is still 405 where GET is not allowed, and the Allow header names HEAD with GET', async () => {
    const head = await alice.client.request('HEAD', `${NOTE}/${pageId}/histories/1/restore`);
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');
    const post = await alice.client.post('/api/v1/me');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('needs a token like GET', async () => {
    const head = await new (alice.client.constructor as any)(app.baseUrl).request('HEAD', '/api/v1/me');
    expect(head.status).toBe(401);
  });
});
