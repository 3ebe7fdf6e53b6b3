// Flow d) imports and exports, in a loop: the manager exports a note (GET /api/v1/{team}/{note}/export, a zip),
// imports the zip back into the team `transfer` under a new name (POST /api/v1/teams/transfer/imports, multipart),
// polls the job (GET /api/v1/jobs/{id}) until it is done, reads the copy and deletes it. The note is `transfer/source`
// (a small tree with versions, an issue, comments), and every fourth round the worst case's `large/worst` (5 MiB of
// pages with their versions, 200 comments of 64 KiB).
import { isShed, isSuccess, sleep, type Traffic } from './traffic.ts';
import { Flow } from './flow.ts';
import { makeTeam, must, type World } from './world.ts';

const MAX_ROUNDS = 10_000;
/** The longest a job may take: the worst case's import writes tens of MB. */
const JOB_TIMEOUT_MS = 180_000;

export async function makeTransferWorld(traffic: Traffic, world: World): Promise<void> {
  const { manager, member } = world;
  const note = '/api/v1/transfer/source';
  await makeTeam(traffic, manager, 'transfer');
  await must(traffic, manager, 'POST', '/api/v1/teams/transfer/users', { json: { username: member.name, role: 'member' } });
  await must(traffic, manager, 'POST', '/api/v1/notes', { json: { note: { title: 'Source', team: 'transfer', slug: 'source', description: 'What is exported' } } });
  const root = (await must(traffic, manager, 'POST', `${note}/pages`, { json: { page: { title: 'Home', content: '<p>Home</p>' } } })).body.id as number;
  for (let i = 0; i < 5; i += 1) {
    const page = (await must(traffic, member, 'POST', `${note}/pages`, { json: { page: { title: `Part ${i}`, content: `<p>Part ${i}</p>`, parent: root } } })).body.id as number;
    await must(traffic, manager, 'PUT', `${note}/${page}`, { json: { page: { content: `<p>Part ${i}, reviewed</p>` } } });
    await must(traffic, member, 'POST', `${note}/${page}/comments`, { json: { comment: { comment: `About part ${i}, @${manager.name}` }, mentions: [manager.name] } });
  }
  const issue = (await must(traffic, member, 'POST', `${note}/issues`, { json: { issue: { title: 'Check the parts', to_user: manager.name } } })).body.index as number;
  await must(traffic, manager, 'POST', `${note}/issues/${issue}/comments`, { json: { comment: { comment: 'On it' } } });
}

export class TransferFlow extends Flow {
  rounds = 0;
  imported = 0;
  exportedBytes = 0;

  async run(): Promise<void> {
    const token = this.world.manager.token;
    for (; this.rounds < MAX_ROUNDS && !this.deadline.over; this.rounds += 1) {
      const source = this.rounds % 4 === 3 ? '/api/v1/large/worst' : '/api/v1/transfer/source';
      const zip = await this.traffic.sendUntilServed('transfer', 'GET', `${source}/export`, { token, timeoutMs: JOB_TIMEOUT_MS });
      if (!isSuccess(zip)) {
        if (zip && zip.status < 500) this.traffic.surprise('transfer', `GET ${source}/export expected 200`, zip);
        continue;
      }
      this.exportedBytes += zip.bytes;
      const name = `copy-${this.rounds}`;
      const form = new FormData();
      form.append('name', name);
      form.append('file', new Blob([new Uint8Array(zip.buffer)], { type: 'application/zip' }), 'note.zip');
      const queued = await this.traffic.sendUntilServed('transfer', 'POST', '/api/v1/teams/transfer/imports', { token, upload: form });
      if (!queued || queued.status !== 202) {
        if (queued && queued.status < 500) this.traffic.surprise('transfer', `POST /api/v1/teams/transfer/imports of ${source} expected 202`, queued);
        continue;
      }
      const job = await this.finished(queued.body.id as number);
      if (!job) continue;
      if (job.state !== 'done') {
        this.traffic.surprise('transfer', `import job ${queued.body.id} of ${source} ended ${job.state}: ${JSON.stringify(job.error)}`);
        continue;
      }
      this.imported += 1;
      const copy = `/api/v1/transfer/${name}`;
      for (const [method, path] of [['GET', copy], ['GET', `${copy}/pages`], ['DELETE', copy]] as const) {
        const answer = await this.traffic.sendUntilServed('transfer', method, path, { token });
        if (answer && !isSuccess(answer) && answer.status < 500) this.traffic.surprise('transfer', `${method} ${path} (the imported copy) expected 2xx`, answer);
      }
    }
  }

  /** Polls the job every 250 ms until it is done or failed; undefined if it never ends (recorded). */
  private async finished(id: number): Promise<{ state: string; error: unknown } | undefined> {
    const started = Date.now();
    for (;;) {
      const answer = await this.traffic.send('transfer', 'GET', `/api/v1/jobs/${id}`, { token: this.world.manager.token });
      if (!answer || answer.status >= 500) return undefined;
      if (answer.status === 200 && (answer.body.state === 'done' || answer.body.state === 'failed')) return answer.body;
      if (answer.status !== 200 && !isShed(answer)) {
        this.traffic.surprise('transfer', `GET /api/v1/jobs/${id} expected 200`, answer);
        return undefined;
      }
      if (Date.now() - started > JOB_TIMEOUT_MS) {
        this.traffic.surprise('transfer', `import job ${id} still ${answer.body?.state} after ${JOB_TIMEOUT_MS / 1000} s`);
        return undefined;
      }
      await sleep(250);
    }
  }
}
