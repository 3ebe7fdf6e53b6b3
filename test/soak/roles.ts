// Flow a) the role matrix, in a loop: the cast (anonymous, the read-only member, the outsider, the member, the
// manager) calls the operations of teams, notes, pages (create, edit, move, delete), histories and diffs, issues,
// comments with mentions, notifications (list, toggle), logs, search, forks and requests (open, close, merge) on
// the note of its lane (lane 0: the public `soak/open`, lane 1: the private `soak/secret`), and every answer's
// status must be the one expected-status.ts computes from the policy. What a cell uses up (a page to delete, a
// request to merge) is made fresh in each round, and the cast runs in that order, so the refusals come before the
// one who may.
import { checkOperation, expectedStatus, type Where } from './expected-status.ts';
import { isSuccess, type Answered, type Outgoing, type Traffic, type Deadline } from './traffic.ts';
import { must, type Actor, type World } from './world.ts';

const MAX_ROUNDS = 10_000;

export class RoleLane {
  rounds = 0;
  cells = 0;
  /** The operations the cells called. */
  readonly operations = new Set<string>();
  private readonly cast: (Actor | undefined)[];
  private readonly slug: string;
  private readonly isPrivate: boolean;
  private readonly root: number;
  private readonly spare: { id: number; username: string };
  private tag = '';

  private readonly traffic: Traffic;
  private readonly world: World;
  private readonly lane: number;
  private readonly deadline: Deadline;

  constructor(traffic: Traffic, world: World, lane: number, deadline: Deadline) {
    this.traffic = traffic;
    this.world = world;
    this.lane = lane;
    this.deadline = deadline;
    this.cast = [undefined, world.reader, world.outsider, world.member, world.manager];
    this.isPrivate = lane % 2 === 1;
    this.slug = this.isPrivate ? 'secret' : 'open';
    this.root = this.isPrivate ? world.pages.secret : world.pages.open;
    this.spare = world.spares[lane]!;
  }

  async run(): Promise<void> {
    for (; this.rounds < MAX_ROUNDS && !this.over(); this.rounds += 1) {
      this.tag = `l${this.lane}r${this.rounds}`;
      // the lanes start half a round apart, so that a short soak still has each step run somewhere
      const steps = [this.reads, this.pages, this.comments, this.issues, this.notifications, this.notes, this.teams, this.requests];
      const first = (this.lane * 4) % steps.length;
      for (const step of [...steps.slice(first), ...steps.slice(0, first)]) {
        if (this.over()) return;
        try {
          await step.call(this);
        } catch (error) {
          // a fixture that could not be made (already recorded as the answer it got): the next step goes on
          if (!(error instanceof FixtureFailed)) throw error;
        }
      }
    }
  }

  private over(): boolean {
    return this.deadline.over;
  }

  private get note(): string {
    return `/api/v1/soak/${this.slug}`;
  }

  private get where(): Where {
    return { team: 'soak', note: { isPrivate: this.isPrivate } };
  }

  /** One cell: sends it as `actor` and checks its status against the policy's. */
  private async cell(operationId: string, actor: Actor | undefined, method: string, path: string, outgoing: Outgoing, where: Where): Promise<Answered | undefined> {
    checkOperation(operationId, method, path);
    const expected = expectedStatus(operationId, method, actor, where);
    const answer = await this.traffic.sendUntilServed('roles', method, path, { ...outgoing, token: actor?.token });
    this.cells += 1;
    this.operations.add(operationId);
    if (!answer || answer.status >= 500) return answer; // recorded by the traffic
    const met = expected.status === 'success' ? isSuccess(answer) : answer.status === expected.status;
    if (!met) this.traffic.surprise('roles', `${operationId} as ${actor?.name ?? 'anonymous'}: ${method} ${path} expected ${expected.status} (${expected.why})`, answer);
    return answer;
  }

  /** A request the cells build on; it must succeed. */
  private async fixture(actor: Actor, method: string, path: string, outgoing: Outgoing = {}): Promise<Answered> {
    const answer = await this.traffic.sendUntilServed('roles', method, path, { ...outgoing, token: actor.token });
    if (!isSuccess(answer)) {
      if (answer && answer.status < 500) this.traffic.surprise('roles', `fixture ${method} ${path} as ${actor.name}`, answer);
      throw new FixtureFailed();
    }
    return answer;
  }

  private async reads(): Promise<void> {
    const { note, root, where } = this;
    const team: Where = { team: 'soak' };
    const reads: [string, string, Where][] = [
      ['getMe', '/api/v1/me', team], ['listTeams', '/api/v1/teams', team], ['getTeam', '/api/v1/teams/soak', team],
      ['listTeamNotes', '/api/v1/teams/soak/notes?per_page=20', team], ['listNotes', '/api/v1/notes?per_page=20', team],
      ['getNote', note, where], ['listContributors', `${note}/contributors`, where], ['listPages', `${note}/pages`, where],
      ['getPage', `${note}/${root}`, where], ['listPageVersions', `${note}/${root}/histories`, where],
      ['getPageVersion', `${note}/${root}/histories/1`, where], ['diffPageVersions', `${note}/${root}/histories/diff`, where],
      ['listPageComments', `${note}/${root}/comments`, where], ['listNoteComments', `${note}/comments`, where],
      ['listIssues', `${note}/issues?state=all`, where], ['getIssue', `${note}/issues/1`, where],
      ['listIssueComments', `${note}/issues/1/comments`, where], ['listRequests', `${note}/requests?state=all`, where],
      ['listLogs', '/api/v1/logs?per_page=20', team], ['searchNotes', '/api/v1/search?q=release', team],
      ['listMyIssues', '/api/v1/my_issues?state=all', team],
    ];
    // a third of them each round, in turn
    const now = reads.filter((_, index) => index % 3 === this.rounds % 3);
    for (const actor of this.cast) {
      for (const [operationId, path, at] of now) await this.cell(operationId, actor, 'GET', path, {}, at);
    }
  }

  private async pages(): Promise<void> {
    const { note, root, where, tag } = this;
    const { manager, member } = this.world;
    const made = new Map<Actor, number>();
    for (const actor of this.cast) {
      const answer = await this.cell('createPage', actor, 'POST', `${note}/pages`, { json: { page: { title: `Page ${tag} ${actor?.name}`, content: '<p>draft</p>', parent: root } } }, where);
      if (actor && isSuccess(answer)) made.set(actor, answer.body.id as number);
    }
    // a page of the manager's that the others edit, move about, read the history of, and delete
    const page = (await this.fixture(manager, 'POST', `${note}/pages`, { json: { page: { title: `Target ${tag}`, content: '<p>one</p>' } } })).body.id as number;
    for (const actor of this.cast) {
      await this.cell('updatePage', actor, 'PUT', `${note}/${page}`, { json: { page: { content: `<p>edited by ${actor?.name} in ${tag}</p>` } } }, where);
      // the move: under the member's new page (or the root), then back to the top
      await this.cell('updatePage', actor, 'PUT', `${note}/${page}`, { json: { page: { parent: made.get(member) ?? root } } }, where);
      await this.cell('updatePageViaPatch', actor, 'PATCH', `${note}/${page}`, { json: { page: { parent: null } } }, where);
    }
    for (const actor of this.cast) {
      for (const [operationId, path] of [['listPageVersions', `${note}/${page}/histories`], ['getPageVersion', `${note}/${page}/histories/1`], ['diffPageVersions', `${note}/${page}/histories/diff`]] as const) {
        await this.cell(operationId, actor, 'GET', path, {}, where);
      }
    }
    // the manager's delete goes to its own new page: the member deletes the target first
    for (const actor of this.cast) {
      const target = actor === manager ? made.get(manager) : page;
      if (target !== undefined) await this.cell('deletePage', actor, 'DELETE', `${note}/${target}`, {}, where);
    }
    const own = made.get(member);
    if (own !== undefined) await this.cell('deletePage', member, 'DELETE', `${note}/${own}`, {}, where);
  }

  private mentionFor(actor: Actor | undefined): string {
    return actor === this.world.manager ? this.world.member.name : this.world.manager.name;
  }

  private async comments(): Promise<void> {
    const { note, root, where, tag } = this;
    const { manager, member } = this.world;
    const made: { actor: Actor; path: string; operationId: 'deletePageComment' | 'deleteNoteComment' }[] = [];
    for (const actor of this.cast) {
      const mention = this.mentionFor(actor);
      const body = { comment: { comment: `On the page in ${tag}, @${mention}` }, mentions: [mention] };
      const onPage = await this.cell('createPageComment', actor, 'POST', `${note}/${root}/comments`, { json: body }, where);
      if (actor && isSuccess(onPage)) made.push({ actor, path: `${note}/${root}/comments/${onPage.body.id}`, operationId: 'deletePageComment' });
      const onNote = await this.cell('createNoteComment', actor, 'POST', `${note}/comments`, { json: { ...body, comment: { comment: `On the note in ${tag}, @${mention}` } } }, where);
      if (actor && isSuccess(onNote)) made.push({ actor, path: `${note}/comments/${onNote.body.id}`, operationId: 'deleteNoteComment' });
    }
    // a comment of the member's: the others may not delete it, the manager may (and the member, its author)
    for (const target of [member, manager]) {
      const comment = (await this.fixture(member, 'POST', `${note}/${root}/comments`, { json: { comment: { comment: `Delete me (${tag})` } } })).body.id as number;
      for (const actor of this.cast.filter((actor) => actor !== member && actor !== manager).concat(target)) {
        await this.cell('deletePageComment', actor, 'DELETE', `${note}/${root}/comments/${comment}`, {}, { ...where, target: { authorId: member.id } });
      }
    }
    for (const { actor, path, operationId } of made) await this.cell(operationId, actor, 'DELETE', path, {}, { ...where, target: { authorId: actor.id } });
  }

  private async issues(): Promise<void> {
    const { note, where, tag } = this;
    const { manager, member } = this.world;
    const made = new Map<Actor, number>();
    for (const actor of this.cast) {
      const answer = await this.cell('createIssue', actor, 'POST', `${note}/issues`, { json: { issue: { title: `Issue ${tag} by ${actor?.name}`, to_user: member.name } } }, where);
      if (actor && isSuccess(answer)) made.set(actor, answer.body.index as number);
    }
    const mine = made.get(member);
    const theirs = made.get(manager);
    if (mine === undefined || theirs === undefined) return;
    for (const actor of this.cast) {
      const mention = this.mentionFor(actor);
      await this.cell('getIssue', actor, 'GET', `${note}/issues/${mine}`, {}, where);
      await this.cell('updateIssue', actor, 'PATCH', `${note}/issues/${mine}`, { json: { issue: { is_done: actor === manager } } }, where);
      await this.cell('addIssueTags', actor, 'POST', `${note}/issues/${mine}/tags`, { json: { tags: [`soak${this.lane}`] } }, where);
      await this.cell('createIssueComment', actor, 'POST', `${note}/issues/${mine}/comments`, { json: { comment: { comment: `On it (${tag}), @${mention}` }, mentions: [mention] } }, where);
      await this.cell('listIssueComments', actor, 'GET', `${note}/issues/${mine}/comments`, {}, where);
    }
    // the member's issue: its creator deletes it after the refusals; the manager's: the member may not, the manager may
    for (const actor of this.cast.filter((actor) => actor !== manager)) {
      await this.cell('deleteIssue', actor, 'DELETE', `${note}/issues/${mine}`, {}, { ...where, target: { creatorId: member.id } });
    }
    for (const actor of [member, manager]) await this.cell('deleteIssue', actor, 'DELETE', `${note}/issues/${theirs}`, {}, { ...where, target: { creatorId: manager.id } });
  }

  private async notifications(): Promise<void> {
    const { manager, member, notifications } = this.world;
    const anyone: Where = { team: 'soak' };
    for (const actor of this.cast) {
      await this.cell('listNotifications', actor, 'GET', '/api/v1/notifications?state=all&per_page=5', {}, anyone);
      // each its own (one no flow deletes: the comments of the others' rounds come and go); the read-only token and no
      // token are refused before the notification is looked up, so the manager's will do for them
      const id = notifications.get(actor === undefined || actor.scope === 'read' ? manager.name : actor.name);
      if (id !== undefined) await this.cell('toggleNotification', actor, 'PATCH', `/api/v1/notifications/${id}`, {}, anyone);
    }
    if (this.rounds % 3 === 0) await this.cell('markNotificationsRead', member, 'POST', '/api/v1/notifications/read', { json: { team: 'soak' } }, anyone);
  }

  private async notes(): Promise<void> {
    const { note, where, tag } = this;
    const { manager, member } = this.world;
    const team: Where = { team: 'soak' };
    const made = new Map<Actor, string>();
    for (const actor of this.cast) {
      const slug = `${tag}-${actor?.name ?? 'anonymous'}`;
      const answer = await this.cell('createNote', actor, 'POST', '/api/v1/notes', { json: { note: { title: `Note ${slug}`, team: 'soak', slug } } }, team);
      if (actor && isSuccess(answer)) made.set(actor, slug);
      // the document asks for the title and the team with every change (kept as they are)
      const changed = { title: `Soak ${this.slug}`, team: 'soak', description: `Touched by ${actor?.name} in ${tag}` };
      await this.cell('updateNoteViaPatch', actor, 'PATCH', note, { json: { note: changed } }, where);
    }
    const members = made.get(member);
    if (members !== undefined) {
      for (const actor of this.cast) await this.cell('deleteNote', actor, 'DELETE', `/api/v1/soak/${members}`, {}, { team: 'soak', note: { isPrivate: false } });
    }
    const managers = made.get(manager);
    if (managers !== undefined) await this.cell('deleteNote', manager, 'DELETE', `/api/v1/soak/${managers}`, {}, { team: 'soak', note: { isPrivate: false } });
  }

  private async teams(): Promise<void> {
    const { tag } = this;
    const { outsider } = this.world;
    const made = new Map<Actor, string>();
    for (const actor of this.cast) {
      const name = `${tag}${actor?.name ?? 'anonymous'}`;
      const answer = await this.cell('createTeam', actor, 'POST', '/api/v1/teams', { json: { team: { name } } }, { team: name });
      if (actor && isSuccess(answer)) {
        made.set(actor, name);
        actor.roles.set(name, 'manager');
      }
    }
    // the outsider's team: anyone signed in looks at it, no one else may add to it or delete it
    const outsiders = made.get(outsider);
    if (outsiders !== undefined) {
      for (const actor of this.cast) {
        await this.cell('getTeam', actor, 'GET', `/api/v1/teams/${outsiders}`, {}, { team: outsiders });
        if (actor !== outsider) {
          await this.cell('addTeamUser', actor, 'POST', `/api/v1/teams/${outsiders}/users`, { json: { username: this.spare.username, role: 'member' } }, { team: outsiders });
          await this.cell('deleteTeam', actor, 'DELETE', `/api/v1/teams/${outsiders}`, {}, { team: outsiders });
        }
      }
    }
    for (const [actor, name] of made) {
      await this.cell('deleteTeam', actor, 'DELETE', `/api/v1/teams/${name}`, {}, { team: name });
      actor.roles.delete(name);
    }
    // the lane's spare user, added to `soak` and removed again by the manager only
    for (const actor of this.cast) {
      await this.cell('addTeamUser', actor, 'POST', '/api/v1/teams/soak/users', { json: { username: this.spare.username, role: 'member' } }, { team: 'soak' });
    }
    for (const actor of this.cast) {
      await this.cell('removeTeamUser', actor, 'DELETE', `/api/v1/teams/soak/users/${this.spare.id}`, {}, { team: 'soak', target: { userId: this.spare.id } });
    }
  }

  private async requests(): Promise<void> {
    const { tag, isPrivate } = this;
    const { manager, member, outsider } = this.world;
    const slug = `${tag}-upstream`;
    const upstream = `/api/v1/soak/${slug}`;
    const where: Where = { team: 'soak', note: { isPrivate } };
    await this.fixture(manager, 'POST', '/api/v1/notes', { json: { note: { title: `Upstream ${tag}`, team: 'soak', slug, is_private: isPrivate } } });
    await this.fixture(manager, 'POST', `${upstream}/pages`, { json: { page: { title: 'Deploy', content: '<p>Run make deploy.</p>\n<p>Then check.</p>' } } });
    const forks = new Map<Actor, { team: string; id: number }>();
    for (const actor of this.cast) {
      const answer = await this.cell('createFork', actor, 'POST', `${upstream}/forks`, { json: { title: `Fork ${tag} ${actor?.name}` } }, where);
      if (actor && isSuccess(answer)) forks.set(actor, { team: answer.body.team.name as string, id: answer.body.id as number });
    }
    const fork = forks.get(member);
    try {
      if (!fork) return;
      // the member changes the fork's page and proposes it back
      const forkPath = `/api/v1/${fork.team}/${fork.id}`;
      const forkPage = (await this.fixture(member, 'GET', `${forkPath}/pages`)).body.pages[0].id as number;
      await this.fixture(member, 'PUT', `${forkPath}/${forkPage}`, { json: { page: { content: `<p>Run make deploy.</p>\n<p>Then check, from ${tag}.</p>` } } });
      const version = (await this.fixture(member, 'GET', `${forkPath}/${forkPage}/histories?per_page=1`)).body[0].id as number;
      const index = (await this.fixture(member, 'POST', `${forkPath}/requests`, { json: { page_versions: [version] } })).body.index as number;
      const request = `${upstream}/requests/${index}`;
      const byMember: Where = { ...where, target: { authorId: member.id } };
      for (const actor of this.cast) {
        await this.cell('getRequest', actor, 'GET', request, {}, where);
        const mention = this.mentionFor(actor);
        await this.cell('createRequestComment', actor, 'POST', `${request}/comments`, { json: { comment: { comment: `Reviewed in ${tag}, @${mention}` }, mentions: [mention] } }, where);
      }
      // closed by its author after the refusals, opened again by the manager, merged by the manager only
      for (const actor of [undefined, this.world.reader, outsider, member]) await this.cell('closeRequest', actor, 'PUT', `${request}/close`, {}, byMember);
      for (const actor of [outsider, manager]) await this.cell('openRequest', actor, 'PUT', `${request}/open`, {}, byMember);
      for (const actor of this.cast) await this.cell('mergeRequest', actor, 'PUT', `${request}/merge`, { json: {} }, where);
      await this.cell('listRequests', outsider, 'GET', `${upstream}/requests?state=all`, {}, where);
    } finally {
      for (const [actor, { team, id }] of forks) await this.cell('deleteNote', actor, 'DELETE', `/api/v1/${team}/${id}`, {}, { team, note: { isPrivate } });
      await this.cell('deleteNote', manager, 'DELETE', upstream, {}, where);
    }
  }
}

class FixtureFailed extends Error {}
