// Property-based fuzzing from the document (fast-check): for every operation the API router serves, requests built
// from its sample (test/support/samples.ts) with one part made hostile: a body field of the wrong type, with NUL, a
// lone surrogate, a huge string or nesting thousands deep; a form value with broken percent-encoding; a body in a
// bad encoding (invalid UTF-8, truncated JSON, a Content-Type that does not match, a lying Content-Encoding); a
// query parameter or a path segment of the same kinds; a method the path does not have. Every answer must be below
// 500, every refusal RFC 9457 problem details valid against the document's Problem schema, and a refused write must
// leave the database as it was (a digest of every table: row count and latest updated_at).
// A header parameter the document declares (If-Match, Range, Last-Event-ID) is made hostile too. The sample's own
// headers go with every request: the change stream's (streamEvents) ask for its JSON form, which ends, as its
// `format=json` does; an answer that is a live event stream all the same is read for a moment, hung up on and a
// failure, and any answer not complete within REQUEST_SECONDS is a failure rather than a hang.
// FUZZ_RUNS requests in all (default 2000), at most FUZZ_SECONDS (default 60); FUZZ_SEED replays a run.
// test/api/hostile-input.test.ts holds the hand-written cases; this file generates them.
import fc from 'fast-check';
import { DEEP, deepText, hostileEncodings, hostileStrings, wrongTypes } from '../support/hostile-values.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';
import { operations } from '../../src/http/operations.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { formText, jsonOf, leaves, setAt } from '../support/form-bodies.ts';
import { readFor, SAMPLES, seedSampleWorld, type Sample, type State } from '../support/samples.ts';
import { documentSchema } from '../support/document-schemas.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const METHODS = ['GET', 'PUT', 'POST', 'PATCH', 'DELETE'];
/** The longest an answer may take to arrive whole; a live event stream is read for LIVE_READ_MS, then hung up on. */
const REQUEST_SECONDS = 30;
const LIVE_READ_MS = 500;

type Parameter = { name: string; in: string };
type Operation = { id: string; method: string; template: string; parameters: Parameter[]; bodyTypes: string[]; allowed: string[] };
type Hostile = { method: string; path: string; headers: Record<string, string>; body?: string | Uint8Array; kind: string };

let app: TestApp;
let token: string;
let state: State;
let digestQuery: string;
let validateProblem: (value: unknown) => boolean;

type Reference = { $ref: string };

function documentOperations(): Operation[] {
  const document = loadOpenApiDocument() as unknown as {
    paths: Record<string, Record<string, { operationId?: string; parameters?: (Parameter | Reference)[]; requestBody?: { content: Record<string, unknown> } }>>;
    components: { parameters?: Record<string, Parameter> };
  };
  // the bundle keeps shared parameters (per_page, page, If-Match) as references to components/parameters
  const resolve = (parameter: Parameter | Reference): Parameter =>
    '$ref' in parameter ? document.components.parameters![parameter.$ref.replace('#/components/parameters/', '')]! : parameter;
  const found: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    const allowed = METHODS.filter((method) => item[method.toLowerCase()]);
    for (const method of allowed) {
      const operation = item[method.toLowerCase()]!;
      const entry = (operations as Record<string, object>)[operation.operationId!];
      if (!entry || 'servedBy' in entry) continue;
      const shared = (item.parameters as unknown as (Parameter | Reference)[] | undefined) ?? [];
      found.push({
        id: operation.operationId!, method, template, allowed,
        parameters: [...shared, ...(operation.parameters ?? [])].map(resolve),
        bodyTypes: Object.keys(operation.requestBody?.content ?? {}),
      });
    }
  }
  return found;
}

// past the title (255), the comment (64 KiB), the page content (1 MiB) and the body (2 MiB) limits; the large ones
// rarely, they cost the most to send
const huge = fc.oneof(
  { arbitrary: fc.constantFrom(300, 70_000), weight: 6 },
  { arbitrary: fc.constantFrom(1_100_000, 2_200_000), weight: 1 },
).map((length) => 'x'.repeat(length));
const hostileString = hostileStrings(huge);
const wrongType = wrongTypes();
/** Percent-encoded text no decoder should take whole: NUL, bytes that are not UTF-8, an encoded surrogate, bad escapes. */
const hostileEncoded = hostileEncodings(hostileString, ['%00', '%ff%fe', '%ED%A0%80', '%zz', '%', '%C0%AF', '..%2F..%2F', '%2e%2e', `${'%41'.repeat(5000)}`]);
/** Header values a client can send (no NUL, CR or LF; Latin-1 only) that no header parameter should take. */
const hostileHeader = fc.oneof(
  fc.constantFrom(
    '', '-1', 'abc', '1.5', '1e3', '0x10', '99999999999999999999', '9'.repeat(8000), '\u00ff\u00fe', '%00', '*', ', , ,',
    'bytes=0-', 'bytes=-0', 'bytes=1-0', 'bytes=99999999999999999999-', `bytes=${'0-1,'.repeat(500)}`, 'W/"x"', '"'.repeat(100),
  ),
  fc.string({ maxLength: 40 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')),
);

/** The hostile requests of one operation. */
function arbitraryFor(operation: Operation, sample: Sample): fc.Arbitrary<Hostile> {
  const auth = { ...sample.headers, Authorization: `Bearer ${token}` };
  const base = { method: sample.method, path: sample.path };
  const json = sample.form ? jsonOf(sample.form) : {};
  const kinds: fc.Arbitrary<Hostile>[] = [];
  if (operation.bodyTypes.includes('application/json')) {
    const paths = leaves(json);
    kinds.push(
      fc.tuple(fc.constantFrom(...paths), fc.oneof(hostileString, wrongType), deepText).map(([at, value, deep]) => ({
        ...base, kind: 'json field', headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify(setAt(json, at, value)).replace(DEEP, deep),
      })),
    );
  }
  if (operation.bodyTypes.includes('application/x-www-form-urlencoded') && sample.form) {
    const keys = Object.keys(sample.form);
    kinds.push(
      fc.tuple(fc.constantFrom(...keys), hostileEncoded, fc.constantFrom('', '[x]', '[]', `${'[a]'.repeat(40)}`)).map(([key, value, suffix]) => {
        const rest = Object.fromEntries(Object.entries(sample.form!).filter(([other]) => other !== key));
        const text = [formText(rest), `${encodeURIComponent(key)}${suffix}=${value}`].filter(Boolean).join('&');
        return { ...base, kind: 'form field', headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' }, body: text };
      }),
    );
  }
  const valid = JSON.stringify(json);
  kinds.push(
    fc.tuple(fc.constantFrom('invalid utf-8', 'truncated', 'text/plain', 'xml', 'multipart without boundary', 'json as form', 'gzip that is not', 'charset'), fc.nat()).map(([how, cut]) => {
      const headers: Record<string, string> = { ...auth, 'Content-Type': 'application/json' };
      let body: string | Uint8Array = valid;
      if (how === 'invalid utf-8') body = Buffer.concat([Buffer.from(valid.slice(0, Math.max(1, valid.length - 3))), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from('"}')]);
      if (how === 'truncated') body = valid.slice(0, cut % Math.max(1, valid.length - 1));
      if (how === 'text/plain') headers['Content-Type'] = 'text/plain';
      if (how === 'xml') [headers['Content-Type'], body] = ['application/xml', '<note><title>x</title></note>'];
      if (how === 'multipart without boundary') headers['Content-Type'] = 'multipart/form-data';
      if (how === 'json as form') headers['Content-Type'] = 'application/x-www-form-urlencoded';
      if (how === 'gzip that is not') headers['Content-Encoding'] = 'gzip';
      if (how === 'charset') headers['Content-Type'] = 'application/json; charset=utf-16';
      return { ...base, kind: `body ${how}`, headers, body };
    }),
  );
  const queryNames = operation.parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
  kinds.push(
    fc.tuple(fc.constantFrom(...queryNames, 'page', 'junk'), hostileEncoded, fc.constantFrom('', '[]', '[a][b]')).map(([name, value, suffix]) => ({
      ...base, kind: 'query', headers: auth,
      path: `${sample.path}${sample.path.includes('?') ? '&' : '?'}${name}${suffix}=${value}`,
      ...(sample.form ? { body: formText(sample.form), headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' } } : {}),
    })),
  );
  const headerNames = operation.parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name);
  if (headerNames.length > 0) {
    kinds.push(
      fc.tuple(fc.constantFrom(...headerNames), hostileHeader).map(([name, value]) => ({
        ...base, kind: `header ${name}`, headers: { ...auth, [name]: value },
        ...(sample.form ? { body: formText(sample.form), headers: { ...auth, [name]: value, 'Content-Type': 'application/x-www-form-urlencoded' } } : {}),
      })),
    );
  }
  const segments = operation.template.split('/').map((segment, index) => (segment.startsWith('{') ? index : -1)).filter((index) => index >= 0);
  if (segments.length > 0) {
    kinds.push(
      fc.tuple(fc.constantFrom(...segments), hostileEncoded).map(([index, value]) => {
        const [pathOnly, query] = sample.path.split('?');
        const parts = pathOnly!.split('/');
        parts[index] = value;
        return { ...base, kind: 'path segment', headers: auth, path: parts.join('/') + (query ? `?${query}` : '') };
      }),
    );
  }
  const wrong = METHODS.filter((method) => !operation.allowed.includes(method));
  if (wrong.length > 0) kinds.push(fc.constantFrom(...wrong).map((method) => ({ ...base, method, kind: 'wrong method', headers: auth })));
  return fc.oneof(...kinds);
}

/**
 * Sends a hostile request and reads its answer whole, within REQUEST_SECONDS; a live event stream (which never ends)
 * is read for LIVE_READ_MS and hung up on.
 */
async function send(request: Hostile, body: BodyInit | undefined): Promise<{ response: Response; text: string; live: boolean } | 'timed out'> {
  const hangUp = new AbortController();
  const timer = setTimeout(() => hangUp.abort(), REQUEST_SECONDS * 1000);
  try {
    const response = await fetch(app.baseUrl + request.path, { method: request.method, headers: request.headers, body, signal: hangUp.signal });
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      return { response, text: await readFor(response, hangUp, LIVE_READ_MS), live: true };
    }
    return { response, text: await response.text(), live: false };
  } catch (error) {
    if (hangUp.signal.aborted) return 'timed out';
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function digest(): Promise<Record<string, unknown>> {
  const rows = await app.em().execute<Record<string, unknown>[]>(digestQuery);
  return rows[0]!;
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_HOUR: '10000000' });
  const world = await seedSampleWorld(app);
  token = world.manager.token;
  state = world.state;
  const columns = await app.em().execute<{ table_name: string; has_updated: boolean }[]>(
    `select table_name, bool_or(column_name = 'updated_at') as has_updated from information_schema.columns
      where table_schema = current_schema() group by table_name order by table_name`,
  );
  // tokens: last_used_at is written by any request; the rest changes only with a write that was accepted
  const parts = columns.filter(({ table_name }) => table_name !== 'tokens').flatMap(({ table_name, has_updated }) => [
    `(select count(*) from "${table_name}")::text as "${table_name}"`,
    ...(has_updated ? [`(select max(updated_at) from "${table_name}")::text as "${table_name}.updated_at"`] : []),
  ]);
  digestQuery = `select ${parts.join(', ')}`;
  // the digest sees a write (or the check below would pass whatever happened)
  const before = await digest();
  const page = await fetch(`${app.baseUrl}/api/v1/writers/handbook/pages`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ page: { title: 'Digest check', content: '<p>x</p>' } }),
  });
  expect(page.status).toBe(200);
  expect(await digest()).not.toEqual(before);
  validateProblem = documentSchema('Problem');
}, 120_000);
afterAll(async () => app?.close());

describe('fuzzing every operation from the document', () => {
  it('answers no 5xx, refuses with problem details, and a refused write changes nothing', async () => {
    const found = documentOperations();
    const samples = new Map(SAMPLES.map(([id, sample]) => [id, sample]));
    const perOperation = Math.max(1, Math.ceil(RUNS / found.length));
    const deadline = Date.now() + SECONDS * 1000;
    const failures: string[] = [];
    let requests = 0;
    let serverErrors = 0;
    let acceptedWrites = 0;
    let current = await digest();
    // generated per operation up front (fast-check, seeded), then sent round-robin across the operations, so the time
    // budget cuts every operation's share alike
    const plans = found.map((operation, index) => {
      const sample = samples.get(operation.id)?.(state, 0);
      expect(sample, `${operation.id} has no sample request`).toBeDefined();
      return { operation, requests: fc.sample(arbitraryFor(operation, sample!), { numRuns: perOperation, seed: SEED + index }) };
    });
    for (let round = 0; round < perOperation && Date.now() < deadline; round += 1) {
      for (const { operation, requests: planned } of plans) {
        const request = planned[round];
        if (!request || Date.now() > deadline) continue;
        const body = request.method === 'GET' ? undefined : (request.body as BodyInit | undefined);
        const answer = await send(request, body);
        requests += 1;
        if (answer === 'timed out') {
          failures.push(`${operation.id} (${request.kind}) ${request.method} ${request.path.slice(0, 120)}: no complete answer within ${REQUEST_SECONDS} s`);
          continue;
        }
        const { response, text, live } = answer;
        const what = `${operation.id} (${request.kind}) ${request.method} ${request.path.slice(0, 120)} -> ${response.status}`;
        if (live) failures.push(`${what}: a live event stream (hung up on after ${LIVE_READ_MS} ms), not an answer that ends`);
        if (response.status >= 500) {
          serverErrors += 1;
          failures.push(`${what}: ${text.slice(0, 300)}`);
        }
        if (response.status >= 400) {
          const type = response.headers.get('content-type') ?? '';
          let problem: unknown;
          try {
            problem = JSON.parse(text);
          } catch {
            problem = undefined;
          }
          if (!type.startsWith('application/problem+json') || !validateProblem(problem) || (problem as { status: number }).status !== response.status) {
            failures.push(`${what}: not problem details (${type}): ${text.slice(0, 200)}`);
          }
        }
        if (request.method !== 'GET') {
          const after = await digest();
          if (response.status >= 400) {
            const changed = Object.keys(after).filter((key) => after[key] !== current[key]);
            if (changed.length > 0) failures.push(`${what}: refused, yet changed ${changed.join(', ')}`);
          } else {
            acceptedWrites += 1;
          }
          current = after;
        }
      }
    }
    console.log(
      `[fuzz] seed ${SEED}: ${requests} requests over ${found.length} operations, ${serverErrors} 5xx, ` +
        `${failures.length - serverErrors} other failures, ${acceptedWrites} writes accepted (not refused)`,
    );
    expect(failures).toEqual([]);
  }, (SECONDS + 120) * 1000);
});
