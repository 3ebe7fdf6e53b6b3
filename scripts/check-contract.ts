// Keeping the contract (`make test` runs it as a static check, so CI does): fails when the OpenAPI document
// (generated/openapi.json, bundled from openapi/) breaks a client of the previous release, whose document is kept in
// openapi/released/openapi.json, unless info.version starts a new major version. What counts as breaking is in
// scripts/lib/contract-diff.ts.
//   node scripts/check-contract.ts            compare, print each breaking change, exit 1 if not allowed
//   node scripts/check-contract.ts --release  after a release: keep the current document as the released one
//   node scripts/check-contract.ts RELEASED CURRENT   compare two other files (test/unit/contract-diff.test.ts)
import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describeChange, judgeContract, type OpenApiDocument } from './lib/contract-diff.ts';

const root = path.join(import.meta.dirname, '..');
const files = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const released = files[0] ?? path.join(root, 'openapi', 'released', 'openapi.json');
const current = files[1] ?? path.join(root, 'generated', 'openapi.json');
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;

if (process.argv.includes('--release')) {
  copyFileSync(current, released);
  console.log(`kept the document of ${read(released).info.version} as the released one: ${path.relative(root, released)}`);
  process.exit(0);
}

const verdict = judgeContract(read(released), read(current));
for (const problem of verdict.problems) console.error(`contract: ${problem}`);
const SHOWN = 40;
for (const diff of verdict.breaking.slice(0, SHOWN)) console.error(`contract: breaking: ${describeChange(diff)}`);
if (verdict.breaking.length > SHOWN) console.error(`contract: ... and ${verdict.breaking.length - SHOWN} more`);
// a new value of an answer's enum is allowed: said once per enum (a shared schema is met under many operations)
const widenedEnums = new Map<string, string>();
for (const diff of verdict.widened) {
  const where = diff.path.slice(diff.path.lastIndexOf('properties') + 1, -2).join('.') || diff.path.slice(-4, -2).join('.');
  widenedEnums.set(`${where}=${JSON.stringify(diff.after)}`, `${where}: new value ${JSON.stringify(diff.after)}`);
}
for (const line of widenedEnums.values()) console.log(`contract: widened (not breaking; clients skip a value they do not know): ${line}`);
if (verdict.ok) {
  const note = verdict.breaking.length
    ? `${verdict.breaking.length} breaking changes, allowed by the new major version ${verdict.after}`
    : 'no breaking change';
  console.log(`contract: ${verdict.before} (released) -> ${verdict.after}: ${note}`);
} else {
  if (verdict.breaking.length)
    console.error(
      `contract: ${verdict.breaking.length} breaking changes against the released ${verdict.before}: ` +
        `keep the contract, or make info.version a new major version (${Number(verdict.before.split('.')[0]) + 1}.0.0)`,
    );
  process.exit(1);
}
