// `npm run admin -- import <team> [--as USERNAME] [--name NAME] < note.zip` (admin.ts): imports a note's export zip
// read from standard input, as importNote does (src/modules/imports), without a job: the command waits for it and
// shows its progress on stderr when that is a terminal. The zip is written to a temporary file first, within
// LIMIT_IMPORT_BYTES. The importing user (who gets the rows of authors not found here) is `--as`, else the team's
// first manager. Prints `imported <team>/<note> (note <id>)`.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { storageFor } from '../modules/attachments/storage.ts';
import { ImportFailure } from '../modules/imports/archive.ts';
import { Note } from '../modules/notes/note.entity.ts';
import { importNote, isNoteName } from '../modules/imports/import.service.ts';
import { Membership } from '../modules/teams/team.entity.ts';
import { findTeam } from '../modules/teams/teams.service.ts';
import { User } from '../modules/users/user.entity.ts';
import { findUserByUsername } from '../modules/users/users.service.ts';

/** What the command reports back to admin.ts: a line for stdout, or a problem for stderr with its exit status. */
export type ImportOutcome = { ok: true; line: string } | { ok: false; message: string; usage: boolean };

export async function importFromStandardInput(em: EntityManager, config: Config, teamName: string, options: { as?: string; name?: string }): Promise<ImportOutcome> {
  const team = await findTeam(em, teamName);
  if (!team) return { ok: false, message: `no team named ${teamName}`, usage: false };
  if (options.name !== undefined && options.name !== '' && !isNoteName(options.name)) {
    return { ok: false, message: '--name is a note name: 1-64 of a-z 0-9 _ -, not all digits', usage: true };
  }
  let user: User | null;
  if (options.as !== undefined) {
    user = await findUserByUsername(em, options.as);
    if (!user) return { ok: false, message: `no user named ${options.as}`, usage: false };
  } else {
    const manager = await em.findOne(Membership, { team: team.id, role: 'manager' }, { orderBy: { id: 'asc' }, populate: ['user'] });
    user = manager?.user ?? null;
    if (!user) return { ok: false, message: `the team ${team.name} has no manager: name the importing user with --as`, usage: false };
  }
  if (process.stdin.isTTY) return { ok: false, message: 'import reads the zip from standard input: npm run admin -- import <team> < note.zip', usage: true };
  const storage = storageFor(config);
  await mkdir(storage.tempDir, { recursive: true });
  const file = path.join(storage.tempDir, `import-${randomUUID()}`);
  const limit = config.limits.importBytes;
  const progress = process.stderr.isTTY ? (percent: number) => process.stderr.write(`\rimporting: ${String(Math.floor(percent)).padStart(3)}%`) : () => undefined;
  try {
    let size = 0;
    await pipeline(process.stdin, new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(size > limit ? new ImportFailure('too_large', `the zip is larger than the limit of ${limit} bytes (LIMIT_IMPORT_BYTES)`) : null, chunk);
      },
    }), createWriteStream(file, { flags: 'wx' }));
    const noteId = await importNote(em, storage, {
      actor: { id: user.id, username: user.username, name: user.name },
      team,
      file,
      name: options.name === undefined ? undefined : options.name === '' ? null : options.name,
      limits: config.limits,
      onProgress: progress,
    });
    progress(100);
    if (process.stderr.isTTY) process.stderr.write('\n');
    const note = await em.fork().findOne(Note, noteId);
    return { ok: true, line: `imported ${team.name}/${note?.slug ?? noteId} (note ${noteId})` };
  } catch (error) {
    if (process.stderr.isTTY) process.stderr.write('\n');
    if (error instanceof ImportFailure) return { ok: false, message: `${error.code}: ${error.message}`, usage: false };
    throw error;
  } finally {
    await rm(file, { force: true });
  }
}
