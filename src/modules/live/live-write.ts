// A live document's save: the API's own `updatePage` operation run in this process for the person who wrote, through
// the wrapper every caller of an operation goes through (src/http/invoke.ts: the scope, the authorization, the
// handler, the memory forgotten), so a live save is a version like any other, with its change log, activity,
// search, webhooks and change stream. What the request-less run needs of a request is made here: the caller, an
// entity manager of its own, the logger, and an answer that closes when the write is done (the large-answer gate).
import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Caller } from '../access/caller.ts';
import type { AppServices, OperationDefinition } from '../../http/handler.ts';
import type { OperationId } from '../../../generated/operations.gen.ts';
import type { Logger } from '../../http/logger.ts';
import { invokeOperation } from '../../http/invoke.ts';
import { operations } from '../../http/operations.ts';

/**
 * What a live save writes, and where. `coAuthorIds`: the others whose changes the document holds since the last save
 * (their user ids, in the order they typed): the version names them beside the caller, who typed last (the author
 * among them is left out, and each is named once: versions.writer.ts, coAuthorsOf).
 */
export type LiveSave = { team: string; note: string; pageId: number; content: string; baseVersion: number; coAuthorIds: readonly number[] };

/** The page as the write left it: its version and content (merged with whatever was written since the base). */
export type Saved = { version: number; content: string };

export async function saveLive(services: AppServices, orm: MikroORM, logger: Logger, caller: Caller, save: LiveSave): Promise<Saved> {
  const apiPath = `/api/v1/${encodeURIComponent(save.team)}/${encodeURIComponent(save.note)}/${save.pageId}`;
  // the version's co-authors ride on the caller, where the operation's author is taken from (access/caller.ts)
  const writer: Caller = save.coAuthorIds.length ? { ...caller, coAuthorIds: save.coAuthorIds } : caller;
  const req = { caller: writer, em: orm.em.fork(), log: logger, method: 'PUT', url: apiPath, headers: {}, get: () => undefined } as unknown as Request;
  const res = Object.assign(new EventEmitter(), { locals: {}, closed: false, destroyed: false, req }) as unknown as Response;
  try {
    const { result } = await invokeOperation(operations.updatePage as unknown as OperationDefinition<OperationId>, services, req, res, {
      path: { team: save.team, note: save.note, page: save.pageId },
      query: {},
      body: { page: { content: save.content, base_version: save.baseVersion }, on_conflict: 'merge' },
      headers: {},
    });
    const page = ((result as { body?: unknown }).body ?? result) as { content: string; version: number };
    return { version: page.version, content: page.content };
  } finally {
    (res as unknown as EventEmitter).emit('close');
  }
}
