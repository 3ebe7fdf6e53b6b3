// The code samples of the API reference, run as they are shown. scripts/lib/code-samples.ts makes them from the
// document (the `x-codeSamples` that `make docs` puts on every operation); here each one runs against a live server
// with its variables ($NOTES_TOKEN, $TEAM, $PAGE, ...) set to objects made for it, the one change to its text being
// the server's address in place of http://localhost:3000:
//   - curl samples run through bash and the real curl; the answer must have a success status the document lists for
//     the operation, and a JSON answer must match the document's schema for that status;
//   - TypeScript samples (importing the SDK package, here this checkout's SDK) are written to a scratch folder and run as modules,
//     as `node sample.ts` runs them, in one Node process (test/support/code-sample-runner.ts); they throw on an
//     error status. All of them are also type-checked with tsc.
// Each run gets objects of its own where the sample changes or deletes something (FIXTURES in
// test/support/code-sample-world.ts), so every run can pass
// on its own. An operation without a fixture fails, so a new operation cannot ship samples nobody ran. The few
// operations whose samples the document cannot make work yet are named with the reason (AWAITING_THE_DOCUMENT)
// and must still fail. Heavy (about a minute): left out of `make test-fast`.
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeSamples, SDK_PACKAGE, variablesOf, type CodeSample, type OpenApiDocument, type Operation } from '../../scripts/lib/code-samples.ts';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { FIXTURES, makeSampleWorld, type Variables, type World } from '../support/code-sample-world.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..', '..');
const document = loadOpenApiDocument() as unknown as OpenApiDocument;
const operations = codeSamples(document);
const SERVER = document.servers![0]!.url;
/**
 * Operations whose samples cannot work until the document says more than the samples can be made from: they run
 * like the others and must still fail (so an entry goes once the document is fixed).
 */
const AWAITING_THE_DOCUMENT: Record<string, string> = {};

let app: TestApp;
let world: World;
let scratch: string;
let runner: ChildProcess;
/** What the samples printed since the last one started, for the message of a failure. */
let output = '';
let runs = 0;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(document as object, 'doc');

// ---------------------------------------------------------------- running a sample

const environment = (variables: Variables): Record<string, string> => ({
  PATH: process.env.PATH!,
  HOME: scratch,
  NOTES_TOKEN: world.alice.token,
  ...Object.fromEntries(Object.entries(variables).filter(([, value]) => typeof value === 'string' || typeof value === 'number').map(([name, value]) => [name, String(value)])),
});

/** The sample's text as it will run: the server's address for the document's. */
const localized = (sample: CodeSample) => sample.source.replaceAll(SERVER, app.baseUrl);

/** The JSON pointer of the schema the document gives an answer of `status` in JSON, or undefined. */
function answerSchema(operation: Operation, method: string, template: string, status: number): string | undefined {
  const response = operation.responses?.[String(status)] as { $ref?: string; content?: Record<string, { schema?: unknown }> } | undefined;
  const escape = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');
  const pointer = response?.$ref ? response.$ref.slice(1) : `/paths/${escape(template)}/${method}/responses/${status}`;
  const resolved = pointer.split('/').slice(1).reduce<any>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
  return resolved?.content?.['application/json']?.schema ? `${pointer}/content/application~1json/schema` : undefined;
}

async function runCurl(sample: CodeSample, variables: Variables, operation: Operation, method: string, template: string) {
  const body = path.join(scratch, 'answer.body');
  const headers = path.join(scratch, 'answer.headers');
  rmSync(body, { force: true });
  // the sample runs as written; this function only adds where curl puts the answer and prints the status
  const script = `curl() { command curl --silent --show-error --dump-header ${JSON.stringify(headers)} --output ${JSON.stringify(body)} --write-out '%{http_code}' "$@"; }
${localized(sample)}\n`;
  const { stdout } = await run('bash', ['-c', script], { cwd: scratch, env: environment(variables) });
  const status = Number(stdout.trim());
  const text = readFileSync(body, 'utf8');
  const listed = Object.keys(operation.responses ?? {}).filter((code) => /^[23]/.test(code)).map(Number);
  expect(listed, `${status} is not a success the document lists: ${text.slice(0, 500)}`).toContain(status);
  const type = readFileSync(headers, 'utf8').match(/^content-type:\s*(.*)$/im)?.[1] ?? '';
  const pointer = answerSchema(operation, method, template, status);
  if (pointer && type.includes('json')) {
    const validate = ajv.getSchema(`doc#${pointer}`)!;
    expect(validate(JSON.parse(text)), JSON.stringify(validate.errors)).toBe(true);
  }
  return status;
}

/** Runs a TypeScript sample as its own module in the runner process (test/support/code-sample-runner.ts). */
async function runTypeScript(sample: CodeSample, variables: Variables, name: string) {
  const file = path.join(scratch, `${name}-${(runs += 1)}.ts`);
  writeFileSync(file, localized(sample));
  output = '';
  const answer = await new Promise<{ ok: boolean; error?: string }>((resolve, reject) => {
    runner.once('message', resolve);
    runner.once('exit', (code) => reject(new Error(`the sample runner exited (${code}): ${output}`)));
    runner.send({ file, env: environment(variables) });
  });
  runner.removeAllListeners('exit');
  if (!answer.ok) throw new Error(`${name}.ts failed: ${answer.error}\n${output}`);
}

// ---------------------------------------------------------------- the tests

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'notes-code-samples-'));
  // the TypeScript samples import the SDK package by its name: here it is this checkout's SDK, the modules `make sdk`
  // packs (sdk/src and generated/client), as they are (test/sdk/sdk-package.test.ts installs the packed tarball);
  // Node strips types outside node_modules only, so the package's entry re-exports the checkout's files
  const sdk = path.join(scratch, 'node_modules', ...SDK_PACKAGE.split('/'));
  mkdirSync(sdk, { recursive: true });
  writeFileSync(path.join(sdk, 'package.json'), JSON.stringify({ name: SDK_PACKAGE, type: 'module', exports: './index.js' }));
  writeFileSync(path.join(sdk, 'index.js'), `export * from ${JSON.stringify(pathToFileURL(path.join(root, 'sdk', 'src', 'index.ts')).href)};\n`);
  writeFileSync(path.join(scratch, 'package.json'), '{ "type": "module" }\n');
  runner = fork(path.join(root, 'test', 'support', 'code-sample-runner.ts'), [], { cwd: scratch, silent: true, execArgv: [] });
  for (const stream of [runner.stdout!, runner.stderr!]) stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  // the document's webhook URL (hooks.example.com) need not resolve here: the address guard is tested elsewhere
  // (webhooks.test.ts), and with no worker nothing is ever delivered to it
  app = await startTestApp({ WEBHOOK_WORKER: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' });
  world = await makeSampleWorld(app, scratch);
});
afterAll(async () => {
  runner?.kill();
  await app?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the code samples', () => {
  it('cover every operation, each with a fixture for its variables', () => {
    const ids = operations.map(({ operationId }) => operationId);
    expect(ids.length).toBeGreaterThan(80);
    expect(ids.filter((id) => !(id in FIXTURES)), 'operations without a fixture').toEqual([]);
    expect(Object.keys(FIXTURES).filter((id) => !ids.includes(id)), 'fixtures of no operation').toEqual([]);
    for (const { samples } of operations) expect(samples.map(({ label }) => label)).toContain('curl');
  });

  it('type-check, every TypeScript sample', async () => {
    const folder = path.join(scratch, 'typecheck');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'package.json'), '{ "type": "module" }\n');
    const compilerOptions = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')).compilerOptions;
    // the package's name leads to the SDK's source (the package's .d.ts are made from it)
    const paths = { [SDK_PACKAGE]: [path.join(root, 'sdk', 'src', 'index.ts')] };
    writeFileSync(path.join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, paths, typeRoots: [path.join(root, 'node_modules', '@types')] }, include: ['*.ts'] }));
    for (const { operationId, samples } of operations) {
      for (const sample of samples.filter(({ lang }) => lang === 'typescript')) writeFileSync(path.join(folder, `${operationId}.ts`), sample.source);
    }
    try {
      await run(path.join(root, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', folder], { cwd: folder });
    } catch (error) {
      throw new Error(`tsc: ${(error as { stdout?: string }).stdout}`);
    }
  }, 120_000);
});

describe.each(operations)('$operationId', ({ operationId, method, path: template, samples }) => {
  const operation = (document.paths[template] as Record<string, Operation>)[method]!;
  const test = operationId in AWAITING_THE_DOCUMENT ? it.fails : it;
  for (const sample of samples) {
    test(sample.label, async () => {
      const variables = await FIXTURES[operationId]!();
      try {
        const missing = variablesOf(sample.source).filter((name) => name !== 'NOTES_TOKEN' && !(name in variables));
        expect(missing, 'variables the fixture does not set').toEqual([]);
        if (sample.lang === 'bash') await runCurl(sample, variables, operation, method, template);
        else await runTypeScript(sample, variables, operationId);
        variables.check?.();
      } finally {
        await variables.after?.();
      }
    });
  }
});
