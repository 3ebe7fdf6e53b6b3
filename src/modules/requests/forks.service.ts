// Forking a note: the note row, then its whole page tree copied set-based (a fixed number of statements however many
// pages: INSERT ... SELECT, then one UPDATE that maps the parents through `origin_page_id`). Each fork page remembers
// its upstream page (`origin_page_id`) and the upstream version it was copied at (`base_version_id`). The copy writes
// no versions (and copies the attachments' rows, sharing their bytes): a fork page's history starts with its first change there (whose diff is then base -> change), and
// the versions a request proposes are exactly those changes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentTime } from '../../db/timestamps.ts';
import { copyAttachmentsToFork } from '../attachments/attachments.service.ts';
import { recordEvent } from '../events/events.ts';
import type { Actor } from '../events/domain-events.ts';
import { Note } from '../notes/note.entity.ts';
import type { Team } from '../teams/team.entity.ts';
import { copyPagesIntoFork, forkCopyOf, linkForkParents } from './requests.repository.ts';

export type ForkFields = { title?: string | null | undefined };

export async function createFork(em: EntityManager, actor: Actor, original: Note, originalTeam: Team, target: Team, fields: ForkFields): Promise<Note> {
  return em.transactional(async (tx) => {
    const now = currentTime();
    const fork = tx.create(Note, {
      team: target,
      user: actor.id,
      slug: null,
      title: fields.title || `Copy of ${original.title} (${originalTeam.name})`.slice(0, 255),
      description: original.description,
      isPrivate: original.isPrivate,
      isTimeTrack: original.isTimeTrack,
      forkedFrom: original.id,
      pulledAt: now,
      coverPageId: null,
    });
    await tx.flush();
    await copyPageTree(tx, original.id, original.coverPageId ?? null, fork, now);
    // the attachments come along as rows naming the same stored bytes (`forked_id`): nothing is copied but the rows
    await copyAttachmentsToFork(tx, original.id, fork.id);
    await recordEvent(tx, { type: 'fork.created', actor, note: fork, original });
    return fork;
  });
}

/**
 * Copies every page of `fromNoteId` into the fork: titles, content, order, parents and the cover. The base of a page
 * is the upstream page's latest version, or (an upstream page that never changed in a fork of a fork) the base that
 * page itself was copied at: the same content.
 */
async function copyPageTree(tx: EntityManager, fromNoteId: number, coverPageId: number | null, fork: Note, now: Date): Promise<void> {
  await copyPagesIntoFork(tx, fork.id, fromNoteId, now);
  await linkForkParents(tx, fork.id);
  if (coverPageId !== null) {
    fork.coverPageId = await forkCopyOf(tx, fork.id, coverPageId);
  }
}

