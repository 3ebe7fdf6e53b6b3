// The operation table is typed from the document: these fixtures are type-checked with the project's own compiler
// options, and each drift must fail `tsc` with the error named here. The unchanged table must pass (so the test
// cannot pass merely because nothing compiles).
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..');
const fixturePath = path.join(root, 'test', 'contract', '__operation_table_fixture__.ts');

function typeErrors(source: string): string[] {
  const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (file) => (path.resolve(file) === fixturePath ? source : readFile(file));
  host.fileExists = ((exists) => (file: string) => path.resolve(file) === fixturePath || exists(file))(host.fileExists.bind(host));
  host.getSourceFile = (file, language, onError, create) =>
    path.resolve(file) === fixturePath ? ts.createSourceFile(file, source, language, true) : getSourceFile(file, language, onError, create);
  const program = ts.createProgram([fixturePath], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file && path.resolve(diagnostic.file.fileName) === fixturePath)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

const header = `
import { defineOperation, noContent, type OperationTable } from '../../src/http/handler.ts';
import { operations } from '../../src/http/operations.ts';
`;

describe('the operation table is typed by the document', () => {
  it('accepts the table as it is', () => {
    expect(typeErrors(`${header}\nexport const table: OperationTable = { ...operations };\n`)).toEqual([]);
  }, 60_000);

  it.each([
    [
      'an operation missing from the table',
      'const { getMe: _gone, ...rest } = operations;\nexport const table: OperationTable = rest;',
      /Property 'getMe' is missing/,
    ],
    [
      'a handler bound to another operation',
      'export const table: OperationTable = { ...operations, getPage: operations.getNote };',
      /is not assignable to type/,
    ],
    [
      'a handler whose answer is not the operation\'s response',
      "export const table: OperationTable = { ...operations, getMe: defineOperation('getMe', { scope: 'caller' }, async () => ({ id: 'not a number' })) };",
      /is not assignable/,
    ],
    [
      'a delete answering a body instead of no content',
      "export const table: OperationTable = { ...operations, deletePage: defineOperation('deletePage', { scope: 'page' }, async () => ({ deleted: true })) };",
      /is not assignable/,
    ],
    [
      'a handler reading a header its operation does not declare',
      "export const table: OperationTable = { ...operations, getMe: defineOperation('getMe', { scope: 'caller' }, async ({ headers }, { caller }) => { void headers['If-Match']; void caller; return noContent; }) };",
      /If-Match|is not assignable/,
    ],
  ])('refuses %s', (_what, body, error) => {
    const errors = typeErrors(`${header}\n${body}\n`);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(error);
  }, 60_000);
});
