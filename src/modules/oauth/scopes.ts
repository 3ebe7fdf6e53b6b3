// The two scopes: `read`, and `write` (which includes reading). A token row keeps the wider one; on the wire a
// write token's scope is "read write". No scope asked for means both: the old clients never ask and do write.
import type { TokenScope } from '../auth/token.entity.ts';

export const SCOPES = ['read', 'write'] as const;

/** The scope a request asks for, or undefined when it names an unknown one. */
export function tokenScopeOf(requested: readonly string[] | undefined): TokenScope | undefined {
  if (!requested || requested.length === 0) return 'write';
  if (!requested.every((scope) => (SCOPES as readonly string[]).includes(scope))) return undefined;
  return requested.includes('write') ? 'write' : 'read';
}

/**
 * The scope an authorization gives an app held to `registered` (an RFC 7591 registration's `scope`; null: both): what
 * it asks for, all it may have when it asks for none, or undefined for an unknown scope or more than it may have.
 */
export function grantedScope(requested: readonly string[] | undefined, registered: TokenScope | null): TokenScope | undefined {
  const scope = tokenScopeOf(requested);
  if (!scope || registered !== 'read' || scope === 'read') return scope;
  return requested && requested.length > 0 ? undefined : 'read';
}

export function scopeList(scope: TokenScope): ('read' | 'write')[] {
  return scope === 'write' ? ['read', 'write'] : ['read'];
}

export function parseScopeParameter(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return value.trim().split(/[ +,]+/);
}
