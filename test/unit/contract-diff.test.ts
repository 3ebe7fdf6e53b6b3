// Keeping the contract (issue 22): which changes to the document break a client of the previous release, and the
// check CI runs (scripts/check-contract.ts), which fails on them unless info.version starts a new major version.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeContract, type OpenApiDocument } from '../../scripts/lib/contract-diff.ts';

const problem = { $ref: '#/components/schemas/Problem' };
// a small document shaped like ours: a list and a create sharing schemas through $ref, a problem answer with codes
const released = (): OpenApiDocument => ({
  openapi: '3.1.0',
  info: { title: 'Notes API', version: '1.4.2' },
  paths: {
    '/api/v1/notes': {
      get: {
        operationId: 'listNotes',
        parameters: [{ name: 'q', in: 'query', schema: { type: 'string', maxLength: 100 } }],
        responses: {
          200: { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Note' } } } } },
          400: { description: 'bad', content: { 'application/problem+json': { schema: problem } } },
        },
      },
      post: {
        operationId: 'createNote',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/NewNote' } } } },
        responses: {
          201: { description: 'made', content: { 'application/json': { schema: { $ref: '#/components/schemas/Note' } } } },
          422: { description: 'refused', content: { 'application/problem+json': { schema: problem } } },
        },
      },
    },
    '/api/v1/notes/{id}': {
      delete: {
        operationId: 'deleteNote',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { 204: { description: 'gone' } },
      },
    },
  },
  components: {
    schemas: {
      Note: {
        type: 'object',
        required: ['id', 'name'],
        properties: { id: { type: 'integer' }, name: { type: 'string' }, summary: { type: 'string' }, kind: { type: 'string', enum: ['text', 'list'] } },
      },
      NewNote: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', maxLength: 100 },
          visibility: { type: 'string', enum: ['public', 'private'] },
          size: { type: ['integer', 'null'] },
        },
      },
      Problem: {
        type: 'object',
        required: ['status', 'code'],
        properties: { status: { type: 'integer' }, code: { type: 'string', enum: ['invalid', 'name_taken'] } },
      },
    },
  },
});

type Doc = ReturnType<typeof released> & Record<string, any>;
const changed = (change: (doc: Doc) => void, version?: string) => {
  const doc = released() as Doc;
  change(doc);
  if (version) doc.info.version = version;
  return doc;
};

const BREAKING: Record<string, (doc: Doc) => void> = {
  'a removed operation': (d) => delete d.paths['/api/v1/notes/{id}'],
  'a removed method': (d) => delete d.paths['/api/v1/notes'].post,
  'a removed required field of an answer': (d) => {
    delete d.components.schemas.Note.properties.name;
    d.components.schemas.Note.required = ['id'];
  },
  'a removed optional field of an answer': (d) => delete d.components.schemas.Note.properties.summary,
  'a removed enum value of an input': (d) => (d.components.schemas.NewNote.properties.visibility.enum = ['public']),
  'a new required body field': (d) => d.components.schemas.NewNote.required.push('visibility'),
  'an optional parameter made required': (d) => (d.paths['/api/v1/notes'].get.parameters[0].required = true),
  'a new required parameter': (d) =>
    d.paths['/api/v1/notes'].get.parameters.push({ name: 'team', in: 'query', required: true, schema: { type: 'string' } }),
  'a shorter maxLength of an input': (d) => (d.components.schemas.NewNote.properties.name.maxLength = 50),
  'an input type narrowed from string to integer': (d) => (d.components.schemas.NewNote.properties.name.type = 'integer'),
  'null no longer accepted': (d) => (d.components.schemas.NewNote.properties.size.type = 'integer'),
  'an answer field of another type': (d) => (d.components.schemas.Note.properties.id.type = 'string'),
};

const COMPATIBLE: Record<string, (doc: Doc) => void> = {
  'a new operation': (d) => (d.paths['/api/v1/teams'] = { get: { operationId: 'listTeams', responses: { 200: { description: 'ok' } } } }),
  'a new optional parameter': (d) =>
    d.paths['/api/v1/notes'].get.parameters.push({ name: 'sort', in: 'query', schema: { type: 'string' } }),
  'a new field in an answer': (d) => (d.components.schemas.Note.properties.slug = { type: 'string' }),
  'a new optional body field': (d) => (d.components.schemas.NewNote.properties.color = { type: 'string' }),
  'a new enum value of an input': (d) => d.components.schemas.NewNote.properties.visibility.enum.push('team'),
  'a longer maxLength of an input': (d) => (d.components.schemas.NewNote.properties.name.maxLength = 200),
  'a new problem code': (d) => d.components.schemas.Problem.properties.code.enum.push('page_cycle'),
  'new words': (d) => (d.paths['/api/v1/notes'].get.description = 'Lists the notes.'),
};

describe('judgeContract', () => {
  for (const [name, change] of Object.entries(BREAKING)) {
    it(`calls ${name} breaking, and allows it in a new major version`, () => {
      const verdict = judgeContract(released(), changed(change));
      expect(verdict.breaking.length).toBeGreaterThan(0);
      expect(verdict.ok).toBe(false);
      const major = judgeContract(released(), changed(change, '2.0.0'));
      expect(major).toMatchObject({ ok: true, newMajor: true });
      expect(major.breaking.length).toBe(verdict.breaking.length);
      // a minor or patch version does not allow it
      expect(judgeContract(released(), changed(change, '1.5.0')).ok).toBe(false);
    });
  }

  for (const [name, change] of Object.entries(COMPATIBLE)) {
    it(`lets ${name} through in the same major version`, () => {
      expect(judgeContract(released(), changed(change, '1.5.0'))).toMatchObject({ ok: true, breaking: [], problems: [] });
    });
  }

  it('lets a new enum value of an answer through, and reports it as widened (a new problem code is not reported)', () => {
    const verdict = judgeContract(released(), changed((d) => d.components.schemas.Note.properties.kind.enum.push('table'), '1.5.0'));
    expect(verdict).toMatchObject({ ok: true, breaking: [] });
    expect(verdict.widened.length).toBeGreaterThan(0);
    expect(verdict.widened.every((diff) => diff.action === 'add' && diff.after === 'table')).toBe(true);
    expect(judgeContract(released(), changed((d) => d.components.schemas.Problem.properties.code.enum.push('page_cycle'), '1.5.0')).widened).toEqual([]);
    // an input's enum losing a value is still breaking (BREAKING above); a new one of an input is not even reported
    expect(judgeContract(released(), changed((d) => d.components.schemas.NewNote.properties.visibility.enum.push('team'), '1.5.0')).widened).toEqual([]);
  });

  it('fails a version that goes back or is not MAJOR.MINOR.PATCH', () => {
    expect(judgeContract(released(), changed(() => {}, '1.4.1'))).toMatchObject({ ok: false, problems: [expect.stringMatching(/goes back/)] });
    expect(judgeContract(released(), changed(() => {}, 'v2'))).toMatchObject({ ok: false, problems: [expect.stringMatching(/MAJOR/)] });
  });
});

describe('scripts/check-contract.ts', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'contract-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const root = path.join(import.meta.dirname, '..', '..');
  const run = (...files: string[]) =>
    promisify(execFile)(process.execPath, [path.join(root, 'scripts', 'check-contract.ts'), ...files], { cwd: root }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it('passes the document against the kept release, and fails it with an operation removed', async () => {
    const ok = await run();
    expect(ok).toMatchObject({ code: 0, stdout: expect.stringMatching(/no breaking change|allowed by the new major/) });

    const current = JSON.parse(readFileSync(path.join(root, 'generated', 'openapi.json'), 'utf8'));
    const kept = path.join(root, 'openapi', 'released', 'openapi.json');
    delete current.paths['/api/v1/{team}/{note}/contributors'];
    writeFileSync(path.join(dir, 'current.json'), JSON.stringify(current));
    const failed = await run(kept, path.join(dir, 'current.json'));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/breaking: remove paths\/~1api~1v1~1\{team\}~1\{note\}~1contributors/);
    expect(failed.stderr).toMatch(/make info\.version a new major version \(\d+\.0\.0\)/);
  }, 60_000);
});
