// What the benchmark's cases share to set up: a positive number from the environment, and tokens for seeded users
// inserted as src/modules/auth/tokens.ts stores them (the API makes a token only for the caller itself).
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** A positive number from `name` in the environment, else `fallback`; anything else stops the bench. */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** A token of `scope` for each user (one statement), stored as the SHA-256 of its secret in hex; the secrets, in order. */
export async function insertTokens(client: pg.Client, users: readonly number[], scope: 'read' | 'write', label: string): Promise<string[]> {
  const secrets = users.map(() => `nt_${randomBytes(32).toString('base64url')}`);
  await client.query(
    `insert into tokens (user_id, token_hash, prefix, scope, label, created_at)
     select u, encode(sha256(convert_to(s, 'UTF8')), 'hex'), left(s, 10), $3, $4, now()
       from unnest($1::int[], $2::text[]) as t(u, s)`,
    [users, secrets, scope, label],
  );
  return secrets;
}
