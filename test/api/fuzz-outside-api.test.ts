// Property-based fuzzing (fast-check) of every route the process serves outside /api/v1: the OAuth endpoints and
// pages, the browser views, the system routes, the avatars, /metrics and the well-known document. The routes are
// listed from the app's own routers (test/support/plain-routes.ts), so a route without a sample request fails here.
// For each, requests built from its sample with one part made hostile: a query parameter, a path segment, a form
// field or a JSON field with NUL, a lone surrogate, broken percent-encoding, a huge value, an array or an object
// where text is expected, nesting thousands deep; HTTP Basic credentials of the same kinds; a body that lies about
// its encoding, has more fields than allowed or is past the body limit; a body past 64 KiB but within the limit
// (which must be read); a method the route lacks. Every answer must be below 500 and in the route's format (an HTML
// page, RFC 6749 JSON valid against OAuthError, or problem details valid against Problem), a wrong method 405 with
// the route's `Allow`, and a refused request must leave every table as it was (the counters of sign-in attempts
// excepted, which a refused sign-in is meant to count, unless the input guard refused it).
// FUZZ_OUTSIDE_RUNS requests in all (default 800), at most FUZZ_OUTSIDE_SECONDS (default 30); FUZZ_SEED replays a run.
import fc from 'fast-check';
import { DEEP, deepText, hostileEncodings, hostileStrings, wrongTypes } from '../support/hostile-values.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { PLAIN_ROUTES, seedPlainWorld, servedRoutesOutsideApi, type PlainRequest, type PlainRouteSpec, type PlainWorld, type ServedRoute } from '../support/plain-routes.ts';
import { documentSchema } from '../support/document-schemas.ts';

const RUNS = Number(process.env.FUZZ_OUTSIDE_RUNS ?? 800);
const SECONDS = Number(process.env.FUZZ_OUTSIDE_SECONDS ?? 30);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
// small, so a body past it costs little to send; past the 64 KiB the OAuth endpoints took before
const BODY_LIMIT = 256 * 1024;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND'];

type Hostile = { method: string; path: string; headers: Record<string, string>; body?: string | Uint8Array; kind: string; html: boolean };

let app: TestApp;
let world: PlainWorld;
let served: ServedRoute[];
let digestQuery: string;
let validateProblem: (value: unknown) => boolean;
let validateOAuthError: (value: unknown) => boolean;

const huge = fc.constantFrom(300, 70_000, 300_000).map((length) => 'x'.repeat(length));
const hostileString = hostileStrings(huge);
const wrongType = wrongTypes(null);
/** Percent-encoded text no decoder should take whole: NUL, bytes that are not UTF-8, an encoded surrogate, bad escapes. */
const hostileEncoded = hostileEncodings(hostileString, ['%00', 'a%00b', '%ff%fe', '%ED%A0%80', '%zz', '%', '%C0%AF', '..%2F..%2F', '%2e%2e', '1e309', '0x10', '99999999999', '-1', `${'%41'.repeat(5000)}`]);
/** HTTP Basic credentials as a client might send them: raw, percent-encoded (RFC 6749 section 2.3.1), or huge. */
const hostileCredential = fc.oneof(
  fc.constantFrom('a\u0000b', 'a%00b', '%ED%A0%80', '%zz', '\ud800', 'x'.repeat(70_000)),
  fc.string({ maxLength: 20 }).map((text) => `${text}\u0000`),
);

const formText = (form: Record<string, string>) => new URLSearchParams(Object.entries(form)).toString();
const withQuery = (path: string, query: Record<string, string> | undefined) => (query && Object.keys(query).length > 0 ? `${path}?${formText(query)}` : path);

/** The methods a route takes, as its `Allow` names them. */
function allowed(route: ServedRoute): string[] {
  return route.methods.includes('GET') ? [...route.methods, 'HEAD'] : route.methods;
}

/** The hostile requests of one route. */
function arbitraryFor(route: ServedRoute, spec: PlainRouteSpec): fc.Arbitrary<Hostile> {
  const kinds: fc.Arbitrary<Omit<Hostile, 'html'>>[] = [];
  for (const method of route.methods as ('GET' | 'POST')[]) {
    const sample: PlainRequest = spec[method]!(world);
    const headers = sample.headers ?? {};
    const base = { method, path: withQuery(sample.path, sample.query), headers };
    const form = sample.form;
    const json = sample.json;
    const body = json
      ? { body: JSON.stringify(json), headers: { ...headers, 'Content-Type': 'application/json' } }
      : form ? { body: formText(form), headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' } } : {};
    kinds.push(fc.constant({ ...base, ...body, kind: 'sample' }));
    kinds.push(
      fc.tuple(fc.constantFrom(...Object.keys(sample.query ?? {}), 'junk', 'access_token'), hostileEncoded, fc.constantFrom('', '[]', '[a][b]')).map(([name, value, suffix]) => {
        const rest = Object.fromEntries(Object.entries(sample.query ?? {}).filter(([other]) => other !== name));
        const query = [formText(rest), `${name}${suffix}=${value}`].filter(Boolean).join('&');
        return { ...base, ...body, path: `${sample.path}?${query}`, kind: 'query' };
      }),
    );
    const segments = route.path.split('/').map((segment, index) => (segment.startsWith(':') ? index : -1)).filter((index) => index >= 0);
    if (segments.length > 0) {
      kinds.push(
        fc.tuple(fc.constantFrom(...segments), hostileEncoded).map(([index, value]) => {
          const parts = sample.path.split('/');
          parts[index] = value;
          return { ...base, ...body, path: withQuery(parts.join('/'), sample.query), kind: 'path segment' };
        }),
      );
    }
    if (form) {
      const formHeaders = { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' };
      kinds.push(
        fc.tuple(fc.constantFrom(...Object.keys(form)), hostileEncoded, fc.constantFrom('', '[x]', '[]', `${'[a]'.repeat(40)}`)).map(([key, value, suffix]) => {
          const rest = Object.fromEntries(Object.entries(form).filter(([other]) => other !== key));
          return { ...base, headers: formHeaders, body: [formText(rest), `${encodeURIComponent(key)}${suffix}=${value}`].filter(Boolean).join('&'), kind: 'form field' };
        }),
        fc.constantFrom('invalid utf-8', 'text/plain', 'gzip that is not', 'charset', 'past the limit', 'too many fields', 'past 64 KiB').map((how) => {
          const sent: Record<string, string> = { ...formHeaders };
          let text: string | Uint8Array = formText(form);
          if (how === 'invalid utf-8') text = Buffer.concat([Buffer.from(`${formText(form)}&x=`), Buffer.from([0xff, 0xfe, 0xc0, 0x80])]);
          if (how === 'text/plain') sent['Content-Type'] = 'text/plain';
          if (how === 'gzip that is not') sent['Content-Encoding'] = 'gzip';
          if (how === 'charset') sent['Content-Type'] = 'application/x-www-form-urlencoded; charset=klingon';
          if (how === 'past the limit') text = `${formText(form)}&padding=${'x'.repeat(BODY_LIMIT)}`;
          if (how === 'too many fields') text = `${formText(form)}&${Array.from({ length: 60 }, (_, index) => `k${index}=1`).join('&')}`;
          if (how === 'past 64 KiB') text = `${formText(form)}&padding=${'x'.repeat(100 * 1024)}`;
          return { ...base, headers: sent, body: text, kind: `body ${how}` };
        }),
      );
      if (spec.basic) {
        kinds.push(
          fc.tuple(hostileCredential, fc.boolean()).map(([credential, asId]) => {
            const pair = asId ? `${credential}:${world.firstParty.secret}` : `${world.firstParty.clientId}:${credential}`;
            const rest = Object.fromEntries(Object.entries(form).filter(([key]) => key !== 'client_id' && key !== 'client_secret'));
            return {
              ...base, headers: { ...formHeaders, Authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` },
              body: formText(rest), kind: 'basic credentials',
            };
          }),
        );
      }
    }
    // a JSON body: the sample's (a route that takes JSON only), or the form sent as JSON (a route that takes both)
    const object = json ?? (spec.json ? form : undefined);
    if (object) {
      const jsonHeaders = { ...headers, 'Content-Type': 'application/json' };
      kinds.push(
        fc.tuple(fc.constantFrom(...Object.keys(object)), fc.oneof(hostileString, wrongType), deepText).map(([key, value, deep]) => ({
          ...base, headers: jsonHeaders, body: JSON.stringify({ ...object, [key]: value }).replace(DEEP, deep), kind: 'json field',
        })),
        fc.constantFrom('truncated', 'not an object', 'lone surrogate key').map((how) => {
          const text = JSON.stringify(object);
          const sent = how === 'truncated' ? text.slice(0, text.length - 5) : how === 'not an object' ? '"text"' : `${text.slice(0, -1)},"\\ud800":"x"}`;
          return { ...base, headers: jsonHeaders, body: sent, kind: `json ${how}` };
        }),
      );
    }
    if (json) {
      // what the form's body kinds do, for a JSON body (no field count: JSON has no parameter limit)
      const padded = (bytes: number) => `${JSON.stringify(json).slice(0, -1)},"padding":"${'x'.repeat(bytes)}"}`;
      kinds.push(
        fc.constantFrom('invalid utf-8', 'text/plain', 'gzip that is not', 'charset', 'past the limit', 'past 64 KiB').map((how) => {
          const sent: Record<string, string> = { ...headers, 'Content-Type': 'application/json' };
          let text: string | Uint8Array = JSON.stringify(json);
          if (how === 'invalid utf-8') text = Buffer.concat([Buffer.from(`${text.slice(0, -1)},"x":"`), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from('"}')]);
          if (how === 'text/plain') sent['Content-Type'] = 'text/plain';
          if (how === 'gzip that is not') sent['Content-Encoding'] = 'gzip';
          if (how === 'charset') sent['Content-Type'] = 'application/json; charset=klingon';
          if (how === 'past the limit') text = padded(BODY_LIMIT);
          if (how === 'past 64 KiB') text = padded(100 * 1024);
          return { ...base, headers: sent, body: text, kind: `body ${how}` };
        }),
      );
    }
  }
  const wrong = METHODS.filter((method) => !allowed(route).includes(method));
  const anySample = spec[route.methods[0] as 'GET' | 'POST']!(world);
  kinds.push(fc.constantFrom(...wrong).map((method) => ({ method, path: withQuery(anySample.path, anySample.query), headers: anySample.headers ?? {}, kind: 'wrong method' })));
  return fc.tuple(fc.oneof(...kinds), fc.boolean()).map(([request, html]) => ({
    ...request, html, headers: html ? { ...request.headers, Accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } : request.headers,
  }));
}

async function digest(): Promise<Record<string, unknown>> {
  const rows = await app.em().execute<Record<string, unknown>[]>(digestQuery);
  return rows[0]!;
}

/** What is wrong with the format of a refusal, or undefined. */
function formatProblem(spec: PlainRouteSpec, request: Hostile, status: number, type: string, text: string): string | undefined {
  const problem = () => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!type.startsWith('application/problem+json') || !validateProblem(body) || (body as { status: number }).status !== status) return `not problem details (${type})`;
    return undefined;
  };
  if (request.method === 'HEAD') {
    // no body to read: the type says the format
    return type === '' ? 'no Content-Type' : undefined;
  }
  // node refuses a request line or headers past 16 KiB before any route (client-errors.ts): problem details
  if (status === 431) return problem();
  // a path segment that makes the path another route's (`/avatars/notes/123` is a page view's) or no route's (the
  // catch-all 404) is refused in that route's format: a view's page to a browser, or problem details
  if (status === 404 && request.kind === 'path segment') {
    if (type.startsWith('application/problem+json')) return problem();
    if (request.html && type.startsWith('text/html') && text.startsWith('<!doctype html>')) return undefined;
  }
  const format = spec.format === 'view' ? (request.html ? 'html' : 'problem') : spec.format;
  if (format === 'html') return type.startsWith('text/html') && text.startsWith('<!doctype html>') ? undefined : `not an HTML page (${type})`;
  if (format === 'oauth') {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return type.startsWith('application/json') && validateOAuthError(body) ? undefined : `not an RFC 6749 error (${type})`;
  }
  if (format === 'jsonrpc') {
    let body: { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown }; id?: unknown } | undefined;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = undefined;
    }
    const valid = body?.jsonrpc === '2.0' && typeof body.error?.code === 'number' && typeof body.error.message === 'string' && body.error.message !== '';
    return type.startsWith('application/json') && valid ? undefined : `not a JSON-RPC error (${type})`;
  }
  return problem();
}

beforeAll(async () => {
  app = await startTestApp({
    METRICS_TOKEN: 'fuzz-metrics-token-0123456789',
    LIMIT_REQUEST_BODY_BYTES: String(BODY_LIMIT),
    SIGN_IN_ATTEMPTS_PER_ACCOUNT: '1000000',
    SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000000',
    OAUTH_REGISTRATIONS_PER_HOUR: '1000000',
  });
  world = await seedPlainWorld(app);
  served = servedRoutesOutsideApi(app);
  const columns = await app.em().execute<{ table_name: string; has_updated: boolean }[]>(
    `select table_name, bool_or(column_name = 'updated_at') as has_updated from information_schema.columns
      where table_schema = current_schema() group by table_name order by table_name`,
  );
  // tokens: last_used_at is written by any request with a token (the views' bearer); rate_limits: below
  const parts = columns.filter(({ table_name }) => table_name !== 'tokens' && table_name !== 'rate_limits').flatMap(({ table_name, has_updated }) => [
    `(select count(*) from "${table_name}")::text as "${table_name}"`,
    ...(has_updated ? [`(select max(updated_at) from "${table_name}")::text as "${table_name}.updated_at"`] : []),
  ]);
  // a sign-in attempt is counted, also one that fails: only what the input guard refused must count nothing
  parts.push(`(select coalesce(sum(used), 0) from rate_limits where key not like 'token:%')::text as "sign-in attempts"`);
  digestQuery = `select ${parts.join(', ')}`;
  validateProblem = documentSchema('Problem');
  validateOAuthError = documentSchema('OAuthError');
}, 120_000);
afterAll(async () => app?.close());

describe('the routes outside /api/v1', () => {
  it('each has a sample request for every method it takes, and every sample names a route the app serves', () => {
    expect(served.length).toBeGreaterThan(20);
    const missing = served.flatMap((route) => {
      const spec = PLAIN_ROUTES[route.path];
      if (!spec) return [`${route.path}: no entry in test/support/plain-routes.ts`];
      return route.methods.filter((method) => !spec[method as 'GET' | 'POST']).map((method) => `${method} ${route.path}: no sample`);
    });
    expect(missing).toEqual([]);
    expect(Object.keys(PLAIN_ROUTES).filter((path) => !served.some((route) => route.path === path))).toEqual([]);
  });

  it('fuzzed: no 5xx, refusals in the route’s format, 405 with Allow, and a refused request writes nothing', async () => {
    const perRoute = Math.max(1, Math.ceil(RUNS / served.length));
    const deadline = Date.now() + SECONDS * 1000;
    const failures: string[] = [];
    const counts = { requests: 0, serverErrors: 0, refused: 0, accepted: 0 };
    let current = await digest();
    // generated per route up front (seeded), then sent round-robin, so the time budget cuts every route's share alike
    const plans = served.map((route, index) => ({
      route,
      spec: PLAIN_ROUTES[route.path]!,
      requests: fc.sample(arbitraryFor(route, PLAIN_ROUTES[route.path]!), { numRuns: perRoute, seed: SEED + index }),
    }));
    for (let round = 0; round < perRoute && Date.now() < deadline; round += 1) {
      for (const { route, spec, requests } of plans) {
        const request = requests[round];
        if (!request || Date.now() > deadline) continue;
        const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : (request.body as BodyInit | undefined);
        const response = await fetch(app.baseUrl + request.path, { method: request.method, headers: request.headers, body, redirect: 'manual' });
        const text = await response.text();
        counts.requests += 1;
        const type = response.headers.get('content-type') ?? '';
        const what = `${route.path} (${request.kind}${request.html ? ', html' : ''}) ${request.method} ${request.path.slice(0, 120)} -> ${response.status}`;
        if (response.status >= 500) {
          counts.serverErrors += 1;
          failures.push(`${what}: ${text.slice(0, 300)}`);
        }
        if (response.status >= 400) {
          counts.refused += 1;
          const wrongFormat = formatProblem(spec, request, response.status, type, text);
          if (wrongFormat) failures.push(`${what}: ${wrongFormat}: ${text.slice(0, 200)}`);
        }
        if (request.kind === 'wrong method') {
          const allow = (response.headers.get('allow') ?? '').split(/,\s*/).sort();
          if (response.status !== 405 || allow.join() !== allowed(route).sort().join()) failures.push(`${what}: not 405 with Allow ${allowed(route).join(', ')} (Allow: ${response.headers.get('allow')})`);
        }
        if (request.kind === 'body past 64 KiB' && response.status === 413) failures.push(`${what}: a body within LIMIT_REQUEST_BODY_BYTES refused`);
        if (request.kind === 'body past the limit' && response.status !== 413) failures.push(`${what}: a body past LIMIT_REQUEST_BODY_BYTES not refused with 413`);
        const after = await digest();
        const changed = Object.keys(after).filter((key) => after[key] !== current[key]);
        if (response.status >= 400) {
          // what the guard refused (NUL, integers, methods, limits) counts not even a sign-in attempt
          const guarded = [405, 413, 431].includes(response.status) || /must not contain NUL|must be decimal digits/.test(text);
          const wrote = changed.filter((key) => guarded || key !== 'sign-in attempts');
          if (wrote.length > 0) failures.push(`${what}: refused, yet changed ${wrote.join(', ')}`);
        } else {
          counts.accepted += 1;
        }
        current = after;
      }
    }
    console.log(
      `[fuzz outside /api/v1] seed ${SEED}: ${counts.requests} requests over ${served.length} routes, ${counts.serverErrors} 5xx, ` +
        `${failures.length - counts.serverErrors} other failures, ${counts.refused} refused, ${counts.accepted} answered`,
    );
    expect(failures).toEqual([]);
  }, (SECONDS + 120) * 1000);
});
