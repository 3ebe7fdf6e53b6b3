// npm run editor: the browser's live editor (src/modules/web/editor/editor.client.ts, with TipTap, Yjs and the
// Hocuspocus provider) bundled by esbuild into one file, dist/web/editor.js, which the server sends as /web/editor.js
// (web.routes.ts). Everything it runs is in that file: no import is left for the browser to fetch, from this site or
// any other (the views' Content-Security-Policy would refuse it anyway). Built, never committed (dist/ is ignored).
//
// `--if-stale` (make run, make test, the live editor's browser test): nothing is built when the bundle is newer than
// every file it was made from, as esbuild recorded them last time (dist/web/editor.meta.json: the client's sources,
// the shared schema and every package file bundled), and this script. Prints one line: the bundle's size, raw and
// gzipped.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const entry = path.join(root, 'src', 'modules', 'web', 'editor', 'editor.client.ts');
const outfile = path.join(root, 'dist', 'web', 'editor.js');
const metafile = path.join(root, 'dist', 'web', 'editor.meta.json');
const shown = path.relative(root, outfile);

/** Whether the bundle is older than anything it was made from (or than this script), or missing. */
function stale(): boolean {
  if (!existsSync(outfile) || !existsSync(metafile)) return true;
  const built = statSync(outfile).mtimeMs;
  const inputs = Object.keys((JSON.parse(readFileSync(metafile, 'utf8')) as { inputs: Record<string, unknown> }).inputs);
  return [import.meta.filename, ...inputs.map((input) => path.resolve(root, input))].some((file) => !existsSync(file) || statSync(file).mtimeMs > built);
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const size = () => {
  const bytes = readFileSync(outfile);
  return `${kib(bytes.byteLength)} raw, ${kib(gzipSync(bytes, { level: 9 }).byteLength)} gzip`;
};

if (process.argv.includes('--if-stale') && !stale()) {
  console.log(`${shown} is up to date: ${size()}`);
} else {
  const started = performance.now();
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    metafile: true,
    legalComments: 'eof',
    // the packages' development-only checks and warnings are left out
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  writeFileSync(metafile, JSON.stringify(result.metafile));
  console.log(`${shown}: ${size()} (built in ${Math.round(performance.now() - started)} ms)`);
}
