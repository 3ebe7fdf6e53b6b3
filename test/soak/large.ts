// Flow c) the worst-case answers, in a loop, in the shapes of test/api/answer-size.test.ts, made smaller to set up in
// seconds: in the team `large`, the public note `worst` with a 64 KiB description, a page of 1 MiB (the page content
// limit) with four children of 1 MiB and a few versions rewriting all of it, 100 comments of 64 KiB on the page and
// 100 on the note (the member's, mentioning the manager: 200 notifications), and 100 more notes with 64 KiB
// descriptions. Each round reads four of the long lists (per_page=100) and pages at once, every third round walks a
// whole list by its Link headers, and every fourth writes two 1 MiB pages at once.
import { isShed, type Answered, type Deadline, type Traffic } from './traffic.ts';
import { joinTeam, makeTeam, must, type World } from './world.ts';

const MiB = 1024 * 1024;
const KiB = 1024;
const NOTE = '/api/v1/large/worst';
const CHILDREN = 4;
const VERSIONS = 4;
const COMMENTS = 100;
const NOTES = 100;
const MAX_ROUNDS = 100_000;

/** Text of `bytes` ASCII bytes in lines of HTML, different for every `seed`, so that versions differ in every line. */
export function text(bytes: number, seed: string): string {
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n += 1) {
    const line = `<p>${seed} line ${n} lorem ipsum dolor sit amet consectetur adipiscing</p>\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('').slice(0, bytes);
}

/** Runs `count` jobs, `width` at a time. */
async function batched(count: number, width: number, job: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += width) await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, k) => job(i + k)));
}

export type LargeWorld = { pageId: number; children: number[] };

export async function makeLargeWorld(traffic: Traffic, world: World): Promise<LargeWorld> {
  const { manager, member } = world;
  await makeTeam(traffic, manager, 'large');
  await joinTeam(traffic, manager, 'large', member);
  await must(traffic, manager, 'POST', '/api/v1/notes', { json: { note: { title: 'Worst', team: 'large', slug: 'worst', description: text(64 * KiB, 'description') } } });
  const pageId = (await must(traffic, manager, 'POST', `${NOTE}/pages`, { json: { page: { title: 'Big', content: text(MiB, 'page') } } })).body.id as number;
  const children: number[] = [];
  for (let i = 0; i < CHILDREN; i += 1) {
    children.push((await must(traffic, manager, 'POST', `${NOTE}/pages`, { json: { page: { title: `Child ${i}`, content: text(MiB, `child ${i}`), parent: pageId } } })).body.id as number);
  }
  for (let v = 0; v < VERSIONS; v += 1) await must(traffic, manager, 'PUT', `${NOTE}/${pageId}`, { json: { page: { content: text(MiB, `version ${v}`) } } });
  const comment = (target: string, i: number) =>
    must(traffic, member, 'POST', target, { json: { comment: { comment: text(64 * KiB, `comment ${i}`) }, mentions: [manager.name] } });
  await batched(COMMENTS, 4, (i) => comment(`${NOTE}/${pageId}/comments`, i));
  await batched(COMMENTS, 4, (i) => comment(`${NOTE}/comments`, i));
  await batched(NOTES, 4, (i) => must(traffic, manager, 'POST', '/api/v1/notes', { json: { note: { title: `More ${i}`, team: 'large', description: text(64 * KiB, `note ${i}`) } } }));
  return { pageId, children };
}

export class LargeFlow {
  rounds = 0;
  bytes = 0;

  private readonly traffic: Traffic;
  private readonly world: World;
  private readonly large: LargeWorld;
  private readonly deadline: Deadline;

  constructor(traffic: Traffic, world: World, large: LargeWorld, deadline: Deadline) {
    this.traffic = traffic;
    this.world = world;
    this.large = large;
    this.deadline = deadline;
  }

  private get targets(): string[] {
    const { pageId, children } = this.large;
    return [
      `${NOTE}/${pageId}/comments?per_page=100`, `${NOTE}/comments?per_page=100`, '/api/v1/teams/large/notes?per_page=100',
      '/api/v1/notes?per_page=100', `${NOTE}/${pageId}`, `${NOTE}/pages`, `${NOTE}/${pageId}/histories?per_page=100`,
      '/api/v1/notifications?state=all&per_page=100', '/api/v1/search?q=lorem&per_page=100', '/api/v1/logs?per_page=100',
      `${NOTE}/${children[this.rounds % children.length]}`, NOTE,
    ];
  }

  private async read(path: string, compressed: boolean): Promise<Answered | undefined> {
    const answer = await this.traffic.send('large', 'GET', path, {
      token: this.world.manager.token,
      headers: { 'Accept-Encoding': compressed ? 'gzip, br' : 'identity' },
    });
    if (answer && answer.status !== 200 && !isShed(answer) && answer.status < 500) this.traffic.surprise('large', `GET ${path} expected 200`, answer);
    if (answer) this.bytes += answer.bytes;
    return answer;
  }

  async run(): Promise<void> {
    for (; this.rounds < MAX_ROUNDS && !this.deadline.over; this.rounds += 1) {
      const targets = this.targets;
      const four = Array.from({ length: 4 }, (_, k) => targets[(this.rounds * 4 + k) % targets.length]!);
      await Promise.all(four.map((path, k) => this.read(path, (this.rounds + k) % 2 === 0)));
      if (this.rounds % 3 === 2) await this.walk(targets[this.rounds % 4]!);
      if (this.rounds % 4 === 3) {
        const { children } = this.large;
        await Promise.all([0, 1].map(async (k) => {
          const path = `${NOTE}/${children[(this.rounds + k) % children.length]}`;
          const answer = await this.traffic.send('large', 'PUT', path, { token: this.world.member.token, json: { page: { content: text(MiB, `rewrite ${this.rounds} ${k}`) } } });
          if (answer && answer.status !== 200 && !isShed(answer) && answer.status < 500) this.traffic.surprise('large', `PUT ${path} (1 MiB) expected 200`, answer);
        }));
      }
    }
  }

  /** Reads every page of results of a list, following `Link: rel="next"`. */
  private async walk(first: string): Promise<void> {
    let next: string | undefined = first;
    for (let pages = 0; next && pages < 100 && !this.deadline.over; pages += 1) {
      const answer = await this.read(next, pages % 2 === 0);
      const link = answer?.headers.get('link') ?? '';
      const url = /<([^>]+)>; rel="next"/.exec(link)?.[1];
      next = url ? new URL(url).pathname + new URL(url).search : undefined;
    }
  }
}
