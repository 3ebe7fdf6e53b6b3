// The generated client sends the token once, in the Authorization header, although the document lists the
// `access_token` query parameter as an alternative (which the server still accepts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client/client/index.ts';
import { getMe, listNotes } from '../../generated/client/index.ts';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { makeUser, type Actor } from '../support/factories.ts';

let app: TestApp;
let alice: Actor;

beforeAll(async () => {
  app = await startTestApp();
  alice = await makeUser(app, 'alice');
});
afterAll(async () => app?.close());

describe('the generated client with an auth callback', () => {
  it('sends the token in the Authorization header only, never in the URL', async () => {
    const sent: Request[] = [];
    const client = createClient({
      baseUrl: app.baseUrl,
      auth: () => alice.token,
      fetch: (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        sent.push(request.clone());
        return fetch(request);
      },
    });
    const me = await getMe({ client, throwOnError: true });
    expect(me.data.username).toBe('alice');
    await listNotes({ client, query: { per_page: 5 }, throwOnError: true });
    expect(sent).toHaveLength(2);
    for (const request of sent) {
      expect(request.headers.get('authorization')).toBe(`Bearer ${alice.token}`);
      expect(new URL(request.url).searchParams.has('access_token')).toBe(false);
      expect(request.url).not.toContain(alice.token);
    }
  });

  it('while the document still offers the access_token query parameter, and the server takes it', async () => {
    const document = loadOpenApiDocument() as unknown as { security: Record<string, string[]>[]; components: { securitySchemes: Record<string, { in?: string; name?: string }> } };
    expect(document.security).toEqual([{ bearerAuth: [] }, { accessToken: [] }, { oauth2: [] }]);
    expect(document.components.securitySchemes.accessToken).toMatchObject({ in: 'query', name: 'access_token' });
    const answer = await fetch(`${app.baseUrl}/api/v1/me?access_token=${alice.token}`);
    expect(answer.status).toBe(200);
  });
});
