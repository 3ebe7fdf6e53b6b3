import type { Note as NoteBody } from '../../../generated/client/types.gen.ts';
import type { Urls } from '../../http/urls.ts';
import { can } from '../access/policy.ts';
import { presentTeam, type TeamView } from '../teams/team.presenter.ts';
import { renderDescription } from './description.ts';
import type { Note } from './note.entity.ts';

/** A note with everything its presentation embeds, loaded by notes.loader.ts. */
export type NoteView = {
  note: Note;
  team: TeamView;
  /** The note it was forked from, when it is a fork and the original still exists. */
  original: { note: Note; team: TeamView } | undefined;
  /** The original has changed since this fork last pulled, and the caller may pull. */
  pullable: boolean;
};



/**
 * Which answer the note is part of; the contract shapes the note differently for each:
 * - `read`: shows and lists: `slug` when it has one; `pulled_at` and `forked` on forks.
 * - `created`: answer of create: no `slug`; `user_id`.
 * - `updated`, `forked`: answers of update and of fork: no `slug`; `user_id`, `pulled_at`, `forked`.
 * - `embedded`: the original embedded in a fork's `forked`: as `read`, without its own `pulled_at`/`forked`.
 */
export type NoteVariant = 'read' | 'created' | 'updated' | 'forked' | 'embedded';

export function noteName(note: Pick<Note, 'id' | 'slug'>): string {
  return note.slug ?? String(note.id);
}

export function presentNote(view: NoteView, urls: Urls, variant: NoteVariant): NoteBody {
  const { note, team } = view;
  const subject = { role: team.role, callerId: team.callerId };
  const name = noteName(note);
  const isFork = note.forkedFrom !== null && note.forkedFrom !== undefined;
  const canEdit = can('note.edit', subject);
  const body: NoteBody = {
    id: note.id,
    is_private: note.isPrivate,
    ...(variant === 'read' || variant === 'embedded' ? (note.slug ? { slug: note.slug } : {}) : {}),
    title: note.title,
    created_at: note.createdAt.toISOString(),
    updated_at: note.updatedAt.toISOString(),
    format: 'html',
    share: 'none',
    is_time_track: note.isTimeTrack,
    name,
    team: presentTeam(team, urls),
    html_url: urls.note(team.team.name, name),
    avatar_url: urls.noteAvatar(note.id),
    can_pull: view.pullable,
    can_request: isFork && canEdit && view.original !== undefined,
    can_manage: can('note.manage', subject),
    description_html: renderDescription(note.description),
    model: 'note',
  };
  if (variant !== 'read' && variant !== 'embedded') body.user_id = note.user.id;
  const showFork = variant === 'updated' || variant === 'forked' || (variant === 'read' && isFork);
  if (showFork) {
    body.pulled_at = note.pulledAt ? note.pulledAt.toISOString() : null;
    body.forked = view.original
      ? presentNote({ note: view.original.note, team: view.original.team, original: undefined, pullable: false }, urls, 'embedded')
      : null;
  }
  return body;
}
