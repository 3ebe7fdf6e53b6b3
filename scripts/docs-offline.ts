// The last step of `make docs`: makes the built API reference load nothing from the internet, as a self-hosted
// install must. Redoc 3's standalone bundle (inlined by `build-docs --inlineBundle`) shows "API docs by" and an
// <img> of Redocly's logo from https://cdn.redoc.ly/redoc/logo-mini-full.svg (logo-mini.svg when the sidebar is
// folded) at the foot of the sidebar, and no option turns it off: Redoc 3 takes none for it (the options are read
// in the bundle's options function), and `removeAttribution` is a setting of Redocly's paid products, not of
// `build-docs`. So the two addresses are replaced here by the same word drawn in an inline SVG: the attribution and
// its link to redocly.com stay, and opening the page makes no request that leaves the server.
// test/browser/api-reference.test.ts opens the page in Chromium and fails on any request to another host.
// Usage: node scripts/docs-offline.ts [docs/index.html]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const file = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', 'docs', 'index.html'));

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
writeFileSync(file, html);
