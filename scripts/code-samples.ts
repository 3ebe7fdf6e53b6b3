// Writes the OpenAPI document the API reference is built from: generated/openapi.json with runnable examples
// (`x-codeSamples`: curl, curl with a form body, the TypeScript SDK) on every operation, made by the rules of
// scripts/lib/code-samples.ts. Run by `npm run docs` (`make docs`); the output is a build product like
// docs/index.html, not committed. Usage: node scripts/code-samples.ts [output, default docs/openapi.docs.json]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { withCodeSamples, type OpenApiDocument } from './lib/code-samples.ts';

const root = path.resolve(import.meta.dirname, '..');
const output = path.resolve(process.argv[2] ?? path.join(root, 'docs', 'openapi.docs.json'));
const document = JSON.parse(readFileSync(path.join(root, 'generated', 'openapi.json'), 'utf8')) as OpenApiDocument;
writeFileSync(output, `${JSON.stringify(withCodeSamples(document), null, 2)}\n`);
