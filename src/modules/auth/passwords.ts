// Users' passwords, for the sign-in page and the password grant: scrypt (node:crypto, no native dependency) with a
// random 16-byte salt and the cost parameters stored beside the hash, so they can be raised later without
// invalidating what is stored: `scrypt$N$r$p$salt$hash` (salt and hash base64url).
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { sql } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { foldCase } from '../text/fold.ts';
import { User } from '../users/user.entity.ts';

const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFC'), salt, KEY_BYTES, { ...options, maxmem: 256 * options.N! * options.r! }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** What is wrong with a new password, or undefined. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `a password has at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `a password has at most ${PASSWORD_MAX_LENGTH} characters`;
  if (password.includes('\u0000')) return 'a password cannot contain NUL';
  return undefined;
}

export async function setPassword(em: EntityManager, user: User, password: string): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw new Error(problem);
  await em.nativeUpdate(User, { id: user.id }, { passwordHash: await hashPassword(password) });
}

// A hash of nothing anyone can type, checked when the user does not exist, so an unknown name costs the same time
// as a wrong password and does not reveal which names exist.
let decoy: Promise<string> | undefined;

/**
 * The user with this username and password, or undefined. The username matches by its foldCase key (text/fold.ts,
 * compared with the stored `users.username_key`), as everywhere a username is looked up: `ＡＬＩＣＥ` signs alice in.
 */
export async function checkCredentials(em: EntityManager, username: string, password: string): Promise<User | undefined> {
  if (username.length > 39 || password.length > PASSWORD_MAX_LENGTH || username.includes('\u0000')) return undefined;
  const user = await em.findOne(User, { [sql.ref('username_key')]: foldCase(username) }, { populate: ['passwordHash'] });
  if (!user?.passwordHash) {
    decoy ??= hashPassword(randomBytes(16).toString('hex'));
    await verifyPassword(password, await decoy);
    return undefined;
  }
  return (await verifyPassword(password, user.passwordHash)) ? user : undefined;
}
