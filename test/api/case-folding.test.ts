// One rule for case-insensitive names (issue 25): tags, usernames, team names and search compare foldCase keys
// (src/modules/text/fold.ts: NFKC, full case folding, NFKC), computed by the service; the database stores and compares
// them, never folds. The letters where PostgreSQL's lower() and JavaScript's toLowerCase() disagree (İ, ß, ǅ, ...)
// and full-width letters, through addIssueTags, createTeam, getUser, addTeamUser, updateIssue, searchNotes, mentions,
// the team in a path and in the logs' and notifications' filters, and sign-in (the password grant and its brute-force
// budget), with the stored rows; then migration 0013's backfill of the tags stored before it, run on this database.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Issue } from '../../src/modules/issues/issue.entity.ts';
import type { Note } from '../../src/modules/notes/note.entity.ts';
import { Notification } from '../../src/modules/notifications/notification.entity.ts';
import { Team } from '../../src/modules/teams/team.entity.ts';
import { foldCase } from '../../src/modules/text/fold.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ApiClient } from '../support/client.ts';
import { makeIssue, makeNote, makePage, makeUser, type Actor } from '../support/factories.ts';
import { authorizePath, CookieBrowser, givePassword, makeClient, pkcePair, tokenRequest } from '../support/oauth.ts';
import { makeScenario } from '../support/scenario.ts';

let app: TestApp;
let manager: Actor, member: Actor, kim: Actor;

beforeAll(async () => {
  app = await startTestApp();
  ({ manager, member } = await makeScenario(app, { team: 'folds', usernames: { manager: 'mona', member: 'milo' } }));
  kim = await makeUser(app, 'Kim');
});
afterAll(async () => app?.close());

let counter = 0;
/** A note of `folds` with two issues. */
async function freshNote(): Promise<{ note: Note; url: string; issues: number[] }> {
  counter += 1;
  const note = await makeNote(app, 'folds', manager.user, { slug: `tags-${counter}` });
  const issues = [(await makeIssue(app, note, member, { title: 'One' })).id, (await makeIssue(app, note, member, { title: 'Two' })).id];
  return { note, url: `/api/v1/folds/${note.slug}/issues`, issues };
}

const tagsOf = async (issueId: number) =>
  (await app.em().execute<{ name: string }[]>('select t.name from issue_tags it join tags t on t.id = it.tag_id where it.issue_id = ? order by it.added_order', [issueId])).map((row) => row.name);
const storedTags = (noteId: number) => app.em().execute<{ name: string; name_key: string }[]>('select name, name_key from tags where note_id = ? order by id', [noteId]);

describe('addIssueTags', () => {
  it('adds a tag with İ (JSON string, JSON list, form) once, where it answered 500 before', async () => {
    const { note, url, issues } = await freshNote();
    const first = await member.client.post(`${url}/1/tags`, { json: { tags: 'İı' } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.tags).toEqual(['İı']);
    for (const options of [{ json: { tags: ['İı'] } }, { form: 'tags%5B%5D=%C4%B0%C4%B1' }, { json: { tags: ['i\u0307ı', 'İı'.normalize('NFD')] } }]) {
      const again = await member.client.post(`${url}/1/tags`, options);
      expect(again.status, again.text).toBe(200);
      expect(again.body.tags).toEqual(['İı']);
    }
    // the other issue of the note gets the same tag, in another spelling
    const other = await member.client.post(`${url}/2/tags`, { form: { 'tags[]': 'i\u0307ı' } });
    expect([other.status, other.body.tags]).toEqual([200, ['İı']]);
    expect(await storedTags(note.id)).toEqual([{ name: 'İı', name_key: 'i\u0307ı' }]);
    expect(await tagsOf(issues[1]!)).toEqual(['İı']);
  });

  it('keeps İ apart from I and i, and ı apart from i (the default case folding, not the Turkish one)', async () => {
    const { note, url } = await freshNote();
    const answer = await member.client.post(`${url}/1/tags`, { json: { tags: ['İı', 'İI', 'ii', 'II', 'ıı'] } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.tags).toEqual(['İı', 'İI', 'ii', 'ıı']);
    expect((await storedTags(note.id)).map((tag) => tag.name_key).sort()).toEqual(['ii', 'i\u0307i', 'i\u0307ı', 'ıı'].sort());
  });

  it('takes ß as ss, ǅ ǆ Ǆ as one letter, full-width as half-width: one tag each, the first spelling kept', async () => {
    const { note, url, issues } = await freshNote();
    const first = await member.client.post(`${url}/1/tags`, { json: { tags: ['Straße', 'STRASSE', 'ǅemal', 'Ｔａｇ', 'Ok'] } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.tags).toEqual(['Straße', 'ǅemal', 'Ｔａｇ', 'Ok']);
    const second = await member.client.post(`${url}/1/tags`, {
      form: { 'tags[]': ['strasse', 'STRAẞE', 'straße', 'ǆemal', 'Ǆemal', 'ǄEMAL', 'tag', 'TAG', 'ｔａｇ', 'ＴＡＧ', 'OK', 'ｏｋ', 'new'] },
    });
    expect(second.status, second.text).toBe(200);
    expect(second.body.tags).toEqual(['Straße', 'ǅemal', 'Ｔａｇ', 'Ok', 'new']);
    const shared = await member.client.post(`${url}/2/tags`, { json: { tags: ['TAG', 'strasse', 'ǄEMAL'] } });
    expect(shared.body.tags).toEqual(['Ｔａｇ', 'Straße', 'ǅemal']);
    const stored = (await storedTags(note.id)).sort((a, b) => (a.name_key < b.name_key ? -1 : 1));
    expect(stored).toEqual([
      { name: 'ǅemal', name_key: 'd\u017eemal' },
      { name: 'new', name_key: 'new' },
      { name: 'Ok', name_key: 'ok' },
      { name: 'Straße', name_key: 'strasse' },
      { name: 'Ｔａｇ', name_key: 'tag' },
    ]);
    for (const tag of stored) expect(tag.name_key).toBe(foldCase(tag.name));
    expect(await tagsOf(issues[1]!)).toEqual(['Ｔａｇ', 'Straße', 'ǅemal']);
  });

  it('counts names that are one tag once against the limit of 100', async () => {
    const { url, issues } = await freshNote();
    const answer = await member.client.post(`${url}/1/tags`, { json: { tags: [...Array.from({ length: 95 }, (_, i) => `t${i}`), 'ß', 'SS', 'ss', 'Ａ', 'a'] } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.tags).toHaveLength(97);
    expect((await member.client.post(`${url}/1/tags`, { json: { tags: ['T1', 'ẞ', 'ａ', 'x', 'y', 'z'] } })).body.tags).toHaveLength(100);
    const past = await member.client.post(`${url}/1/tags`, { json: { tags: ['SS', 'one more'] } });
    expect([past.status, past.body.code]).toEqual([422, 'too_many_tags']);
    expect(await tagsOf(issues[0]!)).toHaveLength(100);
  });
});

describe('createTeam', () => {
  it('answers 422 for names with letters outside A-Z, whatever their case (names are ASCII), never 500', async () => {
    for (const name of ['İtems', 'straße', 'ǅemal', 'Ｔｅａｍ', 'kım']) {
      const answer = await manager.client.post('/api/v1/teams', { json: { team: { name } } });
      expect([answer.status, answer.body.code], name).toEqual([422, 'invalid_name']);
    }
    expect(await app.em().count(Team, { name: { $in: ['İtems', 'straße', 'ǅemal', 'Ｔｅａｍ', 'kım'] } })).toBe(0);
  });

  it('answers 409 for a name that differs from a user or team only in ASCII case, and stores the key', async () => {
    expect((await manager.client.post('/api/v1/teams', { json: { team: { name: 'KIM' } } })).body.code).toBe('name_taken');
    expect((await manager.client.post('/api/v1/teams', { json: { team: { name: 'Kitchen' } } })).status).toBe(200);
    expect((await manager.client.post('/api/v1/teams', { json: { team: { name: 'kITCHEN' } } })).body.code).toBe('name_taken');
    expect(await app.em().execute('select name, name_key from teams where name_key = ?', ['kitchen'])).toEqual([{ name: 'Kitchen', name_key: 'kitchen' }]);
    expect(await app.em().execute('select username, username_key from users where username_key = ?', ['kim'])).toEqual([{ username: 'Kim', username_key: 'kim' }]);
  });

  it('cannot store a name the key column would get wrong: the database keeps names ASCII', async () => {
    await expect(app.em().execute(`insert into teams (name, created_at, updated_at) values ('Straße', now(), now())`)).rejects.toThrow(/teams_name_ascii/);
    await expect(app.em().execute(`insert into users (username, created_at, updated_at) values ('İlker', now(), now())`)).rejects.toThrow(/users_username_ascii/);
  });
});

describe('migration 0014', () => {
  it('leaves uniqueness to the key indexes: the lower() indexes are gone, a name in another case is still refused', async () => {
    const indexes = await app.em().execute<{ indexname: string }[]>(
      `select indexname from pg_indexes where tablename in ('teams', 'users') and indexdef ilike '%lower(%' order by indexname`,
    );
    expect(indexes).toEqual([]);
    await expect(app.em().execute(`insert into teams (name, created_at, updated_at) values ('FOLDS', now(), now())`)).rejects.toThrow(/teams_name_key_unique/);
    await expect(app.em().execute(`insert into users (username, created_at, updated_at) values ('kIM', now(), now())`)).rejects.toThrow(/users_username_key_unique/);
  });
});

describe('getTeam', () => {
  it('finds a team in any ASCII case; a name with other letters names nothing', async () => {
    const found = await manager.client.get('/api/v1/teams/FOLDS');
    expect([found.status, found.body.name]).toEqual([200, 'folds']);
    for (const name of ['FOİDS', 'ｆｏｌｄｓ']) {
      const answer = await manager.client.get(`/api/v1/teams/${encodeURIComponent(name)}`);
      expect(answer.status, name).toBe(404);
    }
  });
});

describe('getUser', () => {
  it('finds a user by the key of the username: any case, full-width, the Kelvin sign for K', async () => {
    for (const name of ['kim', 'KIM', 'Ｋｉｍ', 'ＫＩＭ', '\u212aim']) {
      const answer = await member.client.get(`/api/v1/users/${encodeURIComponent(name)}`);
      expect([answer.status, answer.body?.id], name).toEqual([200, kim.user.id]);
    }
  });

  it('answers 404 where the letters differ: İ and ı are not i', async () => {
    for (const name of ['KİM', 'kım', 'kİm']) {
      expect((await member.client.get(`/api/v1/users/${encodeURIComponent(name)}`)).status, name).toBe(404);
    }
  });
});

describe('addTeamUser', () => {
  it('adds the user a username names by its key, and answers 422 for one whose letters differ', async () => {
    const added = await manager.client.post('/api/v1/teams/folds/users', { json: { username: 'ＫＩＭ' } });
    expect(added.status, added.text).toBe(200);
    expect(added.body.members.map((user: { username: string }) => user.username)).toContain('Kim');
    const wrong = await manager.client.post('/api/v1/teams/folds/users', { form: { username: 'KİM' } });
    expect([wrong.status, wrong.body.code]).toEqual([422, 'unknown_user']);
  });
});

describe('updateIssue', () => {
  it('assigns the user a username names by its key', async () => {
    const { url, issues } = await freshNote();
    const answer = await member.client.put(`${url}/1`, { form: { 'issue[to_user]': 'ｋｉｍ' } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.to_user.username).toBe('Kim');
    expect((await app.em().findOneOrFail(Issue, issues[0]!)).toUser?.id).toBe(kim.user.id);
    const wrong = await member.client.put(`${url}/1`, { form: { 'issue[to_user]': 'kım' } });
    expect([wrong.status, wrong.body.code]).toEqual([422, 'unknown_user']);
  });
});

describe('searchNotes', () => {
  it('finds words with İ, ß, ǅ, final sigma and full-width letters in any case, as the tags match them', async () => {
    const note = await makeNote(app, 'folds', manager.user, { slug: 'words', title: 'Word list' });
    const page = await makePage(app, note, member, { title: 'Unicode', content: '<p>İstanbul, die Straße, ǅungla, ΟΔΟΣ and the Ｗｉｄｅ word</p>' });
    await app.settle();
    const found = async (q: string) => {
      const answer = await member.client.get(`/api/v1/search?q=${encodeURIComponent(q)}`);
      expect(answer.status, answer.text).toBe(200);
      return answer.body as { id: number; matches: { id: number; snippet: string }[] }[];
    };
    for (const q of ['İSTANBUL', 'i\u0307stanbul', 'STRASSE', 'strasse', 'straße', 'STRAẞE', 'ǆungla', 'ǄUNGLA', 'οδος', 'οδοσ', 'wide', 'ＷＩＤＥ']) {
      const hits = await found(q);
      expect(hits.map((hit) => hit.id), q).toEqual([note.id]);
      expect(hits[0]!.matches[0]!.id, q).toBe(page.id);
    }
    expect((await found('STRASSE'))[0]!.matches[0]!.snippet).toContain('<mark>Straße</mark>');
    expect((await found('wide'))[0]!.matches[0]!.snippet).toContain('<mark>Ｗｉｄｅ</mark>');
    // ı is not i, and İ is not I: no match
    for (const q of ['ıstanbul', 'Istanbul']) expect(await found(q), q).toEqual([]);
  });
});

describe('createNoteComment', () => {
  it('mentions the user a username names by its key: `@ＫＩＭ` with mentions[]=ＫＩＭ notifies Kim, once', async () => {
    const note = await makeNote(app, 'folds', manager.user, { slug: 'mentions' });
    const url = `/api/v1/folds/${note.slug}/comments`;
    const form = await member.client.post(url, { form: { 'comment[comment]': '@ＫＩＭ please look', 'mentions[]': ['ＫＩＭ', 'kim', 'Ｋｉｍ', '\u212aim'] } });
    expect(form.status, form.text).toBe(200);
    expect(form.body.mentions.map((user: { id: number }) => user.id)).toEqual([kim.user.id]);
    const json = await member.client.post(url, { json: { comment: { comment: '@ｋｉｍ again' }, mentions: ['ｋｉｍ'] } });
    expect(json.status, json.text).toBe(200);
    expect(json.body.mentions.map((user: { username: string }) => user.username)).toEqual(['Kim']);
    const stored = await app.em().find(Notification, { comment: { $in: [form.body.id, json.body.id] }, user: kim.user.id }, { orderBy: { id: 'asc' } });
    expect(stored.map((row) => [row.comment?.id, row.event])).toEqual([[form.body.id, 'mention'], [json.body.id, 'mention']]);
    const listed = (await kim.client.get('/api/v1/notifications')).body as { id: number; event: string }[];
    expect(listed.filter((item) => stored.some((row) => row.id === item.id)).map((item) => item.event)).toEqual(['mention', 'mention']);
  });

  it('answers 422 unknown_user for a name whose letters differ (İ and ı are not i), and writes nothing', async () => {
    const note = await makeNote(app, 'folds', manager.user, { slug: 'no-mentions' });
    const answer = await member.client.post(`/api/v1/folds/${note.slug}/comments`, { form: { 'comment[comment]': '@KİM', 'mentions[]': ['kim', 'KİM', 'kım'] } });
    expect([answer.status, answer.body.code]).toEqual([422, 'unknown_user']);
    expect(answer.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/mentions/1', '/mentions/2']);
    expect(await app.em().count(Notification, { note: note.id })).toBe(0);
  });
});

describe('a team named in a path', () => {
  it('is found in any ASCII case; the API refuses other letters by the shape of the name (404, as getTeam)', async () => {
    const note = await makeNote(app, 'folds', manager.user, { slug: 'paths' });
    const found = await member.client.get(`/api/v1/FOLDS/${note.slug}`);
    expect([found.status, found.body.id, found.body.team?.name]).toEqual([200, note.id, 'folds']);
    for (const name of ['ＦＯＬＤＳ', 'ｆｏｌｄｓ', 'FOİDS']) {
      const answer = await member.client.get(`/api/v1/${encodeURIComponent(name)}/${note.slug}`);
      expect([answer.status, answer.body.code], name).toEqual([404, 'not_found']);
    }
  });

  it('resolves by the key where no shape refuses it first: the view `/ＦＯＬＤＳ/note` is the note, as `/users/ＫＩＭ` is Kim', async () => {
    const note = await makeNote(app, 'folds', manager.user, { slug: 'views' });
    const view = (path: string) => fetch(`${app.baseUrl}${path}`, { headers: { Authorization: `Bearer ${member.token}`, Accept: 'text/html' }, redirect: 'manual' });
    for (const name of ['folds', 'FOLDS', 'ＦＯＬＤＳ', 'ｆｏｌｄｓ']) {
      const answer = await view(`/${encodeURIComponent(name)}/${note.slug}`);
      expect(answer.status, name).toBe(200);
      expect(await answer.text(), name).toContain(note.title);
      expect((await view(`/teams/${encodeURIComponent(name)}`)).status, name).toBe(200);
    }
    for (const name of ['FOİDS', 'foıds']) expect((await view(`/${encodeURIComponent(name)}/${note.slug}`)).status, name).toBe(404);
  });
});

describe('listLogs, listNotifications and markNotificationsRead', () => {
  it('filter by a team named in any ASCII case', async () => {
    const note = await makeNote(app, 'folds', manager.user, { slug: 'filters' });
    const comment = await member.client.post(`/api/v1/folds/${note.slug}/comments`, { form: { 'comment[comment]': 'hi @kim', 'mentions[]': 'kim' } });
    expect(comment.status, comment.text).toBe(200);
    const logs = (team: string) => member.client.get('/api/v1/logs', { query: { team, per_page: '100' } });
    const lower = await logs('folds');
    expect(lower.status, lower.text).toBe(200);
    expect(lower.body.length).toBeGreaterThan(0);
    expect((await logs('FOLDS')).body).toEqual(lower.body);
    const [mention] = await app.em().find(Notification, { comment: comment.body.id, user: kim.user.id });
    const unread = (team: string) => kim.client.get('/api/v1/notifications', { query: { team } });
    const listed = (await unread('FoLdS')).body as { id: number }[];
    expect(listed.map((item) => item.id)).toContain(mention!.id);
    expect((await unread('folds')).body).toEqual(listed);
    expect((await kim.client.post('/api/v1/notifications/read', { form: 'team=FOLDS' })).status).toBe(200);
    expect((await unread('folds')).body).toEqual([]);
    expect(await app.em().count(Notification, { user: kim.user.id, note: { team: { name: 'folds' } }, isRead: false })).toBe(0);
  });
});

describe('signing in', () => {
  it('takes the login by its key: ＫＩＭ and ｋｉｍ sign Kim in, with the password grant and the sign-in page', async () => {
    const password = await givePassword(app, kim.user);
    const client = await makeClient(app, { confidential: true, firstParty: true, redirectUris: ['notesapp://folds'] });
    for (const login of ['ＫＩＭ', 'ｋｉｍ', 'kIm']) {
      const grant = await tokenRequest(app, { grant_type: 'password', login, password, client_id: client.clientId, client_secret: client.secret! });
      expect(grant.status, `${login}: ${grant.text}`).toBe(200);
      expect((await new ApiClient(app.baseUrl, grant.body.access_token).get('/api/v1/me')).body.id).toBe(kim.user.id);
    }
    const wrong = await tokenRequest(app, { grant_type: 'password', login: 'KİM', password, client_id: client.clientId, client_secret: client.secret! });
    expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_grant']);
    const parameters = { response_type: 'code', client_id: client.clientId, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
    // a first-party app needs no consent: signed in, the browser goes straight back with a code
    const back = await new CookieBrowser(app.baseUrl).signIn(authorizePath(parameters), 'ＫＩＭ', password);
    expect([back.status, back.location?.startsWith('notesapp://folds?code=')], back.text.slice(0, 300)).toEqual([302, true]);
    const refused = await new CookieBrowser(app.baseUrl).signIn(authorizePath(parameters), 'KİM', password);
    expect(refused.status).toBe(403);
  });

  it('counts a full-width login against the same account budget as the ASCII one', async () => {
    const limited = await startTestApp({ SIGN_IN_ATTEMPTS_PER_ACCOUNT: '3', SIGN_IN_ATTEMPTS_PER_ADDRESS: '100', SIGN_IN_WINDOW_SECONDS: '600' });
    try {
      const password = await givePassword(limited, (await makeUser(limited, 'Kim')).user);
      const client = await makeClient(limited, { confidential: true, firstParty: true, redirectUris: ['notesapp://folds'] });
      const grant = (login: string, secret = 'wrong password') =>
        tokenRequest(limited, { grant_type: 'password', login, password: secret, client_id: client.clientId, client_secret: client.secret! });
      const remaining: (string | null)[] = [];
      for (const login of ['ＫＩＭ', 'kim', 'Ｋｉｍ']) remaining.push((await grant(login)).headers.get('ratelimit-remaining'));
      expect(remaining).toEqual(['2', '1', '0']);
      const blocked = await grant('KIM', password);
      expect([blocked.status, blocked.body.error]).toEqual([429, 'temporarily_unavailable']);
      expect((await grant('ｋｉｍ', password)).status).toBe(429);
      // KİM names another account (İ is not I): its own budget
      const other = await grant('KİM');
      expect([other.status, other.headers.get('ratelimit-remaining')]).toEqual([400, '2']);
    } finally {
      await limited.close();
    }
  });
});

/** A section of migration 0013, between `-- <name>: begin` and `-- <name>: end`. */
function migrationSection(name: string): string {
  const file = readFileSync(new URL('../../src/db/migrations/0013-case-folding-keys.sql', import.meta.url), 'utf8');
  const start = file.indexOf(`-- ${name}: begin`);
  const end = file.indexOf(`-- ${name}: end`);
  expect(start).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return file.slice(start, end);
}

class RolledBack extends Error {}

/** Runs `work` in a transaction that is rolled back (the migration's temporary objects and changes go with it). */
async function inRolledBackTransaction(work: (execute: (sql: string, params?: unknown[]) => Promise<any[]>) => Promise<void>): Promise<void> {
  await app.em().transactional(async (tx) => {
    await work((sql, params = []) => tx.execute(sql, params));
    throw new RolledBack();
  }).catch((error: unknown) => {
    if (!(error instanceof RolledBack)) throw error;
  });
}

describe('migration 0013', () => {
  it('folds names in SQL exactly as foldCase does, for every letter it maps and for mixed text', async () => {
    const fold = migrationSection('fold');
    const letters: string[] = [];
    for (const [, first, last, step] of fold.matchAll(/^\s*\((\d+), (\d+), (\d+), -?\d+\)/gm)) {
      for (let code = Number(first); code <= Number(last); code += Number(step)) letters.push(String.fromCodePoint(code));
    }
    for (const [, code] of fold.matchAll(/^\s*\((\d+), (?:U&)?'/gm)) letters.push(String.fromCodePoint(Number(code)));
    expect(letters.length).toBeGreaterThan(1400);
    const texts = [
      'İı', 'İI', 'Straße', 'STRAẞE', 'ǅemal', 'Ǆ', 'Ｔａｇ', 'ｶﾞｷﾞ', '㍿', 'ﬁﬂ', '\u212aelvin', 'ΟΔΟΣ ΣΑ', 'ᾈᾼ', 'ꭰᏸ', 'ŉ', '𝐀𝐁', 'Ⓐⓑ', '',
      'Mixed Ünïcödé ÀÉÎÕÜ', '会議 キャプチャ', 'e\u0301', 'A\u030a', 'I\u0307', 'a\u0345',
    ];
    for (let i = 0; i < letters.length; i += 100) texts.push(letters.slice(i, i + 100).join(''));
    let folded: { folded: string }[] = [];
    await inRolledBackTransaction(async (execute) => {
      await execute(fold);
      folded = await execute(
        'select pg_temp.fold_case_0013(x.t) as folded from jsonb_array_elements_text(?::jsonb) with ordinality as x (t, at) order by x.at',
        [JSON.stringify(texts)],
      );
    });
    expect(folded.map((row) => row.folded)).toEqual(texts.map(foldCase));
  });

  it('gives the tags stored before it their keys, and merges those that are one under the rule into the oldest', async () => {
    const { note, issues } = await freshNote();
    const [first, second] = issues as [number, number];
    let tags: { id: number; name: string; name_key: string }[] = [];
    const tagged: Record<number, string[]> = {};
    await inRolledBackTransaction(async (execute) => {
      await execute(migrationSection('fold'));
      // the table as it was before 0013: no keys, unique by lower(name) only
      await execute('drop index tags_note_name_key_unique');
      await execute('alter table tags alter column name_key drop not null');
      const ids: Record<string, number> = {};
      for (const name of ['straße', 'STRASSE', 'Ａ', 'a', 'İı', 'solo']) {
        const [row] = await execute('insert into tags (note_id, name, created_at) values (?, ?, now()) returning id', [note.id, name]);
        ids[name] = row.id;
      }
      for (const [issue, names] of [[first, ['STRASSE', 'İı', 'straße', 'a', 'Ａ']], [second, ['a', 'solo']]] as const) {
        for (const name of names) await execute('insert into issue_tags (issue_id, tag_id) values (?, ?)', [issue, ids[name]]);
      }
      await execute(migrationSection('backfill'));
      tags = await execute('select id, name, name_key from tags where note_id = ? order by id', [note.id]);
      for (const issue of [first, second]) {
        tagged[issue] = (await execute('select t.name from issue_tags it join tags t on t.id = it.tag_id where it.issue_id = ? order by it.added_order', [issue])).map((row) => row.name);
      }
    });
    expect(tags.map(({ name, name_key }) => ({ name, name_key }))).toEqual([
      { name: 'straße', name_key: 'strasse' },
      { name: 'Ａ', name_key: 'a' },
      { name: 'İı', name_key: 'i\u0307ı' },
      { name: 'solo', name_key: 'solo' },
    ]);
    // each issue keeps one of the merged tags, where it had the first of them
    expect(tagged[first]).toEqual(['straße', 'İı', 'Ａ']);
    expect(tagged[second]).toEqual(['Ａ', 'solo']);
    // and nothing stayed of it
    expect(await storedTags(note.id)).toEqual([]);
  });
});
