// Flow b) fuzzing, in a loop: for the operations of generated/openapi.json (round-robin), the project's sample request
// (test/support/samples.ts), pointed at the fuzzer's own team `fuzz` and note `target`, with one part made hostile
// from test/support/hostile-values.ts: a query parameter (declared, or not), a path segment, a form field, a JSON
// body field. Any answer below 500 is fine here (test/api/fuzz.test.ts checks the refusals themselves).
// Left out: the webhook writes (their URLs point off this machine) and revokeToken (the fuzzer's own token).
import fc from 'fast-check';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';
import { operations } from '../../src/http/operations.ts';
import { DEEP, deepText, hostileEncodings, hostileStrings, wrongTypes } from '../support/hostile-values.ts';
import { formText, jsonOf, leaves, setAt } from '../support/form-bodies.ts';
import { SAMPLES, type Sample, type State } from '../support/samples.ts';
import type { Traffic, Deadline } from './traffic.ts';
import { makeTeam, must, type World } from './world.ts';

const LEFT_OUT = new Set(['createWebhook', 'updateWebhook', 'revokeToken']);
const MAX_REQUESTS = 200_000;
/** Long enough for the worst case's answers, which a hostile list request may ask for too. */
const REQUEST_TIMEOUT_MS = 120_000;

type Parameter = { name: string; in: string };
type Operation = { id: string; method: string; template: string; query: string[]; json: boolean; form: boolean };
type Hostile = { method: string; path: string; headers: Record<string, string>; body?: string; upload?: Sample['file']; kind: string };

function documentOperations(): Operation[] {
  const document = loadOpenApiDocument() as unknown as {
    paths: Record<string, Record<string, { operationId?: string; parameters?: (Parameter | { $ref: string })[]; requestBody?: { content: Record<string, unknown> } }>>;
    components: { parameters?: Record<string, Parameter> };
  };
  const resolve = (parameter: Parameter | { $ref: string }): Parameter =>
    '$ref' in parameter ? document.components.parameters![parameter.$ref.replace('#/components/parameters/', '')]! : parameter;
  const found: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const id = operation?.operationId;
      const entry = id ? (operations as Record<string, object>)[id] : undefined;
      if (!id || !entry || 'servedBy' in entry || LEFT_OUT.has(id)) continue;
      const types = Object.keys(operation.requestBody?.content ?? {});
      found.push({
        id, method: method.toUpperCase(), template,
        query: (operation.parameters ?? []).map(resolve).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
        json: types.includes('application/json'), form: types.includes('application/x-www-form-urlencoded'),
      });
    }
  }
  return found;
}

// past the title (255) and the comment (64 KiB) limits often, past the page content's (1 MiB) rarely: they cost the
// most to send, and the other flows carry the large bodies
const huge = fc.oneof({ arbitrary: fc.constantFrom(300, 70_000), weight: 8 }, { arbitrary: fc.constant(1_100_000), weight: 1 }).map((length) => 'x'.repeat(length));
const hostileString = hostileStrings(huge);
const hostileEncoded = hostileEncodings(hostileString, ['%00', '%ff%fe', '%ED%A0%80', '%zz', '%', '%C0%AF', '..%2F..%2F', '%2e%2e', '%41'.repeat(5000)]);

function hostileFor(operation: Operation, sample: Sample): fc.Arbitrary<Hostile> {
  const base = { method: sample.method, path: sample.path, headers: { ...sample.headers }, ...(sample.file ? { upload: sample.file } : {}) };
  const withForm = sample.form ? { body: formText(sample.form), headers: { ...sample.headers, 'Content-Type': 'application/x-www-form-urlencoded' } } : {};
  const kinds: fc.Arbitrary<Hostile>[] = [
    fc.tuple(fc.constantFrom(...operation.query, 'page', 'junk'), hostileEncoded, fc.constantFrom('', '[]', '[a][b]')).map(([name, value, suffix]) => ({
      ...base, ...withForm, kind: 'query', path: `${sample.path}${sample.path.includes('?') ? '&' : '?'}${name}${suffix}=${value}`,
    })),
  ];
  const segments = operation.template.split('/').flatMap((segment, index) => (segment.startsWith('{') ? [index] : []));
  if (segments.length > 0) {
    kinds.push(fc.tuple(fc.constantFrom(...segments), hostileEncoded).map(([index, value]) => {
      const [pathOnly, query] = sample.path.split('?');
      const parts = pathOnly!.split('/');
      parts[index] = value;
      return { ...base, ...withForm, kind: 'path segment', path: parts.join('/') + (query ? `?${query}` : '') };
    }));
  }
  if (sample.form && operation.form) {
    const form = sample.form;
    kinds.push(fc.tuple(fc.constantFrom(...Object.keys(form)), hostileEncoded, fc.constantFrom('', '[x]', '[]')).map(([key, value, suffix]) => {
      const rest = formText(Object.fromEntries(Object.entries(form).filter(([other]) => other !== key)));
      return { ...base, kind: 'form field', headers: { ...sample.headers, 'Content-Type': 'application/x-www-form-urlencoded' }, body: [rest, `${encodeURIComponent(key)}${suffix}=${value}`].filter(Boolean).join('&') };
    }));
  }
  if (sample.form && operation.json) {
    const json = jsonOf(sample.form);
    kinds.push(fc.tuple(fc.constantFrom(...leaves(json)), fc.oneof(hostileString, wrongTypes()), deepText).map(([at, value, deep]) => ({
      ...base, kind: 'json field', headers: { ...sample.headers, 'Content-Type': 'application/json' }, body: JSON.stringify(setAt(json, at, value)).replace(DEEP, deep),
    })));
  }
  return fc.oneof(...kinds);
}

/** The fuzzer's team and note, and the sample state pointing at them. */
export async function makeFuzzWorld(traffic: Traffic, world: World): Promise<State> {
  const { fuzzer } = world;
  const note = '/api/v1/fuzz/target';
  await makeTeam(traffic, fuzzer, 'fuzz');
  await makeTeam(traffic, fuzzer, 'fuzzspare');
  await must(traffic, fuzzer, 'POST', '/api/v1/notes', { json: { note: { title: 'Target', team: 'fuzz', slug: 'target' } } });
  const root = (await must(traffic, fuzzer, 'POST', `${note}/pages`, { json: { page: { title: 'Home', content: '<p>Release steps</p>' } } })).body.id as number;
  const pageId = (await must(traffic, fuzzer, 'POST', `${note}/pages`, { json: { page: { title: 'Releases', content: '<p>Release steps</p>', parent: root } } })).body.id as number;
  await must(traffic, fuzzer, 'PUT', `${note}/${pageId}`, { json: { page: { content: '<p>Release steps, reviewed</p>' } } });
  await must(traffic, fuzzer, 'POST', `${note}/issues`, { json: { issue: { title: 'Proofread the guide' } } });
  await must(traffic, fuzzer, 'POST', `${note}/${pageId}/comments`, { json: { comment: { comment: 'First!' } } });
  const upload = new FormData();
  upload.append('file', new Blob(['attached text']), 'notes.txt');
  const attachment = Number(String((await must(traffic, fuzzer, 'POST', `${note}/attachments`, { upload })).body.filelink).split('/').pop());
  const fork = (await must(traffic, fuzzer, 'POST', `${note}/forks`, { json: {} })).body as { id: number; team: { name: string } };
  const forkPath = `/api/v1/${fork.team.name}/${fork.id}`;
  const forkPage = ((await must(traffic, fuzzer, 'GET', `${forkPath}/pages`)).body.pages as { id: number; title: string }[]).find((page) => page.title === 'Releases')!.id;
  await must(traffic, fuzzer, 'PUT', `${forkPath}/${forkPage}`, { json: { page: { content: '<p>Release steps, from the fork</p>' } } });
  const forkVersionId = (await must(traffic, fuzzer, 'GET', `${forkPath}/${forkPage}/histories?per_page=1`)).body[0].id as number;
  for (let i = 0; i < 2; i += 1) await must(traffic, fuzzer, 'POST', `${forkPath}/requests`, { json: { page_versions: [forkVersionId] } });
  const notZip = new FormData();
  notZip.append('file', new Blob(['not a zip']), 'note.zip');
  const job = (await must(traffic, fuzzer, 'POST', '/api/v1/teams/fuzz/imports', { upload: notZip })).body.id as number;
  return {
    pageId, forkId: fork.id, forkVersionId, transitionRequests: [1, 2], mergeRequests: [99_999, 99_998],
    createdTeams: ['fuzznone0', 'fuzznone1'], createdNotes: ['none0', 'none1'], createdPages: [99_999_999], createdComments: [99_999_999],
    createdIssues: [99_999], createdNoteComments: [99_999_999], createdIssueComments: [99_999_999], createdRequestComments: [99_999_999],
    createdAttachments: [attachment], notificationId: 99_999_999, extraUsers: [world.fuzzSpare], spareTeam: 'fuzzspare', renames: 0,
    createdApps: ['none'], createdWebhooks: [99_999_999], grantedApps: ['none'], spareTokens: [99_999_999], jobs: [job],
  };
}

/** The sample pointed at the fuzzer's team, note and fork (the samples name the role matrix's world). */
function pointed(sample: Sample, forkTeam: string, forkId: number): Sample {
  const path = sample.path
    .replaceAll('/api/v1/writers/handbook', '/api/v1/fuzz/target')
    .replaceAll('/api/v1/teams/writers', '/api/v1/teams/fuzz')
    .replaceAll('/api/v1/writers/', '/api/v1/fuzz/')
    .replaceAll(`/api/v1/manager/${forkId}`, `/api/v1/${forkTeam}/${forkId}`);
  const form = sample.form ? Object.fromEntries(Object.entries(sample.form).map(([key, value]) => [key, value === 'writers' ? 'fuzz' : value])) : undefined;
  return { ...sample, path, ...(form ? { form } : {}) };
}

export class FuzzFlow {
  requests = 0;
  readonly seed = Number(process.env.SOAK_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

  private readonly traffic: Traffic;
  private readonly world: World;
  private readonly state: State;
  private readonly deadline: Deadline;

  constructor(traffic: Traffic, world: World, state: State, deadline: Deadline) {
    this.traffic = traffic;
    this.world = world;
    this.state = state;
    this.deadline = deadline;
  }

  async run(): Promise<void> {
    const found = documentOperations();
    const samples = new Map(SAMPLES.map(([id, sample]) => [id, sample]));
    const forkTeam = this.world.fuzzer.name;
    const plans = found.flatMap((operation) => {
      const sample = samples.get(operation.id)?.(structuredClone(this.state), 0);
      return sample ? [{ operation, arbitrary: hostileFor(operation, pointed(sample, forkTeam, this.state.forkId)) }] : [];
    });
    if (plans.length < found.length / 2) throw new Error(`fuzz: only ${plans.length} of ${found.length} operations have a sample request`);
    for (let n = 0; n < MAX_REQUESTS && !this.deadline.over; n += 1) {
      const { operation, arbitrary } = plans[n % plans.length]!;
      const [request] = fc.sample(arbitrary, { numRuns: 1, seed: this.seed + n });
      if (!request) continue;
      let upload: FormData | undefined;
      if (request.upload) {
        upload = new FormData();
        upload.append('file', new Blob([request.upload.data]), request.upload.filename);
      }
      await this.traffic.send(`fuzz ${operation.id} (${request.kind}, seed ${this.seed + n})`, request.method, request.path, {
        token: this.world.fuzzer.token,
        headers: request.headers,
        ...(upload ? { upload } : request.body !== undefined ? { raw: { body: request.body } } : {}),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      this.requests += 1;
    }
  }
}
