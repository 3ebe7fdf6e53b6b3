// Presenting a request: pure, from what requests.loader.ts loaded. Its index, label and html_url are the original's
// (`to_note`): a request is numbered and listed there.
import type { Note as NoteBody, Request as RequestBody, RequestPage as RequestPageBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import { can, type Subject } from '../access/policy.ts';
import { presentUser, type UserFields } from '../users/user.presenter.ts';
import type { MergeRequest } from './merge-request.entity.ts';
import type { Mergeability } from './merge-state.ts';
import type { RequestPageRow } from './requests.repository.ts';
import { presentVia } from '../oauth/oauth.presenter.ts';

export type RequestView = {
  request: MergeRequest;
  toNote: NoteBody;
  /** null: a request of an imported note, without its fork. */
  fromNote: NoteBody | null;
  user: UserFields;
  pages: readonly RequestPageRow[];
  mergeability: Mergeability;
  /** The caller and their role in the original's team. */
  subject: Subject;
};

export function requestLabel(index: number): string {
  return `request #${index}`;
}

function presentPage(row: RequestPageRow, mergeability: Mergeability): RequestPageBody {
  const state = mergeability.pages.get(row.id);
  return {
    id: row.id,
    created_at: new Date(row.created_at).toISOString(),
    note_id: row.note_id,
    type: row.type,
    path: row.path,
    diff: row.diff,
    merged: row.merged,
    classification: state?.classification ?? null,
    conflicts: state?.conflicts ?? [],
  };
}

export function presentRequest(view: RequestView, urls: Urls): RequestBody {
  const { request, toNote, mergeability } = view;
  return {
    id: request.id,
    is_closed: request.status === 'closed',
    is_merged: request.status === 'merged',
    index: request.index,
    created_at: request.createdAt.toISOString(),
    updated_at: request.updatedAt.toISOString(),
    is_wip: request.isWip,
    html_url: urls.request(toNote.team.name, toNote.name, request.index),
    label: requestLabel(request.index),
    to_note: toNote,
    from_note: view.fromNote,
    user: presentUser(view.user, urls),
    pages: view.pages.map((row) => presentPage(row, mergeability)),
    attachments: [],
    active: request.status === 'opened',
    can_open: request.status !== 'merged' && can('request.manage', view.subject, { authorId: request.user.id }),
    status: request.status,
    mergeable: mergeability.mergeable,
    mergeable_state: mergeability.state,
    mergeable_reason: mergeability.reason,
    via: presentVia(request),
    model: 'request',
  };
}
