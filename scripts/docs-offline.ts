// The last step of `make docs`: makes the built API reference load nothing from the internet, as a self-hosted
// install must. Redoc 3's standalone bundle (inlined by `build-docs --inlineBundle`) shows "API docs by" and an
// <img> of Redocly's logo from https://cdn.redoc.ly/redoc/logo-mini-full.svg (logo-mini.svg when the sidebar is
// folded) at the foot of the sidebar, and no option turns it off: Redoc 3 takes none for it (the options are read
// in the bundle's options function), and `removeAttribution` is a setting of Redocly's paid products, not of
// `build-docs`. So the two addresses are replaced here by the same word drawn in an inline SVG: the attribution and
// its link to redocly.com stay, and opening the page makes no request that leaves the server.
// test/browser/api-reference.test.ts opens the page in Chromium and fails on any request to another host.
//
// Then the bundle leaves the page: `--inlineBundle` writes Redoc's 2.3 MB standalone bundle into the page's module
// script, where Chromium must compile it on the main thread before anything runs. As a file of its own
// (docs/redoc.standalone.js, served at /docs/redoc.standalone.js?v=<its hash> by system.routes.ts, cached for good
// since the address changes with the bytes) it is fetched while the page is parsed (modulepreload) and compiled off
// the main thread as it streams in; the page keeps the definition and the call to `hydrate`, imported from it.
// docs/README.md ("How fast it renders") has the figures.
// Usage: node scripts/docs-offline.ts [docs/index.html]
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const file = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', 'docs', 'index.html'));
/** Where the bundle goes: beside the page. */
export const BUNDLE_NAME = 'redoc.standalone.js';

const svg = (text: string, width: number) =>
  `data:image/svg+xml,${encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="16" viewBox="0 0 ${width} 16">` +
      `<text x="0" y="12.5" font-family="sans-serif" font-size="12" font-weight="600" fill="#0044d4">${text}</text></svg>`,
  )}`;

const LOGOS: Record<string, string> = {
  'https://cdn.redoc.ly/redoc/logo-mini-full.svg': svg('Redocly', 56),
  'https://cdn.redoc.ly/redoc/logo-mini.svg': svg('R', 10),
};

let html = readFileSync(file, 'utf8');
for (const [remote, local] of Object.entries(LOGOS)) html = html.replaceAll(remote, local);

// the page's module script is the bundle, ending with its export statement, then the definition and the call
const OPEN = '<script type="module">';
const EXPORTS = 'export{RedocStandalone,hydrate,init};';
const start = html.indexOf(OPEN);
const end = start < 0 ? -1 : html.indexOf(EXPORTS, start);
if (start < 0 || end < 0 || html.indexOf(OPEN, start + OPEN.length) >= 0) {
  throw new Error(`${file}: not the page build-docs --inlineBundle writes (one module script ending the bundle with ${EXPORTS})`);
}
const bundle = html.slice(start + OPEN.length, end + EXPORTS.length);
const address = `/docs/${BUNDLE_NAME}?v=${createHash('sha256').update(bundle).digest('hex').slice(0, 16)}`;
writeFileSync(path.join(path.dirname(file), BUNDLE_NAME), bundle);
html = `${html.slice(0, start)}${OPEN}\nimport { hydrate } from '${address}';${html.slice(end + EXPORTS.length)}`
  .replace('</head>', `  <link rel="modulepreload" href="${address}">\n</head>`);
writeFileSync(file, html);
