// The write case's sides with `page[base_version]` (merge-on-write, issue 19), for scripts/bench-http.ts. Both write
// the 50 pages of the plain page write (one per connection) and are measured against the same floor:
//   - base current: each write names the page's current version, the one-statement write (pages.service.ts,
//     writeText) as without a base; each connection keeps its page's version from the previous answer (`version`,
//     read off the answer's tail).
//   - base STALE_BEHIND versions old, merged: each connection writes its page from the version STALE_BEHIND before
//     the current one, changing a line that neither that version nor the versions since changed (nor their
//     neighbours), so the merge is clean; it keeps the last STALE_BEHIND + 1 versions (index and content) of its
//     page from the answers (the merged `content` and `version`).
// Before each run, the pages as they are now are read through the API (other sides write them between runs), so each
// connection starts from its page's real version(s). Every answer of a side is checked (200 and, with a current base,
// no `merge` and the next version; with a stale one, `merge.result` "merged"): a tally the report prints, warm-up
// answers included.

/** autocannon's per-connection context: passed to `setupRequest` and then to `onResponse` of the same request. */
export type LoadContext = { slot?: unknown };
// autocannon ships no types (and @types/autocannon is not a dependency): the little used here, typed by hand.
export type LoadRequest = {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Per connection: autocannon deep-copies the options for each connection, and passes this object along. */
  slot?: { path?: string };
  setupRequest?: (request: LoadRequest, context: LoadContext) => LoadRequest;
  /** Called with the answer of the request `setupRequest` built, with the same context. */
  onResponse?: (status: number, body: string, context: LoadContext) => void;
};

/** How many versions behind the current one the stale side's base is. */
export const STALE_BEHIND = 3;

/** What a side's answers were, over every run of it (warm-up included, not only the measured window). */
export class AnswerTally {
  answers = 0;
  private readonly wrong = new Map<string, number>();

  record(wrong: string | undefined): void {
    this.answers += 1;
    if (wrong !== undefined) this.wrong.set(wrong, (this.wrong.get(wrong) ?? 0) + 1);
  }

  get wrongAnswers(): number {
    return [...this.wrong.values()].reduce((sum, count) => sum + count, 0);
  }

  /** e.g. `all 4210 answers 200 merged`, or `12 of 4210 answers wrong: 409 x10, 200 without merge x2`. */
  describe(expected: string): string {
    if (this.answers === 0) return 'no answers';
    if (this.wrongAnswers === 0) return `all ${this.answers} answers ${expected}`;
    return `${this.wrongAnswers} of ${this.answers} answers not ${expected}: ${[...this.wrong].map(([what, count]) => `${what} x${count}`).join(', ')}`;
  }
}

type Answer = { version?: unknown; content?: unknown; merge?: { result?: unknown } };
function parsed(body: string): Answer | undefined {
  try {
    return JSON.parse(body) as Answer;
  } catch {
    return undefined;
  }
}

/** The answer's status, and `code` for a problem (409 edit_conflict, 422 invalid_base_version, ...). */
function statusOf(status: number, answer: Answer | undefined): string {
  const code = (answer as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${status} ${code}` : String(status);
}

type Service = { baseUrl: string; authorization: Record<string, string> };

async function getJson<T>(service: Service, path: string): Promise<T> {
  const response = await fetch(service.baseUrl + path, { headers: service.authorization });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${(await response.text()).slice(0, 300)}`);
  return (await response.json()) as T;
}

/** Runs `work` over `items`, 10 at a time. */
async function eachOf<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += 10) results.push(...(await Promise.all(items.slice(start, start + 10).map(work))));
  return results;
}

/** Hands each new connection of a run its number and its page (one of `count`, in turn). */
function connections(count: number): () => { connection: number; page: number } {
  let next = 0;
  return () => {
    const connection = next++;
    return { connection, page: connection % count };
  };
}

/**
 * Writes with `page[base_version]` the page's current version, over `paths` (one per connection): the body is
 * `writeBody()` (the plain write's) and the base. Returns the side's requests (made per run) and its answers' tally.
 */
export function currentBaseWrites(service: Service, paths: string[], headers: Record<string, string>, writeBody: () => string) {
  const tally = new AnswerTally();
  type Slot = { path?: string; version?: number; sent?: number };
  const requests = async (): Promise<LoadRequest[]> => {
    const versions = await eachOf(paths, async (path) => (await getJson<{ version: number }>(service, path)).version);
    const claim = connections(paths.length);
    return [{
      method: 'PUT', path: paths[0]!, headers, slot: {},
      setupRequest: (request, context) => {
        const slot = request.slot as Slot;
        if (slot.path === undefined) {
          const { page } = claim();
          slot.path = paths[page]!;
          slot.version = versions[page]!;
        }
        slot.sent = slot.version;
        context.slot = slot;
        return { ...request, path: slot.path, body: `${writeBody()}&${encodeURIComponent('page[base_version]')}=${slot.version}` };
      },
      onResponse: (status, body, context) => {
        const slot = context.slot as Slot;
        if (status === 200) {
          // the page's JSON ends with its version (page.presenter.ts), and a `merge` would come after it: read the
          // tail instead of parsing the whole answer, so this side's client does no more work than the plain one's
          const tail = /"version":(\d+),"model":"page"\}$/.exec(body.slice(-48));
          if (!tail) return tally.record('200 with merge, or not a page');
          slot.version = Number(tail[1]);
          return tally.record(slot.version === slot.sent! + 1 ? undefined : '200 not the next version');
        }
        const answer = parsed(body);
        const latest = (answer as { latest_version?: unknown } | undefined)?.latest_version;
        if (typeof latest === 'number') slot.version = latest; // a 409's page now: the next write starts from it
        tally.record(statusOf(status, answer));
      },
    }];
  };
  return { requests, tally };
}

type Version = { version: number; lines: string[] };

/** A line index where `base` and `now` agree, with their neighbours: changing it there merges cleanly. */
function quietLine(base: string[], now: string[], start: number): number {
  const same = (index: number) => index < 0 || index >= base.length || base[index] === now[index];
  for (let step = 0; step < base.length; step += 1) {
    const line = (start + step) % base.length;
    if (same(line - 1) && same(line) && same(line + 1)) return line;
  }
  return start % base.length;
}

/**
 * Writes from a base STALE_BEHIND versions old that merge cleanly, over `paths` (one per connection). Returns the
 * side's requests (made per run) and its answers' tally.
 */
export function staleBaseWrites(service: Service, paths: string[], headers: Record<string, string>) {
  const tally = new AnswerTally();
  type Slot = { path?: string; connection?: number; edits?: number; versions?: Version[] };
  const requests = async (): Promise<LoadRequest[]> => {
    // each page's last STALE_BEHIND + 1 versions, oldest first
    const histories = await eachOf(paths, async (path) => {
      const history = `${path}/histories?per_page=${STALE_BEHIND + 1}`;
      let versions = await getJson<{ index: number; content: string }[]>(service, history);
      if (versions.length < STALE_BEHIND + 1) {
        // a page the other sides wrote too little yet (a short run): versions of its own first
        for (let n = versions.length; n < STALE_BEHIND + 1; n += 1) {
          const lines = versions[0]!.content.split('\n');
          lines[(n * 7) % lines.length] = `<p>Version ${n + 1}, written for the stale-base writes to have a base.</p>`;
          versions = [{ index: versions[0]!.index + 1, content: lines.join('\n') }, ...versions];
          const response = await fetch(service.baseUrl + path, {
            method: 'PUT', headers, body: `page[content]=${encodeURIComponent(versions[0]!.content)}`,
          });
          if (!response.ok) throw new Error(`PUT ${path}: ${response.status} ${(await response.text()).slice(0, 300)}`);
        }
        versions = await getJson<{ index: number; content: string }[]>(service, history);
      }
      return versions.map((version) => ({ version: version.index, lines: version.content.split('\n') })).reverse();
    });
    const claim = connections(paths.length);
    return [{
      method: 'PUT', path: paths[0]!, headers, slot: {},
      setupRequest: (request, context) => {
        const slot = request.slot as Slot;
        if (slot.path === undefined) {
          const { connection, page } = claim();
          slot.connection = connection;
          slot.path = paths[page]!;
          slot.versions = histories[page]!.map((version) => ({ ...version }));
          slot.edits = 0;
        }
        slot.edits! += 1;
        context.slot = slot;
        const base = slot.versions![0]!;
        const now = slot.versions!.at(-1)!;
        const lines = [...base.lines];
        const line = quietLine(base.lines, now.lines, slot.edits! * 7 + slot.connection! * 3);
        lines[line] = `<p>Merged edit ${slot.edits} of connection ${slot.connection}: written over version ${base.version}, ${STALE_BEHIND} behind.</p>`;
        return { ...request, path: slot.path, body: `page[content]=${encodeURIComponent(lines.join('\n'))}&${encodeURIComponent('page[base_version]')}=${base.version}` };
      },
      onResponse: (status, body, context) => {
        const slot = context.slot as Slot;
        const answer = parsed(body);
        if (status !== 200) return tally.record(statusOf(status, answer));
        if (answer?.merge?.result !== 'merged') return tally.record(`200 with merge ${JSON.stringify(answer?.merge?.result ?? null)}`);
        if (typeof answer.version !== 'number' || typeof answer.content !== 'string') return tally.record('200 without version or content');
        slot.versions!.push({ version: answer.version, lines: answer.content.split('\n') });
        if (slot.versions!.length > STALE_BEHIND + 1) slot.versions!.shift();
        tally.record(undefined);
      },
    }];
  };
  return { requests, tally };
}
