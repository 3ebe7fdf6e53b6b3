// `npm run admin -- export <team>/<note> [--format full|markdown] > note.zip`: the note's export (docs/note-export.md),
// the very zip GET /api/v1/{team}/{note}/export answers, written to standard output as it is made. The admin needs
// no token and sees private notes. On a terminal, stderr shows how many files are written so far.
import { finished } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { noteReference } from '../modules/access/scope.ts';
import { storageFor } from '../modules/attachments/storage.ts';
import { exportNote, type ExportFormat } from '../modules/exports/export.ts';
import { Note } from '../modules/notes/note.entity.ts';
import { findTeam } from '../modules/teams/teams.service.ts';

export type ExportOutcome = { ok: true; line: string } | { ok: false; usage: boolean; message: string };

export async function exportToStandardOutput(em: EntityManager, config: Config, reference: string, format: string | undefined): Promise<ExportOutcome> {
  const match = /^([^/]+)\/([^/]+)$/.exec(reference);
  if (!match) return { ok: false, usage: true, message: 'export takes <team>/<note> (the note by its slug or id)' };
  if (format !== undefined && format !== 'full' && format !== 'markdown') return { ok: false, usage: true, message: '--format is full or markdown' };
  if (process.stdout.isTTY) return { ok: false, usage: true, message: 'export writes a zip: send standard output to a file (> note.zip)' };
  const team = await findTeam(em, match[1]!);
  const ref = noteReference(match[2]!);
  const note = team ? await em.findOne(Note, { team: team.id, ...(ref.id !== null ? { id: ref.id } : { slug: ref.slug }) }) : null;
  if (!note) return { ok: false, usage: false, message: `no note ${reference}` };
  let failure: Error | undefined;
  const onTerminal = process.stderr.isTTY === true;
  const zip = exportNote({
    em,
    noteId: note.id,
    storage: storageFor(config),
    format: (format ?? 'full') as ExportFormat,
    onError: (error) => {
      failure = error;
    },
    progress: onTerminal ? ({ files }) => process.stderr.write(`\rexport: ${files} files written`) : undefined,
  });
  zip.pipe(process.stdout);
  try {
    await finished(zip);
  } catch (error) {
    failure ??= error as Error;
  }
  if (onTerminal) process.stderr.write('\n');
  if (failure) return { ok: false, usage: false, message: `the export failed: ${failure.message}` };
  return { ok: true, line: `exported ${reference}` };
}
