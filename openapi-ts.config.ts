// @hey-api/openapi-ts: the client SDK and the types in generated/client, from the bundled document.
import { defineConfig } from '@hey-api/openapi-ts';

export default defineConfig({
  input: 'generated/openapi.json',
  output: { path: 'generated/client', importFileExtension: '.ts' },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
});
