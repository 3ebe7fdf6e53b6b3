// The soak's cast and the data every flow starts from, made against the running server: the users and their tokens
// through the admin command line (it reaches an embedded database through the running server's socket), the rest
// through the API, as a client would make it.
//   soak      team: manager (manager), member and reader (members; reader's token may only read); outsider in none.
//             Notes `open` (public) and `secret` (private), each with a small page tree, an issue and comments.
//   large     team: the worst case of answers (large.ts makes it).
//   transfer  team: the note the export/import flow exports (`source`), and where it imports the copies.
//   fuzz      team of the fuzzer's own, with the note `target` the hostile requests aim at (fuzz.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Role } from '../../src/modules/access/policy.ts';
import { projectRoot } from '../support/processes.ts';
import { isSuccess, type Answered, type Outgoing, type Traffic } from './traffic.ts';

const run = promisify(execFile);

export type Actor = {
  name: string;
  id: number;
  token: string;
  scope: 'read' | 'write';
  /** The caller's role in each team it is in (its own default team, named after it, included). */
  roles: Map<string, Role>;
};

export type World = {
  manager: Actor;
  member: Actor;
  reader: Actor;
  outsider: Actor;
  fuzzer: Actor;
  /** Users in no team but their own, which the role matrix adds to `soak` and removes (one per lane). */
  spares: { id: number; username: string }[];
  /** The one the fuzzer's samples add to its team and remove. */
  fuzzSpare: { id: number; username: string };
  /** A page of each note of `soak` (the root of its tree). */
  pages: { open: number; secret: number };
  /** A notification of each signed-in writer's that stays (from a setup comment no flow deletes), by username. */
  notifications: Map<string, number>;
};

/** Runs the admin command line against the server's database; its standard output. */
export async function admin(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  const { stdout } = await run(`${projectRoot}/node_modules/.bin/node`, ['src/cli/admin.ts', ...args], { cwd: projectRoot, env });
  return stdout;
}

async function makeUser(env: NodeJS.ProcessEnv, name: string, scope: 'read' | 'write' = 'write'): Promise<Actor> {
  const created = await admin(env, 'create-user', name);
  const id = Number(/\(id (\d+)\)/.exec(created)?.[1]);
  if (!id) throw new Error(`create-user ${name}: ${created}`);
  const token = (await admin(env, 'create-token', name, '--scope', scope, '--label', 'soak')).trim().split('\n').at(-1)!;
  if (!token.startsWith('nt_')) throw new Error(`create-token ${name}: ${token}`);
  return { name, id, token, scope, roles: new Map([[name, 'manager']]) };
}

/** A request a fixture needs: it must succeed (shed answers are sent again). */
export async function must(traffic: Traffic, actor: Actor, method: string, path: string, outgoing: Outgoing = {}): Promise<Answered> {
  const answer = await traffic.sendUntilServed('setup', method, path, { ...outgoing, token: actor.token });
  if (!isSuccess(answer)) throw new Error(`setup: ${method} ${path} as ${actor.name} answered ${answer?.status ?? 'nothing'}: ${answer?.text.slice(0, 400) ?? ''}`);
  return answer;
}

export async function joinTeam(traffic: Traffic, manager: Actor, team: string, actor: Actor, role: 'member' | 'manager' = 'member'): Promise<void> {
  await must(traffic, manager, 'POST', `/api/v1/teams/${team}/users`, { json: { username: actor.name, role } });
  actor.roles.set(team, role);
}

export async function makeTeam(traffic: Traffic, manager: Actor, team: string): Promise<void> {
  await must(traffic, manager, 'POST', '/api/v1/teams', { json: { team: { name: team } } });
  manager.roles.set(team, 'manager');
}

/** A note with a root page, a child, a grandchild (each with a second version), an issue, a note comment; the root. */
async function smallNote(traffic: Traffic, world: Pick<World, 'manager' | 'member'>, team: string, slug: string, isPrivate: boolean): Promise<number> {
  const { manager, member } = world;
  const note = `/api/v1/${team}/${slug}`;
  await must(traffic, manager, 'POST', '/api/v1/notes', { json: { note: { title: `Soak ${slug}`, team, slug, is_private: isPrivate } } });
  const root = (await must(traffic, manager, 'POST', `${note}/pages`, { json: { page: { title: 'Home', content: '<p>Release steps</p>' } } })).body.id as number;
  const child = (await must(traffic, member, 'POST', `${note}/pages`, { json: { page: { title: 'Guide', content: '<p>How</p>', parent: root } } })).body.id as number;
  await must(traffic, member, 'POST', `${note}/pages`, { json: { page: { title: 'Rollback', content: '<p>Redeploy</p>', parent: child } } });
  for (const page of [root, child]) await must(traffic, member, 'PUT', `${note}/${page}`, { json: { page: { content: '<p>Release steps, reviewed</p>' } } });
  await must(traffic, member, 'POST', `${note}/issues`, { json: { issue: { title: 'Proofread the guide', to_user: manager.name } } });
  await must(traffic, member, 'POST', `${note}/comments`, { json: { comment: { comment: `Hello @${manager.name}` }, mentions: [manager.name] } });
  await must(traffic, member, 'POST', `${note}/${root}/comments`, { json: { comment: { comment: 'First!' } } });
  return root;
}

/** The cast and the `soak` team; `lanes` spare users. */
export async function makeWorld(traffic: Traffic, env: NodeJS.ProcessEnv, lanes: number): Promise<World> {
  const [manager, member, reader, outsider, fuzzer] = [
    await makeUser(env, 'manager'), await makeUser(env, 'member'), await makeUser(env, 'reader', 'read'),
    await makeUser(env, 'outsider'), await makeUser(env, 'fuzzer'),
  ] as [Actor, Actor, Actor, Actor, Actor];
  const spares = [];
  for (let lane = 0; lane < lanes; lane += 1) {
    const spare = await makeUser(env, `spare${lane}`);
    spares.push({ id: spare.id, username: spare.name });
  }
  const fuzzSpare = await makeUser(env, 'sparefuzz');
  await makeTeam(traffic, manager, 'soak');
  await joinTeam(traffic, manager, 'soak', member);
  await joinTeam(traffic, manager, 'soak', reader);
  const pages = {
    open: await smallNote(traffic, { manager, member }, 'soak', 'open', false),
    secret: await smallNote(traffic, { manager, member }, 'soak', 'secret', true),
  };
  await must(traffic, manager, 'POST', '/api/v1/soak/open/comments', { json: { comment: { comment: `Welcome @${member.name} and @${outsider.name}` }, mentions: [member.name, outsider.name] } });
  const notifications = new Map<string, number>();
  for (const actor of [manager, member, outsider]) {
    const listed = await must(traffic, actor, 'GET', '/api/v1/notifications?state=all&per_page=1');
    notifications.set(actor.name, (listed.body as { id: number }[])[0]!.id);
  }
  return { manager, member, reader, outsider, fuzzer, spares, fuzzSpare: { id: fuzzSpare.id, username: fuzzSpare.name }, pages, notifications };
}
