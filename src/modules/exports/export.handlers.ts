// exportNote: a note's zip (docs/note-export.md), streamed as it is made. Readers of the note may export it.
//
// How many at once: an export holds little (a batch of at most BATCH_TEXT_BYTES of text, the entry being compressed,
// and the zip's central directory, about 100 bytes per entry; docs/note-export.md, "Limits and cost", has the
// measurements), but it may run for minutes for a slow reader. EXPORTS_AT_ONCE exports are made at a time in each
// process; the next ones wait their turn, first come first served, before their answer starts (a waiting request
// holds its socket and nothing else), and one whose client gives up leaves the line. So any number of exports cost
// the server's memory (docs/speed.md, "Memory") a few MiB, and never take the answer gate (answer-gate.ts) from the
// large answers of lists.
import { PassThrough } from 'node:stream';
import type { Response } from 'express';
import { defineOperation, type StreamAnswer } from '../../http/handler.ts';
import { contentDisposition } from '../attachments/content.ts';
import { storageFor } from '../attachments/storage.ts';
import { noteName } from '../notes/note.presenter.ts';
import { exportNote } from './export.ts';

export const EXPORTS_AT_ONCE = 2;

/** A line of exports: at most `size` run; the others wait in order of arrival. */
class ExportSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  /** Resolves with the slot's release once one is free; false when the client left while it waited. */
  async take(client: Response | undefined): Promise<(() => void) | false> {
    if (this.running >= this.size || this.waiting.length > 0) {
      const turn = await new Promise<boolean>((resolve) => {
        const admit = () => {
          client?.off('close', left);
          resolve(true);
        };
        const left = () => {
          const at = this.waiting.indexOf(admit);
          if (at !== -1) this.waiting.splice(at, 1);
          resolve(false);
        };
        this.waiting.push(admit);
        client?.once('close', left);
      });
      if (!turn) return false;
    } else {
      this.running += 1;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // the slot passes to the next in line, or is freed
      if (next) next();
      else this.running -= 1;
    };
  }
}

const slots = new ExportSlots(EXPORTS_AT_ONCE);

export const exportOperations = {
  exportNote: defineOperation('exportNote', { scope: 'note', action: 'note.read' }, async ({ query }, scope, context): Promise<StreamAnswer> => {
    const format = query.format ?? 'full';
    context.refuseWhenTight('an export');
    const client = context.request.res;
    const release = await slots.take(client);
    if (release === false) {
      // the client is gone: nothing is made, and nothing can be answered
      return { kind: 'stream', status: 200, headers: {}, body: new PassThrough().end() };
    }
    const body = exportNote({
      em: context.em,
      noteId: scope.note.id,
      storage: storageFor(context.config),
      format,
      onError: (error) => context.log.error({ err: error, noteId: scope.note.id }, 'export failed while it was sent'),
    });
    // the slot is the export's until its bytes are all sent, or its client goes away (the body is closed either way)
    body.once('close', release);
    const fileName = `${scope.team.name}-${noteName(scope.note)}${format === 'markdown' ? '-markdown' : ''}.zip`;
    return {
      kind: 'stream',
      status: 200,
      headers: { 'Content-Type': 'application/zip', 'Content-Disposition': contentDisposition(fileName, false), 'Cache-Control': 'private, no-store' },
      body,
    };
  }),
};
