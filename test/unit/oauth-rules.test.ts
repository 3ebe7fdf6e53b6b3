// The small rules of the OAuth module, as tables: scopes, redirect URIs, password hashes (the sign-in limits, kept
// in the database: test/api/operations-http.test.ts).
import { describe, expect, it } from 'vitest';
import { hashPassword, passwordProblem, verifyPassword } from '../../src/modules/auth/passwords.ts';
import { redirectUriProblem, registeredRedirectUriProblem } from '../../src/modules/oauth/clients.ts';
import { grantedScope, parseScopeParameter, scopeList, tokenScopeOf } from '../../src/modules/oauth/scopes.ts';

describe('scopes', () => {
  it.each([
    [undefined, 'write'],
    ['', 'write'],
    ['read', 'read'],
    ['write', 'write'],
    ['read write', 'write'],
    ['read+write', 'write'],
    ['read,write', 'write'],
    ['admin', undefined],
    ['read admin', undefined],
  ])('%j asks for %s', (parameter, expected) => {
    expect(tokenScopeOf(parseScopeParameter(parameter))).toBe(expected);
  });

  it('lists a write token as read and write', () => {
    expect(scopeList('write')).toEqual(['read', 'write']);
    expect(scopeList('read')).toEqual(['read']);
  });
});

describe('redirect URIs', () => {
  it.each([
    ['https://app.example/cb', true],
    ['http://192.168.1.5:8080/cb', true],
    ['notesapp://oauth/callback', true],
    ['https://app.example/cb?x=1', true],
    ['https://app.example/cb#fragment', false],
    ['/relative/cb', false],
    ['javascript:alert(1)', false],
    ['data:text/html,hi', false],
    ['file:///etc/passwd', false],
    [`https://app.example/${'a'.repeat(2000)}`, false],
  ])('%s is acceptable: %s', (uri, acceptable) => {
    expect(redirectUriProblem(uri) === undefined).toBe(acceptable);
  });
});

describe('redirect URIs of apps anyone registers (RFC 7591)', () => {
  it.each([
    ['https://app.example/cb', true],
    ['http://127.0.0.1:53682/cb', true],
    ['http://127.0.0.1/cb', true],
    ['http://127.10.0.1:1/cb', true],
    ['http://localhost:8080/callback', true],
    ['http://LOCALHOST:8080/callback', true],
    ['http://[::1]:33418/cb', true],
    ['notesapp://oauth/callback', true],
    ['http://192.168.1.5:8080/cb', false],
    ['http://app.example/cb', false],
    ['http://localhost.evil.example/cb', false],
    ['http://127.0.0.1.evil.example/cb', false],
    ['https://app.example/cb#fragment', false],
    ['javascript:alert(1)', false],
  ])('%s is acceptable: %s', (uri, acceptable) => {
    expect(registeredRedirectUriProblem(uri) === undefined).toBe(acceptable);
  });
});

describe('the scope an authorization gives an app held to a registered scope', () => {
  it.each([
    [undefined, null, 'write'],
    ['read', null, 'read'],
    ['read write', null, 'write'],
    [undefined, 'read', 'read'],
    ['read', 'read', 'read'],
    ['write', 'read', undefined],
    ['read write', 'read', undefined],
    ['read', 'write', 'read'],
    ['admin', null, undefined],
  ] as const)('%j for an app registered for %j: %j', (parameter, registered, expected) => {
    expect(grantedScope(parseScopeParameter(parameter), registered)).toBe(expected);
  });
});

describe('passwords', () => {
  it('hash with scrypt and a salt, and verify', async () => {
    const one = await hashPassword('correct horse battery');
    const two = await hashPassword('correct horse battery');
    expect(one).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(one).not.toBe(two);
    expect(await verifyPassword('correct horse battery', one)).toBe(true);
    expect(await verifyPassword('correct horse batterY', one)).toBe(false);
    expect(await verifyPassword('anything', 'not a hash')).toBe(false);
  });

  it('are 8 to 1024 characters without NUL', () => {
    expect(passwordProblem('short')).toMatch(/at least 8/);
    expect(passwordProblem('x'.repeat(1025))).toMatch(/at most 1024/);
    expect(passwordProblem('long enough\u0000')).toMatch(/NUL/);
    expect(passwordProblem('long enough')).toBeUndefined();
  });
});
