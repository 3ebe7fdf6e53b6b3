// The OpenAPI document against the code: generated/ is fresh, every operation of the document is in the operation
// table (so it is built) and nothing else is, and the API reference builds with every operation in it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/http/operations.ts';
import { checkOperationCoverage, loadOpenApiDocument, operationIds } from '../../src/http/openapi.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const bin = path.join(root, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
const run = (command: string, args: string[]) => execFileSync(path.join(bin, command), args, { cwd: root, env, stdio: 'pipe' }).toString();

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full).map((file) => path.join(name, file)) : [name];
  });
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'contract-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('generated files', () => {
  it('generated/openapi.json is the bundle of openapi/', () => {
    run('redocly', ['bundle', 'openapi/openapi.yaml', '--output', path.join(scratch, 'openapi.json')]);
    expect(JSON.parse(readFileSync(path.join(scratch, 'openapi.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(path.join(root, 'generated/openapi.json'), 'utf8')));
  });

  it('generated/operations.gen.ts is what scripts/generate-operations.ts makes of it', () => {
    const output = path.join(scratch, 'operations.gen.ts');
    execFileSync(path.join(bin, 'node'), ['scripts/generate-operations.ts'], { cwd: root, env: { ...env, OPERATIONS_OUTPUT: output }, stdio: 'pipe' });
    expect(readFileSync(output, 'utf8')).toBe(readFileSync(path.join(root, 'generated/operations.gen.ts'), 'utf8'));
  });

  it('generated/client is what @hey-api/openapi-ts makes of it', () => {
    const output = path.join(scratch, 'client');
    execFileSync(path.join(bin, 'openapi-ts'), ['--file', 'openapi-ts.config.ts', '--silent'], {
      cwd: root,
      env: { ...env, OPENAPI_TS_OUTPUT: output },
      stdio: 'pipe',
    });
    const committed = filesUnder(path.join(root, 'generated/client')).sort();
    expect(filesUnder(output).sort()).toEqual(committed);
    for (const file of committed) {
      expect(readFileSync(path.join(output, file), 'utf8'), file).toBe(readFileSync(path.join(root, 'generated/client', file), 'utf8'));
    }
  }, 120_000);
});

describe('operation coverage', () => {
  const document = loadOpenApiDocument();

  it('describes the 53 operations of the contract plus the 43 additions', () => {
    // additions: ..., the 6 webhook operations (issue 12), streamEvents (the change stream), oauthRegister (RFC 7591),
    // the MCP endpoint with its two protected resource metadata documents (issue 21), and exportNote, importNote and
    // getJob (issue 23), and listRequestComments, createRequestComment and deleteRequestComment (issue 24)
    expect(operationIds(document)).toHaveLength(96);
    expect(new Set(operationIds(document)).size).toBe(96);
  });

  it('has every operation of the document in the operation table', () => {
    expect(() => checkOperationCoverage(document, operations)).not.toThrow();
    expect(Object.keys(operations).sort()).toEqual([...operationIds(document)].sort());
  });

  it('refuses a table that misses an operation of the document', () => {
    const { getMe: _dropped, ...rest } = operations;
    expect(() => checkOperationCoverage(document, rest as typeof operations)).toThrow(/getMe is in the document but not in the operation table/);
  });
});

describe('API reference', () => {
  it('builds into one self-contained page with every operation', () => {
    const output = path.join(scratch, 'docs.html');
    run('redocly', ['build-docs', 'generated/openapi.json', '--output', output]);
    const html = readFileSync(output, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
    for (const id of operationIds(loadOpenApiDocument())) expect(html, id).toContain(`"operationId":"${id}"`);
  }, 120_000);
});
