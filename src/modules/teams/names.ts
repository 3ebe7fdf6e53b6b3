// Team names (and so usernames, since every user has a default team named after them) share one namespace with the
// literal first path segments under /api/v1 and the site's own top-level paths. Names are ASCII: migration 0013 keeps
// them so, and computes their key (foldCase of an ASCII name: A-Z to a-z) in the database.
import { foldCase } from '../text/fold.ts';

export const teamNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$/;

/** The literal first segments under /api/v1: a team with one of these names could never be addressed. */
export const apiSegments: ReadonlySet<string> = new Set([
  'notes', 'teams', 'users', 'usernames', 'me', 'my_issues', 'logs', 'checks', 'search', 'notifications', 'attachments',
]);

export const reservedNames: ReadonlySet<string> = new Set([
  ...apiSegments,
  // the site's own top-level paths
  'verify_account', 'oauth', 'docs', 'api', 'admin', 'avatars', 'assets', 'health', 'healthz', 'readyz', 'metrics',
  'openapi', 'static', 'public', 'login', 'logout', 'signin', 'signout', 'signup', 'register', 'settings', 'account',
  'new', 'edit', 'help', 'about', 'support', 'status', 'system', 'root', 'www', 'mail', 'explore', 'dashboard',
  'pages', 'issues', 'requests', 'comments', 'histories', 'forks', 'pull', 'contributors', 'tags', 'null', 'undefined',
]);

/** Why a name cannot be used: the error code and what to tell the client. */
export type NameProblem = { code: 'invalid_name' | 'reserved_name'; detail: string };

const INVALID = 'must be 1-39 characters of letters, digits, "_" and "-", starting with a letter or digit';

/** Why `name` cannot name a team, or undefined when it can (uniqueness is checked by the caller). */
export function teamNameProblem(name: string): NameProblem | undefined {
  if (!teamNamePattern.test(name)) return { code: 'invalid_name', detail: INVALID };
  if (reservedNames.has(foldCase(name))) return { code: 'reserved_name', detail: `"${name}" is reserved` };
  return undefined;
}

/**
 * Why `name` cannot name a user (and so their default team), or undefined. Users are made by an administrator, not
 * through the API, so only the names that would make the default team unreachable are refused: `admin`, the
 * default first user, is a fine username.
 */
export function usernameProblem(name: string): NameProblem | undefined {
  if (!teamNamePattern.test(name)) return { code: 'invalid_name', detail: INVALID };
  if (apiSegments.has(foldCase(name))) return { code: 'reserved_name', detail: `"${name}" is reserved` };
  return undefined;
}
