// Loading requests and what presenting them needs, in a fixed number of statements however many: their users come
// with them (joined), both notes are presented once each (notes.loader.ts: `to_note` as read, `from_note` as a fork
// with `user_id`, `pulled_at`, `forked`), and the pages of all of them, with their sides, in one statement.
import type { Reader } from '../../cache/memory.ts';
import type { Loaded } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Note as NoteBody } from '../../../generated/client/types.gen.ts';
import { notFound } from '../errors.ts';

import { shared } from '../../http/json.ts';
import { presentNote } from '../notes/note.presenter.ts';
import { loadNoteViews } from '../notes/notes.loader.ts';
import { MergeRequest } from './merge-request.entity.ts';
import { LIST_CONTENT_BYTES, loadRequestPages, mergeabilityOf, type Mergeability } from './merge-state.ts';
import type { RequestPageRow } from './requests.repository.ts';
import type { RequestView } from './request.presenter.ts';

export type LoadedRequest = Loaded<MergeRequest, 'user' | 'fromNote' | 'fromNote.team' | 'toNote' | 'toNote.team'>;
export const requestRelations = ['user', 'fromNote.team', 'toNote.team'] as const;

const LARGEST_INDEX = 2_147_483_647;

/** The request to the note with this index (its user and notes loaded); 404 when there is none. */
export async function requireRequestInNote(em: EntityManager, noteId: number, index: number): Promise<LoadedRequest> {
  const request = Number.isSafeInteger(index) && index >= 1 && index <= LARGEST_INDEX
    ? await em.findOne(MergeRequest, { toNote: noteId, index }, { populate: requestRelations })
    : null;
  if (!request) throw notFound('request');
  return request;
}

/** `contentBytes`: how much page content computing the merges may load (a list is bounded; one request is not). */
export async function loadRequestViews(reader: Reader, requests: readonly LoadedRequest[], contentBytes = LIST_CONTENT_BYTES): Promise<RequestView[]> {
  if (requests.length === 0) return [];
  const notes = new Map<number, LoadedRequest['toNote']>();
  for (const request of requests) {
    notes.set(request.toNote.id, request.toNote);
    if (request.fromNote) notes.set(request.fromNote.id, request.fromNote);
  }
  const views = await loadNoteViews(reader, [...notes.values()]);
  const read = new Map<number, NoteBody>();
  const forked = new Map<number, NoteBody>();
  const roles = new Map<number, (typeof views)[number]['team']['role']>();
  for (const view of views) {
    read.set(view.note.id, shared(presentNote(view, reader.urls, 'read')));
    forked.set(view.note.id, shared(presentNote(view, reader.urls, 'forked')));
    roles.set(view.note.id, view.team.role);
  }
  const rows = await loadRequestPages(reader.em, requests.map((request) => request.id), { contentBytes });
  const pagesOf = new Map<number, RequestPageRow[]>();
  for (const row of rows) {
    const list = pagesOf.get(row.request_id);
    if (list) list.push(row);
    else pagesOf.set(row.request_id, [row]);
  }
  return requests.map((request) => {
    const pages = pagesOf.get(request.id) ?? [];
    return {
      request,
      toNote: read.get(request.toNote.id)!,
      fromNote: request.fromNote ? forked.get(request.fromNote.id)! : null,
      user: request.user,
      pages,
      mergeability: request.fromNote ? mergeabilityOf(request.status, pages) : withoutFork(request.status, pages),
      subject: { role: roles.get(request.toNote.id), callerId: reader.callerId },
    };
  });
}

/** A request of an imported note has no fork to merge from: never mergeable, its pages not compared. */
function withoutFork(status: string, pages: readonly RequestPageRow[]): Mergeability {
  const closed = status === 'merged' || status === 'closed';
  return {
    mergeable: false,
    state: closed ? (status as 'merged' | 'closed') : null,
    reason: closed ? null : 'imported without its fork: it cannot be merged',
    pages: new Map(pages.map((row) => [row.id, { classification: null, conflicts: [] }])),
  };
}

export async function loadRequestView(reader: Reader, request: LoadedRequest): Promise<RequestView> {
  const [view] = await loadRequestViews(reader, [request], Infinity);
  return view!;
}
