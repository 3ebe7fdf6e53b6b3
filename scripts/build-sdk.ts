// make sdk: the SDK as a package a developer installs (`npm install ./dist/notes-service-sdk-<version>.tgz`, or
// published to a registry from there). It is built from the same document as everything else: the generated client
// (generated/client, made by `make generate`) and the hand-written helpers beside it (sdk/src), compiled to ES
// modules with their .d.ts, with sdk/README.md and a package.json whose version is the document's `info.version`.
// The package depends on nothing (the generated client carries its own fetch client) and on none of the server's code.
// Prints the tarball's path on its last line.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const build = path.join(root, '.tmp', 'sdk-build');
const out = path.join(root, 'dist');
export const PACKAGE_NAME = '@notes-service/sdk';

const document = JSON.parse(readFileSync(path.join(root, 'generated', 'openapi.json'), 'utf8')) as { info: { version: string; title: string } };
rmSync(build, { recursive: true, force: true });
mkdirSync(build, { recursive: true });
execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', path.join(root, 'sdk', 'tsconfig.json')], { stdio: 'inherit' });
cpSync(path.join(root, 'sdk', 'README.md'), path.join(build, 'README.md'));
const entry = './dist/sdk/src/index';
writeFileSync(path.join(build, 'package.json'), `${JSON.stringify({
  name: PACKAGE_NAME,
  version: document.info.version,
  description: `TypeScript SDK of ${document.info.title}: every operation of the API, with pagination, retries, typed errors, the change stream, webhook verification and OAuth for command-line apps`,
  type: 'module',
  exports: { '.': { types: `${entry}.d.ts`, default: `${entry}.js` } },
  types: `${entry}.d.ts`,
  files: ['dist', 'README.md'],
  sideEffects: false,
  engines: { node: '>=20.3' },
  license: 'UNLICENSED',
}, null, 2)}\n`);
mkdirSync(out, { recursive: true });
const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: build, encoding: 'utf8' }).trim().split('\n').pop()!;
console.log(path.join(out, packed));
