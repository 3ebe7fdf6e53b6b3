// Producing notifications. Never for one's own actions.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Note } from '../notes/note.entity.ts';
import { Membership } from '../teams/team.entity.ts';
import type { User } from '../users/user.entity.ts';
import { Notification } from './notification.entity.ts';

/** `new_note`: every other member and manager of the note's team hears of a note created in it. */
export async function notifyNewNote(em: EntityManager, note: Note, author: User): Promise<void> {
  const memberships = await em.find(Membership, { team: note.team.id, user: { $ne: author.id } });
  for (const membership of memberships) {
    em.create(Notification, {
      user: membership.user.id,
      fromUser: author.id,
      event: 'new_note',
      type: 'note',
      note: note.id,
      page: null,
      issue: null,
      request: null,
      comment: null,
      title: `${author.name || author.username} created the note "${note.title}"`,
    });
  }
}
